package model

import (
	"math"
	"testing"
)

// qwen35Group is the deployment of one validated Qwen3.5 row group at one of its layouts, as
// silicon/qwen35runs.go replays it (the table's release, the KV cache of the run).
type qwen35Group struct {
	name, sku, version, quant, kv string
	tp, moeTP, moeEP              int
}

func (g qwen35Group) worker(t *testing.T) *Worker {
	t.Helper()
	d := SeedDeployment()
	d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion = "Qwen/Qwen3.5-397B-A17B", g.sku, BackendSGLang, g.version
	d.Quantization, d.KVCacheDtype = g.quant, g.kv
	d.TP, d.MoETP, d.MoEEP = g.tp, g.moeTP, g.moeEP
	d.MaxNumSeqs, d.MaxNumBatchedTokens, d.GPUMemoryUtilization, d.MemoryBudget = 128, 32768, 0.82, MemoryBudgetSGLang
	d.NoPrefixCaching = true
	w, err := NewWorker(d)
	if err != nil {
		t.Fatalf("%s: %v", g.name, err)
	}
	return w
}

// TestQwen35DecodeBreakdown lays out a decode step of every validated Qwen3.5 group by the
// operators the table prices (docs/hybrid-attention.md, "What a decode step is priced from"),
// at 4 and 64 requests of 1,500 context tokens, and holds the figures that page quotes: on
// B200 at TP 8 the FP8 table prices its block-FP8 projections and shared expert at more than
// three times the BF16 table's, and that difference is the whole of the two steps' difference
// at 4 requests, where the runs measured the FP8 step 3 % slower than the BF16 one.
func TestQwen35DecodeBreakdown(t *testing.T) {
	groups := []qwen35Group{
		{"B200 BF16 TP 8", "b200_sxm", "0.5.9", "", KVBF16, 8, 8, 1},
		{"B200 FP8 TP 8", "b200_sxm", "0.5.9", "fp8", KVFP8, 8, 8, 1},
		{"B200 FP8 TP 4 × EP 4", "b200_sxm", "0.5.9", "fp8", KVFP8, 4, 1, 4},
		{"B300 BF16 TP 8", "b300_sxm", "0.5.10", "", KVBF16, 8, 8, 1},
		{"B300 BF16 TP 4", "b300_sxm", "0.5.10", "", KVBF16, 4, 4, 1},
		{"B300 FP8 TP 4", "b300_sxm", "0.5.10", "fp8", KVFP8, 4, 4, 1},
		{"H200 FP8 TP 8", "h200_sxm", "0.5.9", "fp8", KVFP8, 8, 8, 1},
	}
	type step struct{ projShared, total float64 }
	at4 := map[string]step{}
	t.Logf("%-22s %4s %7s %6s %5s %7s %6s %6s %6s %7s %6s %6s %7s", "group", "reqs", "proj", "gate", "ar", "experts", "shared", "elem", "attn", "linear", "logits", "adj", "total")
	for _, g := range groups {
		w := g.worker(t)
		for _, n := range []int{4, 64} {
			br := w.Breakdown(&Batch{Decodes: n, DecodeContextTokens: int64(n) * 1500})
			o := br.Operators
			parts := o.ProjectionsUS + o.RouterGateUS + o.ExpertsUS + o.SharedExpertsUS + o.AllReduceUS + o.ElementwiseUS + o.AdjustmentUS
			if math.Abs(parts-br.NonAttentionUS) > 1e-6 {
				t.Errorf("%s, %d requests: operators sum to %.3f µs, non-attention %.3f", g.name, n, parts, br.NonAttentionUS)
			}
			if sum := br.NonAttentionUS + br.LogitsUS + br.DecodeAttnUS + br.LinearAttnUS; br.TotalUS != int64(math.Ceil(sum)) {
				t.Errorf("%s, %d requests: step %d µs, parts sum to %.3f", g.name, n, br.TotalUS, sum)
			}
			t.Logf("%-22s %4d %7.0f %6.0f %5.0f %7.0f %6.0f %6.0f %6.0f %7.0f %6.0f %6.0f %7d", g.name, n, o.ProjectionsUS, o.RouterGateUS, o.AllReduceUS,
				o.ExpertsUS, o.SharedExpertsUS, o.ElementwiseUS, br.DecodeAttnUS, br.LinearAttnUS, br.LogitsUS, o.AdjustmentUS, br.TotalUS)
			if n == 4 {
				at4[g.name] = step{o.ProjectionsUS + o.SharedExpertsUS, float64(br.TotalUS)}
			}
		}
	}
	bf16, fp8 := at4["B200 BF16 TP 8"], at4["B200 FP8 TP 8"]
	if r := fp8.projShared / bf16.projShared; r < 3 {
		t.Errorf("B200 TP 8, 4 requests: FP8 projections + shared expert %.0f µs, %.2f× BF16's %.0f (the page quotes more than 3×)", fp8.projShared, r, bf16.projShared)
	}
	if d, dp := fp8.total-bf16.total, fp8.projShared-bf16.projShared; math.Abs(d-dp) > 0.1*dp {
		t.Errorf("B200 TP 8, 4 requests: the FP8 step is %.0f µs over the BF16 one, its projections + shared expert %.0f µs (the page: all of it)", d, dp)
	}
	t.Logf("B200 TP 8, 4 requests: FP8 projections + shared expert %.0f µs against BF16 %.0f (%.2f×); steps %.0f against %.0f µs",
		fp8.projShared, bf16.projShared, fp8.projShared/bf16.projShared, fp8.total, bf16.total)
}
