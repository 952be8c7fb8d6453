package silicon

// The MAPE bounds of the SGLang and TRT-LLM sample's rows replayed on attention ranks, as
// measured when they were modelled (TestValidateAIConfiguratorBackendSample).
const (
	DEPTTFTBound = 57.1
	DEPTPOTBound = 49.5
)

// splitDEP splits a report's rows into those not replayed on attention ranks and those that
// are, each summarised on its own.
func splitDEP(rep *Report) (before, dep *Report) {
	before, dep = &Report{}, &Report{}
	for _, r := range rep.Rows {
		if r.Skipped == "" && (r.ValidatedAs == "DEP" || r.ValidatedAs == "DP") {
			dep.Rows = append(dep.Rows, r)
		} else {
			before.Rows = append(before.Rows, r)
		}
	}
	before.summarise()
	dep.summarise()
	return before, dep
}
