package silicon

// The MAPE bounds of the SGLang and TRT-LLM sample's rows replayed on attention ranks, as
// measured when they were modelled (TestValidateAIConfiguratorBackendSample).
// 57.1 / 49.5 % before TensorRT-LLM's attention-DP balancing (engine/sched_trtllm_adp.go);
// TPOT 21.7 → 21.5 % with the V read of TensorRT-LLM's K-only decode rows (model/konlypool.go).
// 17.4 / 21.5 → 18.9 / 19.5 % with the NVFP4 checkpoint's o_proj in NVFP4 (model.LLMSpec.OProjQuant):
// its GEMM rows are cheaper at a rank's prefill sizes, and the ranks' TTFT was already under
// (bias −15.0 → −18.6 %; docs/attention-dp.md).
// 18.9 / 19.5 → 16.5 / 27.4 % with the CUTLASS experts dsr1_fp4_b200_trt.sh (6eecc0e66) runs
// under attention DP: its 6 labelled rows had been priced with TRTLLM-Gen's (TPOT bias −4.1 →
// +39.6 %), so all 24 DeepSeek rows on ranks are CUTLASS's, and over (docs/attention-dp.md).
// 16.5 / 27.4 → 16.6 / 28.0 % with TensorRT-LLM's MLA latent norms priced (model.mlaLatentNormsUnmeasured).
const (
	DEPTTFTBound = 16.6
	DEPTPOTBound = 28.0
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
