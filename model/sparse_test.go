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
var glm5Select = dsaSelect{Architecture: "GlmMoeDsaForCausalLM", Heads: 8, ModelHeads: 64, GEMMType: "fp8_block", KVDtype: "fp8"}

func noProjections(float64) float64 { return 0 }

// One layer priced by hand from table rows: the measured points as measured, linear between
// them, and above the longest context only the indexer's growth (the slope between index_topk
// and the longest context).
func TestDSAModuleHandChecked(t *testing.T) {
	row := func(op string, b, isl, step int64, ms float64) mlaRow {
		return mlaRow{Op: op, Kernel: "dsa_nsa", Architecture: "GlmMoeDsaForCausalLM", MLADtype: "bfloat16", KVDtype: "fp8",
			GEMMType: "fp8_block", Heads: 8, Batch: b, ISL: isl, TP: 1, Step: step, Latency: ms}
	}
	ctxs := []mlaRow{
		row(dsaContextOp, 1, 1024, 0, 0.8), row(dsaContextOp, 1, 2048, 0, 1.0),
		row(dsaContextOp, 1, 2048, 512, 9.0), // a cached prefix: not a step-0 prefill
		row(dsaContextOp+"_skip_indexer", 1, 2048, 0, 9.0),
	}
	gens := []mlaRow{
		row(dsaGenerationOp, 1, 1, 1024, 0.100), row(dsaGenerationOp, 1, 1, 2048, 0.110), row(dsaGenerationOp, 1, 1, 4096, 0.130),
		row(dsaGenerationOp, 2, 1, 1024, 0.200), row(dsaGenerationOp, 2, 1, 2048, 0.220), row(dsaGenerationOp, 2, 1, 4096, 0.260),
		// measured no further than index_topk, as the tables' large batches are
		row(dsaGenerationOp, 4, 1, 1024, 0.400), row(dsaGenerationOp, 4, 1, 2048, 0.440),
	}
	other := row(dsaGenerationOp, 1, 1, 4096, 9.0)
	other.Architecture = "DeepseekV32ForCausalLM"
	gens = append(gens, other)
	ctx, gen, words, err := dsaModule(ctxs, gens, "ctx", "gen", glm5Select, 2048, noProjections, func(string) { t.Error("nothing floored") })
	if err != nil {
		t.Fatal(err)
	}
	if words != "prefill dsa_nsa, decode dsa_nsa" {
		t.Errorf("kernels %q", words)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"prefill 1 × 1,536 (between 800 and 1,000 µs)", ctx(1, 1536, 2), 900},
		{"decode 1 at 3,072 (between 110 and 130 µs)", gen(1, 3072, 1), 120},
		{"decode 1 at 8,192: 130 + (130 − 110) × 4,096 / 2,048", gen(1, 8192, 1), 170},
		{"decode 2 at 8,192: 260 + (260 − 220) × 4,096 / 2,048", gen(2, 8192, 1), 340},
		{"decode 1.5 at 8,192: between the batches", gen(1.5, 8192, 1), 255},
		{"decode 4 at 4,096: batch 2's indexer growth per request (40 µs / 2,048 / 2) × 4 × 2,048", gen(4, 4096, 1), 520},
		{"decode 8 at 2,048: the last batch scaled 8/4", gen(8, 2048, 1), 880},
		{"decode 1 at 512: the shortest measured context holds", gen(1, 512, 1), 100},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s: %.6f µs, want %.6f", c.name, c.got, c.want)
		}
	}
	other = row(dsaContextOp, 1, 1024, 0, 0.8)
	other.Kernel = "sglang_dsa_indexer_trtllm"
	if _, _, _, err := dsaModule(append(ctxs, other), gens, "ctx.parquet", "gen.parquet", glm5Select, 2048, noProjections, nil); err == nil ||
		err.Error() != "ctx.parquet: dsa_context_module at GlmMoeDsaForCausalLM, 8 heads per GPU, fp8_block projections, fp8 KV cache is measured with 2 DSA backends (dsa_nsa, sglang_dsa_indexer_trtllm): which one the engine runs is not chosen here" {
		t.Errorf("two backends: %v", err)
	}
	v32 := glm5Select
	v32.Architecture = "DeepseekV32ForCausalLM"
	if _, _, _, err := dsaModule(ctxs, gens, "ctx.parquet", "gen.parquet", v32, 2048, noProjections, nil); err == nil ||
		!strings.Contains(err.Error(), "ctx.parquet: no rows for dsa_context_module at DeepseekV32ForCausalLM") {
		t.Errorf("another architecture's rows: %v, want the table and the selection named", err)
	}
	// The projections come off every measured point: 105 µs of them leave decode 1 at 1,024
	// with nothing (floored, noted) and decode 2 at 1,024 with 95.
	var notes []string
	_, gen, _, err = dsaModule(ctxs, gens, "ctx", "gen", glm5Select, 2048, func(float64) float64 { return 105 }, func(s string) { notes = append(notes, s) })
	if err != nil || gen(1, 1024, 1) != 0 || math.Abs(gen(2, 1024, 1)-95) > 1e-9 || len(notes) != 1 || !strings.Contains(notes[0], "1 measured modules ran faster") {
		t.Errorf("less projections: %v, %.3f, %.3f, %q", err, gen(1, 1024, 1), gen(2, 1024, 1), notes)
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
	ctx, gen, _, err := dsaModule(ctxs, gens, ctxRel, genRel, glm5Select, 2048, noProjections, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"decode 1 at 1,024", gen(1, 1024, 1), 98.8},
		{"decode 1 at 16,384", gen(1, 16384, 1), 113.0},
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
	s := LLMSpec{KVLoRARank: 512, QKRopeDim: 64, IndexTopK: 2048, IndexHeads: 32, IndexHeadDim: 128}
	if got := dsaKVBytesPerToken(s, KVBF16); got != 1152+132 {
		t.Errorf("BF16 cache: %d bytes per token per layer, want 1,284", got)
	}
	if got := dsaKVBytesPerToken(s, KVFP8); got != 656+132 {
		t.Errorf("FP8 cache: %d bytes per token per layer, want 788", got)
	}
}

