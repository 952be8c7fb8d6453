package model

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The measured MLA module is split into its projections (priced per token with every other
// projection) and the rest: at a measured point the two add up to the module again, and a
// module measured faster than its projections leaves no attention time and says so.
func TestMLAAttentionSplitsModule(t *testing.T) {
	proj := func(m float64) float64 { return 10 + m/100 } // µs
	row := func(ctx bool, b, length int64, ms float64) mlaRow {
		r := mlaRow{MLADtype: attentionDtype, KVDtype: "fp8", GEMMType: "bfloat16", Heads: 8, TP: 1, Batch: b, Latency: ms}
		if ctx {
			r.ISL = length
		} else {
			r.ISL, r.Step = 1, length
		}
		return r
	}
	ctxs := []mlaRow{row(true, 1, 1024, 0.100), row(true, 1, 4096, 0.400), row(true, 2, 1024, 0.180), row(true, 2, 4096, 0.700),
		row(true, 1, 1024, 9), // another head count, dtype or cached prefix does not count
	}
	ctxs[4].Heads = 16
	gens := []mlaRow{row(false, 1, 1024, 0.050), row(false, 1, 8192, 0.060), row(false, 4, 1024, 0.008), row(false, 4, 8192, 0.080)}
	var notes []string
	ctx, gen, err := mlaAttention(ctxs, gens, "x", 8, "bfloat16", "fp8", proj, func(s string) { notes = append(notes, s) })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ b, n, tokens, us float64 }{{1, 1024, 1024, 100}, {1, 4096, 4096, 400}, {2, 1024, 2048, 180}, {2, 4096, 8192, 700}} {
		if got := ctx(c.b, c.n, 2) + proj(c.tokens); math.Abs(got-c.us) > 1e-9 {
			t.Fatalf("context b=%g n=%g: attention + projections %g µs, measured module %g", c.b, c.n, got, c.us)
		}
	}
	if got := gen(1, 8192, 1) + proj(1); math.Abs(got-60) > 1e-9 {
		t.Fatalf("decode b=1 at 8k: %g µs, want the module's 60", got)
	}
	if got := gen(4, 1024, 1); got != 0 {
		t.Fatalf("a module faster than its projections: attention %g µs, want 0", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "1 measured modules ran faster than their projections") {
		t.Fatalf("notes %q", notes)
	}
	if _, _, err := mlaAttention(ctxs, gens, "x", 4, "bfloat16", "fp8", proj, func(string) {}); err == nil ||
		!strings.Contains(err.Error(), "mla_context_module_perf: no rows for 4 heads per GPU") {
		t.Fatalf("an unmeasured head count: %v", err)
	}
}

// MLA caches one latent (kv_lora_rank + qk_rope_head_dim) per token per layer, whole on
// every GPU: the bytes per token per GPU do not shrink with TP, unlike a GQA cache's.
func TestMLACapacity(t *testing.T) {
	per := map[int]Capacity{}
	for _, tp := range []int{4, 8} {
		d := SeedDeployment()
		d.ModelName, d.Quantization, d.TP, d.MoETP, d.MoEEP = "moonshotai/Kimi-K2.5", "nvfp4", tp, tp, 1
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		per[tp] = w.Capacity()
		if want := int64(61 * (512 + 64) * 1); per[tp].KVBytesPerToken != want {
			t.Fatalf("tp %d: %d B per token per GPU, want 61 × 576 × 1 (fp8) = %d", tp, per[tp].KVBytesPerToken, want)
		}
		if !strings.Contains(per[tp].String(), "(512 kv_lora_rank + 64 qk_rope_head_dim)") {
			t.Fatalf("capacity does not show the latent:\n%s", per[tp])
		}
	}
	// Twice the GPUs hold half the sharded weights each, so more cache per GPU, hence more
	// tokens per worker than twice the TP 4 worker's blocks would not be; at least more.
	if per[8].WeightBytes >= per[4].WeightBytes || per[8].DerivedBlocks <= per[4].DerivedBlocks {
		t.Fatalf("tp 8 against tp 4: weights %d vs %d B, blocks %d vs %d", per[8].WeightBytes, per[4].WeightBytes, per[8].DerivedBlocks, per[4].DerivedBlocks)
	}
	d := SeedDeployment()
	d.ModelName, d.HardwareSKU, d.TP, d.MoETP, d.MoEEP, d.KVCacheDtype = "moonshotai/Kimi-K2.5", "h200_sxm", 8, 8, 1, KVBF16
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Capacity()
	if c.KVBytesPerToken != 61*576*2 {
		t.Fatalf("INT4 checkpoint, BF16 cache: %d B per token per GPU, want %d", c.KVBytesPerToken, 61*576*2)
	}
	// INT4 experts (half a byte and a BF16 scale per 32 weights) on 8 GPUs, the rest BF16:
	// 60 MoE layers × 384 experts × 3 × 7168 × 2048 × 0.5625 B / 8 ≈ 67 GB of the weights.
	if experts := int64(60) * 384 * 3 * 7168 * 2048 * 9 / 16 / 8; c.WeightBytes < experts || c.WeightBytes > experts+12e9 {
		t.Fatalf("INT4 Kimi-K2.5 on 8 GPUs: %.1f GB of weights per GPU, experts alone %.1f GB", float64(c.WeightBytes)/1e9, float64(experts)/1e9)
	}
}

// A quantisation never measured on a GPU is one error naming what is missing.
func TestMLAImportMissing(t *testing.T) {
	dir := sharedAICDir(t)
	o := ImportOptions{Model: "moonshotai/Kimi-K2.5", Checkpoint: "nvidia/Kimi-K2.5-NVFP4", Quantization: "nvfp4", HardwareSKU: "h200_sxm",
		Backend: "vllm", BackendVersion: "0.19.0", Layouts: layouts("8,8,1")}
	if _, err := Import(dir, o); err == nil || !strings.Contains(err.Error(), "no expert kernel known for nvfp4 experts on h200_sxm") {
		t.Fatalf("NVFP4 experts on Hopper: %v", err)
	}
	o = ImportOptions{Model: "moonshotai/Kimi-K2.5", HardwareSKU: "h200_sxm", Backend: "vllm", BackendVersion: "0.19.0", Layouts: layouts("16,16,1")}
	if _, err := Import(dir, o); err == nil || !strings.Contains(err.Error(), "custom_allreduce_perf: no rows for bfloat16 16 GPUs") {
		t.Fatalf("16 GPUs (no all-reduce measured): %v", err)
	}
}

// The MLA module rows come from the GPU's collection run with the serving engine's norm
// kernels (both module tables' norm_dispatch in collection_meta.yaml), the nearest such
// version, unless the deployment's own rows are asked for or --attention-version names one.
func TestMLAModuleVersion(t *testing.T) {
	dir := t.TempDir()
	meta := func(sku, version, body string) {
		p := filepath.Join(dir, sku, "mla", "vllm", version)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if body != "" {
			if err := os.WriteFile(filepath.Join(p, "collection_meta.yaml"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	fused := func(ctx, gen string) string {
		return "schema_version: 1\ntables:\n  mla_context_module_perf:\n    status: complete\n    norm_dispatch: " + ctx +
			"\n  mla_generation_module_perf:\n    norm_dispatch: " + gen + "\n"
	}
	meta("b200_sxm", "0.19.0", "schema_version: 1\ntables:\n  mla_context_module_perf:\n    status: complete\n")
	meta("b200_sxm", "0.22.0", "") // reuse.yaml only
	meta("b200_sxm", "0.24.0", fused(fusedNormDispatch, fusedNormDispatch))
	meta("b200_sxm", "0.25.0", fused("native", fusedNormDispatch)) // one table only: not this collection
	meta("b200_sxm", "0.30.0", fused(fusedNormDispatch, fusedNormDispatch))
	meta("h200_sxm", "0.19.0", "schema_version: 1\n")
	meta("b300_sxm", "0.24.0", "tables: [")
	o := ImportOptions{HardwareSKU: "b200_sxm", Backend: "vllm", BackendVersion: "0.19.0"}
	for _, c := range []struct {
		name        string
		rows, sku   string
		attention   string
		want, words string
		source      bool
	}{
		{"fused, nearest of 0.24 and 0.30", "", "b200_sxm", "", "0.24.0", "norm_dispatch vllm_c_eager_surrogate", true},
		{"fused by name", MLARowsFusedNorms, "b200_sxm", "", "0.24.0", "aiconfigurator#1423", true},
		{"the version's own", MLARowsVersion, "b200_sxm", "", "0.19.0", "--mla-module-rows version", false},
		{"--attention-version wins", "", "b200_sxm", "0.22.0", "0.22.0", "(--attention-version)", false},
		{"no fused collection", "", "h200_sxm", "", "0.19.0", "no collection of this GPU ran the fused norm kernels", false},
	} {
		o := o
		o.MLAModuleRows, o.HardwareSKU, o.AttentionVersion = c.rows, c.sku, c.attention
		var srcs []Source
		v, words, err := mlaModuleVersion(dir, o, &srcs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v != c.want || !strings.Contains(words, c.want) || !strings.Contains(words, c.words) {
			t.Fatalf("%s: version %s (%s), want %s with %q", c.name, v, words, c.want, c.words)
		}
		if got := len(srcs) == 1 && srcs[0].Path == "b200_sxm/mla/vllm/0.24.0/collection_meta.yaml"; got != c.source {
			t.Fatalf("%s: sources %v", c.name, srcs)
		}
	}
	o.MLAModuleRows = "native"
	if _, _, err := mlaModuleVersion(dir, o, new([]Source)); err == nil || !strings.Contains(err.Error(), `MLA module rows "native": want fused-norms or version`) {
		t.Fatalf("a bad choice: %v", err)
	}
	o.MLAModuleRows, o.HardwareSKU = "", "b300_sxm"
	if _, _, err := mlaModuleVersion(dir, o, new([]Source)); err == nil || !strings.Contains(err.Error(), "b300_sxm/mla/vllm/0.24.0/collection_meta.yaml") {
		t.Fatalf("malformed collection_meta.yaml: %v", err)
	}
}

// On AIConfigurator's data: B200's fused-norm collection (0.24.0) prices a decode layer's MLA
// attention well below the 0.19.0 rows, whose collector ran the native norm chain; both price
// the same projections, so the difference is the module's rest. Kimi-K2.5 INT4 at TP 8 (8
// heads per GPU, BF16 projections), one decode at context 2,048: the paired B200 0.24.0
// collections before and after the fix differ by 38 µs a layer there.
func TestMLAFusedNormRows(t *testing.T) {
	dir := sharedAICDir(t)
	decode := func(rows string) float64 {
		o := ImportOptions{Model: "moonshotai/Kimi-K2.5", HardwareSKU: "b200_sxm", Backend: "vllm", BackendVersion: "0.19.0",
			MLAModuleRows: rows, Layouts: layouts("8,8,1")}
		tables, err := Import(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		tb := tables[0]
		if !strings.Contains(tb.MLAModule, map[string]string{MLARowsFusedNorms: "the 0.24.0 collection", MLARowsVersion: "the 0.19.0 collection"}[rows]) {
			t.Fatalf("%s: MLA module rows from %q", rows, tb.MLAModule)
		}
		a, err := tb.AttentionFor(KVBF16)
		if err != nil {
			t.Fatal(err)
		}
		s := newSurface(a.Decode.Values, a.Decode.Rows, a.Decode.Cols, 1, 1)
		return s.at(1, 2048) / float64(tb.LLM.Layers)
	}
	fused, native := decode(MLARowsFusedNorms), decode(MLARowsVersion)
	if native-fused < 25 || fused > native/2 {
		t.Fatalf("decode MLA attention per layer, 1 request at 2k: fused-norm rows %.1f µs, 0.19.0 rows %.1f µs: want the native chain's 25+ µs gone", fused, native)
	}
}
