package model

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

const sharedAIC = "../../shared/aic"

// sharedAICDir returns ../shared/aic, skipping the test when it is absent.
func sharedAICDir(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(sharedAIC); err != nil {
		t.Skip("../shared/aic not present: cannot re-derive the embedded tables")
	}
	return sharedAIC
}

func embeddedTable(t *testing.T, name string) *Table {
	t.Helper()
	b, err := embeddedJSON(name)
	if err != nil {
		t.Fatal(err)
	}
	var tb Table
	if err := json.Unmarshal(b, &tb); err != nil {
		t.Fatal(err)
	}
	return &tb
}

// The embedded tables are exactly what the importer derives from ../shared/aic: every one of
// EmbeddedImports, and nothing else, with PROVENANCE.md over all of them.
func TestImportRoundTrip(t *testing.T) {
	dir := sharedAICDir(t)
	if testing.Short() {
		t.Skip("re-import reads ~40 MB of parquet; skipped in -short")
	}
	var all []*Table
	for _, o := range EmbeddedImports() {
		tables, err := Import(dir, o)
		if err != nil {
			t.Fatalf("%s on %s: %v", o.Model, o.HardwareSKU, err)
		}
		if len(tables) != len(o.Layouts) {
			t.Fatalf("%d tables for %d layouts", len(tables), len(o.Layouts))
		}
		all = append(all, tables...)
	}
	var names []string
	for _, tb := range all {
		got, err := MarshalTable(tb)
		if err != nil {
			t.Fatal(err)
		}
		want, err := embeddedJSON(TableFileName(tb))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("embedded %s differs from a fresh import; re-run `routerlab model import`", TableFileName(tb))
		}
		names = append(names, TableFileName(tb))
	}
	slices.Sort(names)
	if have := EmbeddedTables(); !slices.Equal(names, have) {
		t.Fatalf("embedded tables %v, EmbeddedImports derives %v", have, names)
	}
	for _, ref := range TimingReferences() {
		var of []*Table
		for _, tb := range all {
			if cmp.Or(tb.TimingReference, ReferenceSilicon) == ref {
				of = append(of, tb)
			}
		}
		name := ProvenanceFileName(ref)
		prov, err := os.ReadFile(filepath.Join("tables", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(prov, Provenance(of)) {
			t.Fatalf("tables/%s differs from a fresh import", name)
		}
	}
}

// Every source of every embedded table is a file of ../shared/aic with the digest recorded.
func TestEmbeddedSourcesInShared(t *testing.T) {
	dir := sharedAICDir(t)
	digests := map[string]string{}
	for _, name := range EmbeddedTables() {
		tb := embeddedTable(t, name)
		if len(tb.Sources) < 5 {
			t.Fatalf("%s: %d sources", name, len(tb.Sources))
		}
		for _, src := range tb.Sources {
			d, ok := digests[src.Path]
			if !ok {
				b, err := os.ReadFile(filepath.Join(dir, src.Path))
				if err != nil {
					t.Fatalf("%s: source %s: %v", name, src.Path, err)
				}
				sum := sha256.Sum256(b)
				d = hex.EncodeToString(sum[:])
				digests[src.Path] = d
			}
			if d != src.SHA256 {
				t.Fatalf("%s: %s digest %s, ../shared has %s", name, src.Path, src.SHA256, d)
			}
		}
	}
}

// The router gate runs in FP32 on CUDA cores: memory-bound at decode sizes (its 3 MB of FP32
// weights), compute-bound at prefill sizes, where it costs far more than a BF16 GEMM would.
func TestFP32Gate(t *testing.T) {
	g := GPUSpec{MemBW: 7.7e12, MemBWScaling: 0.8, MemConstantUS: 3}
	bw := 7.7e12 * 0.8 / 1e6
	one := fp32GateUS(1, 256, 3072, 80e12, g)
	if want := 4*(256*3072+3072+256)/bw + 3 + 4*3072/bw; math.Abs(one-want) > 1e-9 {
		t.Fatalf("1 token: %g µs, want the weight read %g µs", one, want)
	}
	big := fp32GateUS(8192, 256, 3072, 80e12, g)
	if want := 2*8192*256*3072/80e12*1e6 + 3 + 4*8192*3072/bw; math.Abs(big-want) > 1e-9 {
		t.Fatalf("8192 tokens: %g µs, want the FP32 compute bound %g µs", big, want)
	}
	if big < 150 || big > 200 {
		t.Fatalf("8192 tokens: %g µs per layer", big)
	}
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Float64Range(1, 32768).Draw(t, "a")
		b := rapid.Float64Range(a, 65536).Draw(t, "b")
		if fp32GateUS(b, 256, 3072, 80e12, g) < fp32GateUS(a, 256, 3072, 80e12, g) {
			t.Fatalf("more tokens priced cheaper: %g < %g", b, a)
		}
	})
}

