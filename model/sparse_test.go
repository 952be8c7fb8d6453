package model

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// glm5Select is GLM-5 FP8 at TP 8 (8 heads per GPU) with the FP8 KV cache on SGLang 0.5.10's
// NSA backend, as the B200 table measures it.
var glm5Select = dsaSelect{Kernel: "dsa_nsa", Architecture: "GlmMoeDsaForCausalLM", Heads: 8, GEMMType: "fp8_block", KVDtype: "fp8"}

// One layer priced by hand from table rows: the measured points as measured, linear between
// them, and above the longest context only the indexer's growth (the slope between index_topk
// and the longest context).
func TestDSAModuleHandChecked(t *testing.T) {
	row := func(op string, b, isl, step int64, ms float64) dsaRow {
		return dsaRow{Op: op, Kernel: "dsa_nsa", Architecture: "GlmMoeDsaForCausalLM", MLADtype: "bfloat16", KVDtype: "fp8",
			GEMMType: "fp8_block", Heads: 8, Batch: b, ISL: isl, TP: 1, Step: step, Latency: ms}
	}
	ctxs := []dsaRow{
		row(dsaContextOp, 1, 1024, 0, 0.8), row(dsaContextOp, 1, 2048, 0, 1.0),
		row(dsaContextOp, 1, 2048, 512, 9.0), // a cached prefix: not a step-0 prefill
		row(dsaContextOp+"_skip_indexer", 1, 2048, 0, 9.0),
	}
	gens := []dsaRow{
		row(dsaGenerationOp, 1, 1, 1024, 0.100), row(dsaGenerationOp, 1, 1, 2048, 0.110), row(dsaGenerationOp, 1, 1, 4096, 0.130),
		row(dsaGenerationOp, 2, 1, 1024, 0.200), row(dsaGenerationOp, 2, 1, 2048, 0.220), row(dsaGenerationOp, 2, 1, 4096, 0.260),
		// measured no further than index_topk, as the tables' large batches are
		row(dsaGenerationOp, 4, 1, 1024, 0.400), row(dsaGenerationOp, 4, 1, 2048, 0.440),
	}
	other := row(dsaGenerationOp, 1, 1, 4096, 9.0)
	other.Kernel = "sglang_dsa_indexer_trtllm"
	gens = append(gens, other)
	ctx, gen, err := dsaModule(ctxs, gens, "ctx", "gen", glm5Select, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		got, want float64
	}{
		{"prefill 1 × 1,536 (between 800 and 1,000 µs)", ctx(1, 1536, 2), 900},
		{"decode 1 at 3,072 (between 110 and 130 µs)", gen(1, 3072), 120},
		{"decode 1 at 8,192: 130 + (130 − 110) × 4,096 / 2,048", gen(1, 8192), 170},
		{"decode 2 at 8,192: 260 + (260 − 220) × 4,096 / 2,048", gen(2, 8192), 340},
		{"decode 1.5 at 8,192: between the batches", gen(1.5, 8192), 255},
		{"decode 4 at 4,096: batch 2's indexer growth per request (40 µs / 2,048 / 2) × 4 × 2,048", gen(4, 4096), 520},
		{"decode 8 at 2,048: the last batch scaled 8/4", gen(8, 2048), 880},
		{"decode 1 at 512: the shortest measured context holds", gen(1, 512), 100},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s: %.6f µs, want %.6f", c.name, c.got, c.want)
		}
	}
	if _, _, err := dsaModule(ctxs, gens, "ctx.parquet", "gen.parquet", dsaSelect{Kernel: "dsa_nsa", Architecture: "DeepseekV32ForCausalLM", Heads: 8, GEMMType: "fp8_block", KVDtype: "fp8"}, 2048); err == nil ||
		!strings.Contains(err.Error(), "ctx.parquet: no rows for dsa_nsa DeepseekV32ForCausalLM, 8 heads per GPU") {
		t.Errorf("another architecture's rows: %v, want the table and the selection named", err)
	}
}

// The measured B200 table itself: GLM-5 FP8 at 8 heads, one request at context 1,024 is the
// row's 0.0988 ms, and at 16,384 (the longest measured) 0.1130 ms.
func TestDSAModuleB200Table(t *testing.T) {
	dir := sharedAICDir(t)
	var srcs []Source
	ctxs, gens, ctxRel, genRel, err := readDSATables(dir, "b200_sxm", BackendSGLang, "0.5.10", &srcs)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].Path != "b200_sxm/sparse_attention/sglang/0.5.10/dsa_context_module_perf.parquet" || len(srcs[0].SHA256) != 64 {
		t.Fatalf("sources %+v: want both tables with their digests", srcs)
	}
	ctx, gen, err := dsaModule(ctxs, gens, ctxRel, genRel, glm5Select, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		got, want float64
	}{
		{"decode 1 at 1,024", gen(1, 1024), 98.8},
		{"decode 1 at 16,384", gen(1, 16384), 113.0},
		{"prefill 1 × 1,024", ctx(1, 1024, 2), 792.5},
	} {
		if math.Abs(c.got-c.want) > 0.05 {
			t.Errorf("%s: %.2f µs, want the row's %.1f", c.name, c.got, c.want)
		}
	}
}

// One token's cache in one GLM-5 layer: the 576-element BF16 latent (1,152 bytes) or SGLang's
// FP8 row (512 latent bytes, 4 float32 scales, the 64-element RoPE key in BF16: 656 bytes),
// beside the indexer's 128 FP8 values and their one float32 scale (132 bytes).
func TestDSAKVBytesPerToken(t *testing.T) {
	s := LLMSpec{KVLoRARank: 512, QKRopeDim: 64}
	d := DSAConfig{IndexTopK: 2048, IndexHeads: 32, IndexHeadDim: 128}
	if got := dsaKVBytesPerToken(s, d, KVBF16); got != 1152+132 {
		t.Errorf("BF16 cache: %d bytes per token per layer, want 1,284", got)
	}
	if got := dsaKVBytesPerToken(s, d, KVFP8); got != 656+132 {
		t.Errorf("FP8 cache: %d bytes per token per layer, want 788", got)
	}
}

func TestParseDSAConfigGLM5(t *testing.T) {
	dir := sharedAICDir(t)
	rel := "model_configs/zai-org--GLM-5-FP8_config.json"
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDSAConfig(rel, b)
	if err != nil {
		t.Fatal(err)
	}
	if d != (DSAConfig{Architecture: "GlmMoeDsaForCausalLM", IndexTopK: 2048, IndexHeads: 32, IndexHeadDim: 128}) {
		t.Errorf("GLM-5: %+v", d)
	}
	if _, err := parseDSAConfig("c.json", []byte(`{"architectures":["X"],"index_topk":2048,"index_n_heads":32}`)); err == nil ||
		err.Error() != "model import: c.json: field index_head_dim: missing or not positive" {
		t.Errorf("no index_head_dim: %v", err)
	}
}

func FuzzParseDSAConfig(f *testing.F) {
	f.Add([]byte(`{"architectures":["GlmMoeDsaForCausalLM"],"index_topk":2048,"index_n_heads":32,"index_head_dim":128}`))
	f.Add([]byte(`{"text_config":{"index_topk":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseDSAConfig("c.json", b)
		if err == nil && (d.IndexTopK <= 0 || d.IndexHeads <= 0 || d.IndexHeadDim <= 0 || d.Architecture == "") {
			t.Fatalf("accepted %+v", d)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "model import: c.json: ") {
			t.Fatalf("error without the file: %v", err)
		}
	})
}
