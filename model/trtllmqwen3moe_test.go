package model

import (
	"math"
	"testing"
)

// TestQwen3235BPromptStepExperts holds the figures of docs/backend-validation.md, "TRT-LLM
// Qwen3-235B TEP 8 on H100: the prompt steps": on the 1.2.0rc5 H100 tables a 1,024-token
// prompt added to 127 decodes costs the priced TEP 8 step about 10 ms less than the TEP 4 one,
// and the experts are that difference, since a rank at EP 8 holds half the experts of one at
// EP 4. The runs measured the prompt at the same cost at both layouts.
func TestQwen3235BPromptStepExperts(t *testing.T) {
	const ctx = 1088 // a decode's context at 1,024-token prompts, mid-output
	type step struct{ total, experts float64 }
	added := map[int]step{}
	for _, tp := range []int{4, 8} {
		d := SeedDeployment()
		d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion = "Qwen/Qwen3-235B-A22B-FP8", "h100_sxm", BackendTRTLLM, trtllmVersion
		d.Quantization, d.KVCacheDtype, d.TP, d.MoETP, d.MoEEP = "fp8", KVFP8, tp, 1, tp
		d.MaxNumSeqs, d.MaxNumBatchedTokens, d.NoPrefixCaching = 128, 128+1024+1500, true
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		dec := w.Breakdown(&Batch{Decodes: 128, DecodeContextTokens: 128 * ctx})
		mixed := w.Breakdown(&Batch{Decodes: 127, DecodeContextTokens: 127 * ctx, Prefill: []Chunk{{NewTokens: 1024}}})
		added[tp] = step{float64(mixed.TotalUS - dec.TotalUS), mixed.Operators.ExpertsUS - dec.Operators.ExpertsUS}
		t.Logf("TEP %d: 128 decodes %d µs (experts %.0f); 127 decodes + 1,024-token prompt %d µs (experts %.0f)",
			tp, dec.TotalUS, dec.Operators.ExpertsUS, mixed.TotalUS, mixed.Operators.ExpertsUS)
	}
	four, eight := added[4], added[8]
	if d := four.total - eight.total; d < 8000 || d > 12000 {
		t.Errorf("the prompt adds %.0f µs at TEP 4 and %.0f at TEP 8: %.0f apart, the page says about 10 ms", four.total, eight.total, d)
	}
	if d, de := four.total-eight.total, four.experts-eight.experts; math.Abs(d-de) > 0.1*d {
		t.Errorf("the prompt's price differs by %.0f µs between TEP 4 and 8, its experts by %.0f: the page says the experts are the difference", d, de)
	}
}