func TestImportMissingData(t *testing.T) {
	dir := t.TempDir()
	_, err := Import(dir, DefaultImportOptions())
	if err == nil || !strings.Contains(err.Error(), "MiniMaxAI--MiniMax-M2.5_config.json") {
		t.Fatalf("missing config: %v", err)
	}
	if _, err := os.Stat(sharedAIC); err != nil {
		return
	}
	o := DefaultImportOptions()
	o.MoE = MoEKernel{Source: "vllm_fused_moe", Quant: "fp8_block"}
	o.Layouts = []Layout{{TP: 4, AttentionDP: 4, MoETP: 1, MoEEP: 16}}
	if _, err := Import(sharedAIC, o); err == nil || !strings.Contains(err.Error(), "attention_dp") {
		t.Fatalf("DEP layout: %v", err)
	}
	o.BackendVersion = "0.1.0"
	if _, err := Import(sharedAIC, o); err == nil || !strings.Contains(err.Error(), "0.1.0") {
		t.Fatalf("missing version: %v", err)
	}
}

func TestSeriesInterpolation(t *testing.T) {
	s := newSeries([]point{{4, 10}, {1, 5}, {8, 30}, {4, 12}})
	if len(s) != 3 || s[1].us != 11 {
		t.Fatalf("sorted/deduplicated: %+v", s)
	}
	for _, c := range []struct{ x, pow, want float64 }{
		{0.5, 1, 5}, {1, 1, 5}, {4, 1, 11}, {6, 1, 20.5}, {16, 1, 60}, {16, 2, 120},
	} {
		if got := s.at(c.x, c.pow); got != c.want {
			t.Fatalf("at(%g, %g) = %g, want %g", c.x, c.pow, got, c.want)
		}
	}
}

