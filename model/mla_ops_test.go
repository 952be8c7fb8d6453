package model

import (
	"math"
	"strings"
	"testing"
)

// The operator composition: prefill is the context kernel plus kv_b over the chunk's tokens,
// decode the generation kernel plus both BMMs over its requests; rows collected for another
// model's head count (tp_size × num_heads ≠ the model's heads) do not price it.
func TestMLAOpAttentionComposes(t *testing.T) {
	s := LLMSpec{Heads: 128}
	in := mlaInputs{ops: true, bmmRel: "bmm",
		ctxs: []mlaRow{
			{Heads: 16, TP: 8, Batch: 1, ISL: 1024, KVDtype: "fp8", MLADtype: attentionDtype, Latency: 0.1},
			{Heads: 16, TP: 4, Batch: 1, ISL: 1024, KVDtype: "fp8", MLADtype: attentionDtype, Latency: 9},            // another model's
			{Heads: 16, TP: 8, Batch: 1, ISL: 1024, Step: 512, KVDtype: "fp8", MLADtype: attentionDtype, Latency: 9}, // a cached prefix
		},
		gens: []mlaRow{{Heads: 16, TP: 8, Batch: 4, Step: 2048, KVDtype: "fp8", MLADtype: attentionDtype, Latency: 0.02}},
		bmms: []mlaBMMRow{
			{Op: "mla_gen_pre", Dtype: "fp8", Heads: 16, Tokens: 4, Latency: 0.003},
			{Op: "mla_gen_post", Dtype: "fp8", Heads: 16, Tokens: 4, Latency: 0.005},
			{Op: "mla_gen_post", Dtype: "bfloat16", Heads: 16, Tokens: 4, Latency: 1},
		},
	}
	kvB := func(m float64) float64 { return m / 1024 } // 1 µs per 1,024 tokens
	ctx, gen, err := mlaOpAttention(in, "ctx", "gen", s, 16, "fp8", mlaBMMDtype(BackendTRTLLM, in.bmms, 16, "fp8"), kvB)
	if err != nil {
		t.Fatal(err)
	}
	if got := ctx(1, 1024, 2); math.Abs(got-101) > 1e-9 {
		t.Errorf("prefill %.3f µs, want 100 (kernel) + 1 (kv_b)", got)
	}
	if got := gen(4, 2048, 1); math.Abs(got-28) > 1e-9 {
		t.Errorf("decode %.3f µs, want 20 (kernel) + 3 + 5 (BMMs)", got)
	}
	if _, _, err := mlaOpAttention(in, "ctx", "gen", s, 16, "fp8", "float8", kvB); err == nil || !strings.Contains(err.Error(), "bmm") {
		t.Errorf("BMMs of an unmeasured dtype: err %v, want one naming the BMM table", err)
	}
	if _, _, err := mlaOpAttention(in, "ctx", "gen", s, 32, "fp8", "fp8", kvB); err == nil || !strings.Contains(err.Error(), "ctx") {
		t.Errorf("unmeasured heads: err %v, want one naming the context table", err)
	}
}

// A BF16 model's BMMs run in BF16; a quantised one's in FP8 where the table measures them,
// but under SGLang, which dequantises the block-FP8 kv_b_proj to BF16 at load, in BF16.
func TestMLABMMDtype(t *testing.T) {
	rows := []mlaBMMRow{{Dtype: "fp8", Heads: 16}, {Dtype: "bfloat16", Heads: 32}}
	for _, c := range []struct {
		b     Backend
		heads int
		quant string
		want  string
	}{
		{BackendTRTLLM, 16, "fp8_block", "fp8"}, {BackendTRTLLM, 16, unquantGEMMDtype, unquantGEMMDtype},
		{BackendTRTLLM, 32, "fp8_block", unquantGEMMDtype},
		{BackendSGLang, 16, "fp8_block", unquantGEMMDtype}, {BackendSGLang, 16, unquantGEMMDtype, unquantGEMMDtype},
	} {
		if got := mlaBMMDtype(c.b, rows, c.heads, c.quant); got != c.want {
			t.Errorf("%s, %d heads, %s: %s, want %s", c.b, c.heads, c.quant, got, c.want)
		}
	}
}