// GLM-5's config: sparse attention over MLA, keyed by its architecture.
func TestParseGLM5(t *testing.T) {
	dir := sharedAICDir(t)
	rel := "model_configs/zai-org--GLM-5-FP8_config.json"
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseLLMSpec(rel, b)
	if err != nil {
		t.Fatal(err)
	}
	if !s.DSA() || !s.MLA() || s.IndexTopK != 2048 || s.IndexHeads != 32 || s.IndexHeadDim != 128 || s.WeightQuant != "fp8_block" || s.DenseLayers != 3 {
		t.Errorf("GLM-5: %+v", s)
	}
	if arch, err := dsaArchitecture(rel, b); err != nil || arch != "GlmMoeDsaForCausalLM" {
		t.Errorf("GLM-5's architecture: %q, %v", arch, err)
	}
	if _, err := dsaArchitecture("c.json", []byte(`{"index_topk":2048}`)); err == nil ||
		err.Error() != "model import: c.json: field architectures: missing (the DSA tables key their rows by it)" {
		t.Errorf("no architectures: %v", err)
	}
	if _, err := parseLLMSpec("c.json", []byte(`{"index_topk":2048,"num_hidden_layers":1}`)); err == nil || !strings.Contains(err.Error(), "c.json: field index_topk: DeepSeek sparse attention") {
		t.Errorf("sparse attention without MLA: %v", err)
	}
}

func FuzzDSAArchitecture(f *testing.F) {
	f.Add([]byte(`{"architectures":["GlmMoeDsaForCausalLM"],"index_topk":2048}`))
	f.Add([]byte(`{"text_config":{"architectures":[""]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		arch, err := dsaArchitecture("c.json", b)
		if err == nil && arch == "" {
			t.Fatal("accepted an empty architecture")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "model import: c.json: ") {
			t.Fatalf("error without the file: %v", err)
		}
	})
}

// The embedded GLM-5 worker (B200, TP 8) sizes its cache by the NSA pool: 78 layers × 788 B
// with the FP8 cache, × 1,284 B with BF16, on every GPU.
func TestGLM5WorkerKVBytes(t *testing.T) {
	d := SeedDeployment()
	d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion, d.Quantization = "zhipuai/GLM-5", "b200_sxm", BackendSGLang, "0.5.9", "fp8"
	d.TP, d.MoETP, d.MoEEP = 8, 8, 1
	for _, c := range []struct {
		kv   string
		want int64
	}{{KVFP8, 61464}, {KVBF16, 100152}} {
		d.KVCacheDtype = c.kv
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Capacity(); got.KVBytesPerToken != c.want || got.KVBytesPerTokenTotal != 8*c.want {
			t.Errorf("%s cache: %d B per token per GPU (%d per worker), want %d", c.kv, got.KVBytesPerToken, got.KVBytesPerTokenTotal, c.want)
		}
	}
}

// Another engine's DSA cache is not SGLang's NSA pool: refused, not sized as one.
func TestImportDSAOtherBackend(t *testing.T) {
	dir := sharedAICDir(t)
	_, err := Import(dir, ImportOptions{Model: "zai-org/GLM-5-FP8", HardwareSKU: "b200_sxm", Backend: BackendTRTLLM, BackendVersion: "1.2.0rc5", Layouts: layouts("8,8,1")})
	if err == nil || !strings.Contains(err.Error(), "DeepSeek sparse attention is priced under sglang only") {
		t.Fatalf("GLM-5 under TRT-LLM: %v", err)
	}
}