func FuzzParseLLMSpec(f *testing.F) {
	f.Add([]byte(`{"num_hidden_layers":62,"hidden_size":3072,"num_attention_heads":48,"num_key_value_heads":8,"head_dim":128,"intermediate_size":1536,"vocab_size":200064,"num_experts_per_tok":8,"num_local_experts":256,"quantization_config":{"quant_method":"fp8","weight_block_size":[128,128]}}`))
	f.Add([]byte(`{"model_type":"llama","num_hidden_layers":80,"hidden_size":8192,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":28672,"vocab_size":128256}`))
	f.Add([]byte(`{"model_type":"qwen3_moe","num_hidden_layers":94,"hidden_size":4096,"num_attention_heads":64,"num_key_value_heads":4,"head_dim":128,"intermediate_size":12288,"moe_intermediate_size":1536,"num_experts":128,"num_experts_per_tok":8,"vocab_size":151936}`))
	f.Add([]byte(`{"model_type":"deepseek_v3","num_hidden_layers":61,"hidden_size":7168,"num_attention_heads":128,"num_key_value_heads":128,"intermediate_size":18432,"moe_intermediate_size":2048,"n_routed_experts":256,"n_shared_experts":1,"num_experts_per_tok":8,"first_k_dense_replace":3,"kv_lora_rank":512,"q_lora_rank":1536,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"vocab_size":129280,"quantization_config":{"quant_method":"fp8","weight_block_size":[128,128]}}`))
	f.Add([]byte(qwen35Config)) // hybrid linear attention (hybrid_test.go)
	f.Add([]byte(`{"num_hidden_layers":-1}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseLLMSpec("config.json", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model import: config.json: ") {
				t.Fatalf("error without file name: %v", err)
			}
			return
		}
		if s.Layers <= 0 || s.Hidden <= 0 || s.Heads <= 0 || s.KVHeads <= 0 || s.HeadDim <= 0 || s.Heads%s.KVHeads != 0 ||
			(s.WeightQuant == "fp8_block") != (s.WeightBlock > 0) || (s.MoE() && (s.TopK < 1 || s.TopK > s.Experts || (s.Inter != 0) != (s.DenseLayers > 0))) ||
			(s.MLA() && (s.HeadDim != s.QKNopeDim+s.QKRopeDim || s.VHeadDim <= 0)) {
			t.Fatalf("accepted a spec with non-positive sizes: %+v", s)
		}
		if s.Hybrid() && (s.LinearLayers >= s.Layers || s.LinearKeyHeads <= 0 || s.LinearValueHeads%s.LinearKeyHeads != 0 ||
			s.LinearKeyHeadDim <= 0 || s.LinearValueHeadDim <= 0 || s.LinearConvKernel < 2 || s.LinearStateBytes <= 0) {
			t.Fatalf("accepted a hybrid spec it cannot price: %+v", s)
		}
	})
}

func FuzzParseGPUSpec(f *testing.F) {
	f.Add([]byte("gpu:\n  mem_bw: 7700000000000\n  mem_bw_empirical_scaling_factor: 0.8\n  mem_empirical_constant_latency: 0.000003\n  mem_capacity: 193273528320\nmisc:\n  nccl_mem:\n    4: 411041792\n  other_mem: 3758096384\n"))
	f.Add([]byte("gpu: [1, 2"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := parseGPUSpec("sys.yaml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model import: sys.yaml: ") {
				t.Fatalf("error without file name: %v", err)
			}
			return
		}
		if g.MemBW <= 0 || g.MemCapacity <= 0 || g.MemBWScaling <= 0 || len(g.NCCLMem) == 0 {
			t.Fatalf("accepted an incomplete spec: %+v", g)
		}
	})
}

// One parser reads every family: a dense GQA model, a MoE model under each spelling of its
// expert count, and names what it cannot price.
func TestParseLLMSpecFamilies(t *testing.T) {
	dir := sharedAICDir(t)
	for _, c := range []struct {
		model string
		want  LLMSpec
	}{
		{"meta-llama/Llama-3.1-70B", LLMSpec{Architecture: "llama", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, Inter: 28672,
			Vocab: 128256, WeightQuant: "bfloat16", KVCacheBytes: 2, UnquantBytes: 2, ActivationBytes: 2}},
		{"Qwen/Qwen3-32B", LLMSpec{Architecture: "qwen3", Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128, Inter: 25600,
			Vocab: 151936, QKNorm: true, WeightQuant: "bfloat16", KVCacheBytes: 2, UnquantBytes: 2, ActivationBytes: 2}},
		{"Qwen/Qwen3-235B-A22B-FP8", LLMSpec{Architecture: "qwen3_moe", Layers: 94, Hidden: 4096, Heads: 64, KVHeads: 4, HeadDim: 128,
			Experts: 128, TopK: 8, ExpertInter: 1536, Vocab: 151936, QKNorm: true, WeightQuant: "fp8_block", WeightBlock: 128,
			KVCacheBytes: 2, UnquantBytes: 2, ActivationBytes: 2}},
		{"openai/gpt-oss-120b", LLMSpec{Architecture: "gpt_oss", Layers: 36, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64,
			Experts: 128, TopK: 4, ExpertInter: 2880, Vocab: 201088, WeightQuant: "bfloat16", ExpertQuant: "w4a16_mxfp4",
			SlidingLayers: 18, SlidingWindow: 128, KVCacheBytes: 2, UnquantBytes: 2, ActivationBytes: 2}},
		{"MiniMaxAI/MiniMax-M2.5", LLMSpec{Architecture: "minimax_m2", Layers: 62, Hidden: 3072, Heads: 48, KVHeads: 8, HeadDim: 128,
			Experts: 256, TopK: 8, ExpertInter: 1536, Vocab: 200064, QKNorm: true, QKNormPerLayer: true, FP32RouterGate: true, WeightQuant: "fp8_block", WeightBlock: 128,
			KVCacheBytes: 2, UnquantBytes: 2, ActivationBytes: 2}},
		// DeepSeek-V3's architecture: MLA, leading dense layers, one shared expert; Moonshot's
		// INT4 experts, NVIDIA's NVFP4 with attention left in BF16, DeepSeek's block FP8.
		{"moonshotai/Kimi-K2.5", LLMSpec{Architecture: "kimi_k2", Layers: 61, Hidden: 7168, Heads: 64, KVHeads: 64, HeadDim: 192,
			Inter: 18432, Experts: 384, TopK: 8, ExpertInter: 2048, SharedInter: 2048, Vocab: 163840, WeightQuant: "bfloat16", ExpertQuant: "int4_wo",
			DenseLayers: 1, KVLoRARank: 512, QLoRARank: 1536, QKNopeDim: 128, QKRopeDim: 64, VHeadDim: 128,
			KVCacheBytes: 2, UnquantBytes: 2, ActivationBytes: 2}},
		{"nvidia/Kimi-K2.5-NVFP4", LLMSpec{Architecture: "deepseek_v3", Layers: 61, Hidden: 7168, Heads: 64, KVHeads: 64, HeadDim: 192,
			Inter: 18432, Experts: 384, TopK: 8, ExpertInter: 2048, SharedInter: 2048, Vocab: 163840, WeightQuant: "nvfp4", AttentionQuant: "bfloat16",
			DenseLayers: 1, KVLoRARank: 512, QLoRARank: 1536, QKNopeDim: 128, QKRopeDim: 64, VHeadDim: 128,
			KVCacheBytes: 2, UnquantBytes: 2, ActivationBytes: 2}},
		{"deepseek-ai/DeepSeek-V3", LLMSpec{Architecture: "deepseek_v3", Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192,
			Inter: 18432, Experts: 256, TopK: 8, ExpertInter: 2048, SharedInter: 2048, Vocab: 129280, WeightQuant: "fp8_block", WeightBlock: 128,
			DenseLayers: 3, KVLoRARank: 512, QLoRARank: 1536, QKNopeDim: 128, QKRopeDim: 64, VHeadDim: 128,
			KVCacheBytes: 2, UnquantBytes: 2, ActivationBytes: 2}},
	} {
		rel := configFile(dir, c.model)
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseLLMSpec(rel, b)
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		if got != c.want {
			t.Fatalf("%s:\n got %+v\nwant %+v", c.model, got, c.want)
		}
	}
	for _, c := range []struct{ model, want string }{
		{"deepseek-ai/DeepSeek-V4-Flash", "compress_ratios: DeepSeek-V4's compressed sparse attention is not priced"},
		{"moonshotai/Kimi-K3", "linear_attn_config: linear-attention layers are not priced"},
	} {
		rel := configFile(dir, c.model)
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseLLMSpec(rel, b); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), rel) {
			t.Fatalf("%s: %v", c.model, err)
		}
	}
}

// A GEMM at a k the tables never measured lies between the measured k on either side, and
// says so; above the largest it grows as k.
func TestGEMMCurveAlongK(t *testing.T) {
	rows := []gemmRow{{"fp8", 1, 64, 1024, 0.010}, {"fp8", 1024, 64, 1024, 0.050}, {"fp8", 1, 64, 2048, 0.014}, {"fp8", 1024, 64, 2048, 0.090}}
	var notes []string
	note := func(s string) { notes = append(notes, s) }
	mid, err := gemmCurve(rows, "fp8", 64, 1536, note)
	if err != nil {
		t.Fatal(err)
	}
	if got := mid(1024); math.Abs(got-70) > 1e-9 {
		t.Fatalf("k=1536 at m=1024: %g µs, want 70", got)
	}
	top, err := gemmCurve(rows, "fp8", 64, 4096, note)
	if err != nil {
		t.Fatal(err)
	}
	if got := top(1); math.Abs(got-28) > 1e-9 {
		t.Fatalf("k=4096 at m=1: %g µs, want 28", got)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "interpolated between the measured k=1024 and k=2048") || !strings.Contains(notes[1], "extrapolated from the measured k=2048") {
		t.Fatalf("notes %q", notes)
	}
	if _, err := gemmCurve(rows, "fp8", 64, 512, note); err == nil || !strings.Contains(err.Error(), "k=512") {
		t.Fatalf("k below every measured one: %v", err)
	}
}

// A context-attention row faster than twice the GPU's BF16 peak allows is refused by name;
// rows of other head shapes, windows, or physical rates pass.
func TestCheckContextAttention(t *testing.T) {
	const peak = 989e12
	// 12 heads, head_dim 128, isl 8192: 2 × 8192² × 128 × 12 = 206 GFLOP.
	physical := attentionRow{Batch: 1, ISL: 8192, Heads: 12, KVHeads: 2, HeadDim: 128, KVDtype: "bfloat16", Latency: 0.336}
	fast := physical
	fast.Latency = 0.048 // 4.3 PFLOP/s, AIConfigurator's H200 0.19.0 row
	if err := checkContextAttention("ctx.parquet", []attentionRow{physical}, 2, 128, peak); err != nil {
		t.Fatal(err)
	}
	err := checkContextAttention("ctx.parquet", []attentionRow{physical, fast}, 2, 128, peak)
	if err == nil || !strings.Contains(err.Error(), "ctx.parquet: the row batch 1, isl 8192, 12 heads") || !strings.Contains(err.Error(), "--attention-version") {
		t.Fatalf("unphysical row: %v", err)
	}
	other, windowed := fast, fast
	other.KVHeads, windowed.Window = 8, 128
	if err := checkContextAttention("ctx.parquet", []attentionRow{other, windowed}, 2, 128, peak); err != nil {
		t.Fatalf("rows of another shape or a window are not this model's full attention: %v", err)
	}
	if err := checkContextAttention("ctx.parquet", []attentionRow{fast}, 2, 128, 0); err != nil {
		t.Fatalf("no peak known: %v", err)
	}
}

// A QK-norm over the layer's heads (MiniMax-M2's qk_norm_type per_layer) is priced as
// AIConfigurator's op list unless vLLM's three kernels are asked for: then the element-wise
// grid holds two passes over q and k instead of the op list's 8.8 op-equivalents, and the
// collective grid one all-reduce more per layer, of each token's two FP32 variances. A
// per-head QK-norm (Qwen3's) and the dynosim tables price the same either way.
func TestQKNormKernels(t *testing.T) {
	dir := sharedAICDir(t)
	load := func(o ImportOptions, kernels string) *Table {
		t.Helper()
		o.QKNormKernels = kernels
		o.Layouts = o.Layouts[:1]
		tables, err := Import(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		return tables[0]
	}
	aic, vllm := load(DefaultImportOptions(), QKNormAIConfigurator), load(DefaultImportOptions(), QKNormVLLM)
	if !aic.LLM.QKNormPerLayer || aic.Layout.TP != 4 {
		t.Fatalf("MiniMax-M2.5 %s: per-layer QK-norm %v", aic.Layout, aic.LLM.QKNormPerLayer)
	}
	s, g := aic.LLM, aic.GPU
	memOp := func(bytes float64) float64 { return bytes/(g.MemBW*g.MemBWScaling)*1e6 + g.MemConstantUS }
	q := float64(s.Heads / 4 * s.HeadDim * s.ActivationBytes)
	k := float64(s.KVHeads / 4 * s.HeadDim * s.ActivationBytes)
	opList := 1.1 * 2 * (2*memOp(q) + 2*memOp(k))
	kernels := memOp(q+k) + memOp(2*(q+k))
	want := float64(s.Layers) * (opList - kernels)
	if got := aic.Elementwise.Values[0] - vllm.Elementwise.Values[0]; math.Abs(got-want) > 0.01*want {
		t.Fatalf("one-token element-wise work: vLLM's kernels %g µs cheaper, want %g", got, want)
	}
	if want < 1000 {
		t.Fatalf("the op list's excess at one token is %g µs a step, want above 1 ms", want)
	}
	for i, v := range vllm.Collective.Values {
		if extra := v - aic.Collective.Values[i]; extra <= 0 {
			t.Fatalf("collective node %d: %g µs with the variances' all-reduce, %g without", i, v, aic.Collective.Values[i])
		}
	}
	if !strings.Contains(strings.Join(vllm.Kernels, "\n"), "QK-norm's FP32 variances") || strings.Contains(strings.Join(aic.Kernels, "\n"), "variances") {
		t.Fatalf("kernels:\n%s\n---\n%s", strings.Join(vllm.Kernels, "\n"), strings.Join(aic.Kernels, "\n"))
	}
	same := func(name string, o ImportOptions) {
		a, b := load(o, QKNormAIConfigurator), load(o, QKNormVLLM)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: priced differently with vLLM's per-layer QK-norm kernels", name)
		}
	}
	same("dynosim", DynosimImportOptions())
	same("Qwen3-32B (per-head QK-norm)", ImportOptions{Model: "Qwen/Qwen3-32B", HardwareSKU: "h100_sxm", Backend: "vllm",
		BackendVersion: "0.19.0", Layouts: layouts("2,2,1")})
	o := DefaultImportOptions()
	o.QKNormKernels = "triton"
	if _, err := Import(dir, o); err == nil || !strings.Contains(err.Error(), `"triton"`) {
		t.Fatalf("unknown QK-norm kernels: %v", err)
	}

	rel := configFile(dir, "MiniMaxAI/MiniMax-M2.5")
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), `"per_layer"`, `"per_token"`, 1)
	if _, err := parseLLMSpec(rel, []byte(bad)); err == nil || !strings.Contains(err.Error(), "field qk_norm_type") || !strings.Contains(err.Error(), rel) {
		t.Fatalf("unknown qk_norm_type: %v", err)
	}
}

// The expert rows' token distribution is an import option: AIConfigurator's default
// (power_law_1.2) prices the embedded tables, the others only the experts, and an unknown
// one is refused by name.
// importSeedTP4 derives the seed's TP 4 table (MiniMax-M2.5 on B200, moe_tp 4) with its experts
// priced under the given distribution ("" the default).
func importSeedTP4(t *testing.T, dir, dist string) *Table {
	t.Helper()
	o := DefaultImportOptions()
	o.MoE.Distribution, o.Layouts = dist, layouts("4,4,1")
	tables, err := Import(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return tables[0]
}

func TestMoEDistribution(t *testing.T) {
	dir := sharedAICDir(t)
	load := func(dist string) *Table { return importSeedTP4(t, dir, dist) }
	def, named, balanced := load(""), load("power_law_1.2"), load("balanced")
	if !reflect.DeepEqual(def, named) {
		t.Fatal("power_law_1.2 named is not the default")
	}
	words := func(tb *Table) string { return strings.Join(tb.Kernels, "\n") }
	if !strings.Contains(words(def), "moe_tp 4 moe_ep 1 power_law_1.2") || !strings.Contains(words(balanced), "moe_tp 4 moe_ep 1 balanced") {
		t.Fatalf("kernels do not name the distribution:\n%s\n---\n%s", words(def), words(balanced))
	}
	// At 32 tokens every one of the 256 experts holds a token when balanced, far fewer under
	// the power law: the measured rows cost 1.73× (TRT-LLM FP8 block-scale, B200 0.24.0).
	i := int(axisPos(32))
	if r := balanced.MoE.Values[i] / def.MoE.Values[i]; r < 1.6 || r > 1.9 {
		t.Errorf("balanced experts at 32 tokens cost %.2f× the power law's, want about 1.73×", r)
	}
	// narrow_independent: the 32-token step (the sampler's narrow range) a third of the way to
	// the balanced row, 64 tokens as measured.
	ni := load(NarrowIndependent)
	if r := ni.MoE.Values[i] / def.MoE.Values[i]; r < 1.2 || r > 1.3 {
		t.Errorf("narrow_independent experts at 32 tokens cost %.2f× the power law's, want about 1.24×", r)
	}
	if j := int(axisPos(64)); ni.MoE.Values[j] != def.MoE.Values[j] {
		t.Errorf("narrow_independent moved the 64-token experts: %.1f against %.1f µs", ni.MoE.Values[j], def.MoE.Values[j])
	}
	if !strings.Contains(words(ni), "moe_ep 1 narrow_independent") {
		t.Errorf("kernels do not name narrow_independent:\n%s", words(ni))
	}
	balanced.MoE, balanced.Kernels, def.Kernels = def.MoE, nil, nil
	if !reflect.DeepEqual(def, balanced) {
		t.Error("the distribution changed more than the experts")
	}
	o := DefaultImportOptions()
	o.MoE.Distribution = "zipf"
	if _, err := Import(dir, o); err == nil || !strings.Contains(err.Error(), `"zipf"`) {
		t.Fatalf("unknown distribution: %v", err)
	}
}

// A config.json with a UTF-8 byte-order mark (an editor's save) reads as without one, as
// YAML experiments and traces do.
func TestLLMSpecAcceptsAByteOrderMark(t *testing.T) {
	b := []byte(`{"model_type":"llama","num_hidden_layers":80,"hidden_size":8192,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":28672,"vocab_size":128256}`)
	plain, err := parseLLMSpec("config.json", b)
	if err != nil {
		t.Fatal(err)
	}
	bom, err := parseLLMSpec("config.json", append([]byte("\ufeff"), b...))
	if err != nil || bom != plain {
		t.Errorf("with a byte-order mark: %+v, %v; want %+v", bom, err, plain)
	}
}

func FuzzParseHFQuantConfig(f *testing.F) {
	f.Add([]byte(`{"producer":{"name":"modelopt"},"quantization":{"quant_algo":"NVFP4","kv_cache_quant_algo":"FP8","group_size":16,"exclude_modules":["lm_head","model.layers.0.self_attn.q_a_proj"]}}`))
	f.Add([]byte(`{"quantization":{}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := parseHFQuantConfig("hf_quant_config.json", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model import: hf_quant_config.json: ") {
				t.Fatalf("error without file name: %v", err)
			}
			return
		}
		if q.Method != "modelopt" || q.QuantAlgo == "" {
			t.Fatalf("accepted a quantisation without its algorithm: %+v", q)
		}
	})
}

// TestHFQuantConfigNamesTheCheckpoint: NVIDIA's NVFP4 DeepSeek checkpoint keeps its
// quantisation in hf_quant_config.json; read with config.json it is NVFP4 with BF16 attention,
// without it BF16 throughout.
func TestHFQuantConfigNamesTheCheckpoint(t *testing.T) {
	cfg := []byte(`{"model_type":"deepseek_v3","num_hidden_layers":61,"hidden_size":7168,"num_attention_heads":128,"num_key_value_heads":128,"intermediate_size":18432,"moe_intermediate_size":2048,"n_routed_experts":256,"n_shared_experts":1,"num_experts_per_tok":8,"first_k_dense_replace":3,"kv_lora_rank":512,"q_lora_rank":1536,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"vocab_size":129280}`)
	q, err := parseHFQuantConfig("hf.json", []byte(`{"quantization":{"quant_algo":"NVFP4","exclude_modules":["lm_head","model.layers.0.self_attn.kv_b_proj"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	with, err := parseLLMSpecWith("config.json", cfg, q)
	if err != nil {
		t.Fatal(err)
	}
	without, err := parseLLMSpec("config.json", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if with.WeightQuant != "nvfp4" || with.AttentionQuant != "bfloat16" || without.WeightQuant != "bfloat16" {
		t.Fatalf("with hf_quant_config %s (attention %s), without %s; want nvfp4 (bfloat16) and bfloat16", with.WeightQuant, with.AttentionQuant, without.WeightQuant)
	}
}

// TestNVFP4OutputProjection: an NVFP4 checkpoint whose exclusions name MLA's down- and
// up-projections but not o_proj (DeepSeek-V3.1-NVFP4, DeepSeek-R1-0528-FP4-v2) serves o_proj in
// NVFP4; one excluding o_proj by name or the whole self_attn by wildcard (GLM-5-NVFP4,
// Kimi-K2.5-NVFP4) keeps it in BF16, as TensorRT-LLM's fnmatch of exclude_modules decides.
func TestNVFP4OutputProjection(t *testing.T) {
	cfg := []byte(`{"model_type":"deepseek_v3","num_hidden_layers":61,"hidden_size":7168,"num_attention_heads":128,"num_key_value_heads":128,"intermediate_size":18432,"moe_intermediate_size":2048,"n_routed_experts":256,"n_shared_experts":1,"num_experts_per_tok":8,"first_k_dense_replace":3,"kv_lora_rank":512,"q_lora_rank":1536,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"vocab_size":129280}`)
	for _, c := range []struct {
		exclude, oProj string
	}{
		{`"model.layers.0.self_attn.kv_b_proj","model.layers.0.self_attn.q_b_proj"`, "nvfp4"},
		{`"model.layers.0.self_attn.kv_b_proj","model.layers.0.self_attn.o_proj"`, ""},
		{`"model.layers.*.self_attn.o_proj"`, ""},
		{`"model.layers.0.self_attn*"`, ""},
		{`"language_model.model.layers.7.self_attn*"`, ""},
		{`"model.layers.0.self_attn.indexer*","model.layers.0.self_attn.kv_a_proj_with_mqa"`, "nvfp4"},
	} {
		q, err := parseHFQuantConfig("hf.json", []byte(`{"quantization":{"quant_algo":"NVFP4","exclude_modules":["lm_head",`+c.exclude+`]}}`))
		if err != nil {
			t.Fatal(err)
		}
		s, err := parseLLMSpecWith("config.json", cfg, q)
		if err != nil {
			t.Fatal(err)
		}
		if s.AttentionQuant != "bfloat16" || s.OProjQuant != c.oProj || s.oProjQuant("nvfp4") != cmp.Or(c.oProj, "bfloat16") {
			t.Errorf("exclude %s: attention %q, o_proj %q (served %q); want bfloat16, %q", c.exclude, s.AttentionQuant, s.OProjQuant, s.oProjQuant("nvfp4"), c.oProj)
		}
	}
}
