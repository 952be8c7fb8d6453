package silicon

// The MAPE bounds of the SGLang and TRT-LLM sample's rows replayed on attention ranks, as
// measured when they were modelled (TestValidateAIConfiguratorBackendSample).
// 57.1 / 49.5 % before TensorRT-LLM's attention-DP balancing (engine/sched_trtllm_adp.go);
// TPOT 21.7 → 21.5 % with the V read of TensorRT-LLM's K-only decode rows (model/konlypool.go).
const (
	DEPTTFTBound = 17.5
	DEPTPOTBound = 21.6
)

// depRows summarises the report's validated rows replayed on attention ranks.
func depRows(rep *Report) *Report {
	dep := &Report{}
	for _, r := range rep.Rows {
		if r.Skipped == "" && (r.ValidatedAs == "DEP" || r.ValidatedAs == "DP") {
			dep.Rows = append(dep.Rows, r)
		}
	}
	dep.summarise()
	return dep
}
