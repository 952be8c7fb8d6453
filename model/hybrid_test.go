package model

import (
	"math"
	"strings"
	"testing"
)

// qwen35 is the embedded Qwen3.5-397B-A17B deployment of the B200 FP8 InferenceX run at TP 4.
func qwen35(t *testing.T, tp int, noRadix bool) Deployment {
	t.Helper()
	d := SeedDeployment()
	d.ModelName, d.Backend, d.BackendVersion, d.Quantization = "Qwen/Qwen3.5-397B-A17B", BackendSGLang, sglangVersion, "fp8"
	d.TP, d.MoETP, d.MoEEP = tp, tp, 1
	d.MaxNumSeqs, d.MaxNumBatchedTokens, d.GPUMemoryUtilization, d.MemoryBudget = 128, 32768, 0.82, MemoryBudgetSGLang
	d.NoPrefixCaching, d.ContextLength = noRadix, 2068
	return d
}

func near(got, want float64) bool { return math.Abs(got-want) < 1e-3 }

// The gated DeltaNet layers' price is the measured kernels' sum over the 45 layers (with
// prefill's unmeasured gating kernel): by hand
// from b200_sxm/linear_attention/sglang/0.5.14/gdn_perf.parquet at TP 4 (4 key, 16 value
// heads of 128, d_model 4096, d_conv 4), latencies in ms.
func TestLinearAttentionFromGDNRows(t *testing.T) {
	w, err := NewWorker(qwen35(t, 4, true))
	if err != nil {
		t.Fatal(err)
	}
	const layers = 45
	// fused_gdn_gating before each layer's chunked rule: a and b read in BF16, g and β written in
	// float32, over the step's tokens × 16 value heads, priced by its bytes and launch.
	gating := func(tokens float64) float64 { return w.table.GPU.memOpUS(tokens * 16 * (2*2 + 2*4)) }
	for _, c := range []struct {
		name string
		b    Batch
		want float64 // µs
	}{
		// causal_conv1d_update + fused_recurrent_gated_delta_rule_packed_decode at batch 1, 16
		{"1 decode", Batch{Decodes: 1, DecodeContextTokens: 1000}, layers * (0.0018905599415302277 + 0.004344640076160431) * 1000},
		{"16 decodes", Batch{Decodes: 16, DecodeContextTokens: 16000}, layers * (0.002306240051984787 + 0.007299519777297973) * 1000},
		// causal_conv1d_fn + chunk_gated_delta_rule at batch 1 and 2, seq_len 1024
		{"1 chunk of 1024", Batch{Prefill: []Chunk{{NewTokens: 1024}}}, layers * ((0.007012159824371337+0.07522496223449707)*1000 + gating(1024))},
		{"2 chunks of 1024", Batch{Prefill: []Chunk{{NewTokens: 1024}, {NewTokens: 1024}}}, layers * ((0.011144959926605224+0.0882585620880127)*1000 + gating(2048))},
		// a cached prefix is in the request's state already: only the new tokens run
		{"1 chunk of 1024 after 4096 cached", Batch{Prefill: []Chunk{{NewTokens: 1024, CachedTokens: 4096}}}, layers * ((0.007012159824371337+0.07522496223449707)*1000 + gating(1024))},
	} {
		br := w.Breakdown(&c.b)
		if !near(br.LinearAttnUS, c.want) {
			t.Errorf("%s: linear attention %.3f µs, want %.3f", c.name, br.LinearAttnUS, c.want)
		}
		sum := br.NonAttentionUS + br.LogitsUS + br.ContextAttnUS + br.DecodeAttnUS + br.LinearAttnUS
		if br.TotalUS != int64(math.Ceil(sum)) {
			t.Errorf("%s: step %d µs, parts sum to %.3f", c.name, br.TotalUS, sum)
		}
	}
	// A decode stretch prices its steps as StepTimeUS does, the DeltaNet layers included.
	out := make([]int64, 5)
	w.DecodeStepsUS(16, 16000, out)
	for j, got := range out {
		if want := w.StepTimeUS(&Batch{Decodes: 16, DecodeContextTokens: 16000 + int64(j)*16}); got != want {
			t.Fatalf("decode step %d: %d µs, StepTimeUS %d", j, got, want)
		}
	}
}

// deriveLinear on rows made up by hand: two kernels per phase, the grids their sum × layers,
// and in prefill fused_gdn_gating, here 1 µs a token (4 value heads per GPU × 12 B at 48 MB/s)
// plus a 2 µs launch.
func TestDeriveLinearSyntheticRows(t *testing.T) {
	s := LLMSpec{Hidden: 64, ActivationBytes: 2, LinearLayers: 3, LinearKeyHeads: 4, LinearKeyHeadDim: 8, LinearValueHeads: 8, LinearValueHeadDim: 8, LinearConvKernel: 4}
	tab := &Table{LLM: s, Layout: Layout{TP: 2, AttentionDP: 1, MoETP: 2, MoEEP: 1}, GPU: GPUSpec{MemBW: 48e6, MemBWScaling: 1, MemConstantUS: 2}}
	row := func(op, phase string, b, seq int64, ms float64) gdnRow {
		return gdnRow{Op: "gdn", Kernel: op, Phase: phase, Batch: b, SeqLen: seq, DModel: 64, DConv: 4, KHeads: 2, KHeadDim: 8, VHeads: 4, VHeadDim: 8, Latency: ms}
	}
	rows := []gdnRow{
		row(gdnConvPrefill, "context", 1, 1, 0.001), row(gdnConvPrefill, "context", 1, 64, 0.002),
		row(gdnRulePrefill, "context", 1, 1, 0.010), row(gdnRulePrefill, "context", 1, 64, 0.030),
		row(gdnConvDecode, "generation", 1, 1, 0.001), row(gdnConvDecode, "generation", 4, 1, 0.003),
		row(gdnRuleDecode, "generation", 1, 1, 0.002), row(gdnRuleDecode, "generation", 4, 1, 0.005),
		// another model's heads: never read
		{Kernel: gdnRuleDecode, Phase: "generation", Batch: 1, SeqLen: 1, DModel: 64, DConv: 4, KHeads: 4, KHeadDim: 8, VHeads: 8, VHeadDim: 8, Latency: 9},
	}
	if err := deriveLinear(tab, rows, "gdn_perf.parquet"); err != nil {
		t.Fatal(err)
	}
	la := tab.LinearAttention
	ctx := newSurface(la.Context.Values, la.Context.Rows, la.Context.Cols, 1, 1)
	dec := newCurve(la.Decode.Values, 1)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"prefill 1 × 1", ctx.at(1, 1), 3 * (1 + 10 + 1 + 2)},
		{"prefill 1 × 64", ctx.at(1, 64), 3 * (2 + 30 + 64 + 2)},
		{"prefill 1 × 32 (between measured)", ctx.at(1, 32), 3 * (1 + 1*31.0/63 + 10 + 20*31.0/63 + 32 + 2)},
		{"prefill 2 × 64 (beyond batch 1: linear in chunks)", ctx.at(2, 64), 3 * (2*(2+30) + 128 + 2)},
		{"decode 1", dec.at(1), 3 * (1 + 2)},
		{"decode 4", dec.at(4), 3 * (3 + 5)},
		{"decode 8 (beyond: linear)", dec.at(8), 3 * 2 * (3 + 5)},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s: %.3f µs, want %.3f", c.name, c.got, c.want)
		}
	}
	// Without the chunked rule (SGLang 0.5.9's collection) the table cannot be derived.
	err := deriveLinear(&Table{LLM: s, Layout: tab.Layout, GPU: tab.GPU}, rows[:2], "gdn_perf.parquet")
	if err == nil || !strings.Contains(err.Error(), gdnRulePrefill) {
		t.Fatalf("missing chunk_gated_delta_rule: %v", err)
	}
}

// The recurrent state's bytes and SGLang's mamba pool beside the KV cache, by hand.
func TestHybridStateBudget(t *testing.T) {
	w, err := NewWorker(qwen35(t, 4, true))
	if err != nil {
		t.Fatal(err)
	}
	s := w.Table().LLM
	// Per GPU at TP 4: the convolution window (2 × 16 × 128 + 64 × 128) / 4 = 3,072 channels ×
	// 3 positions × 2 B = 18,432 B; the temporal state 16 value heads × 128 × 128 × 4 B
	// (float32) = 1,048,576 B; × 45 DeltaNet layers = 48,015,360 B.
	if got := s.LinearStateBytesPerRequest(4); got != 48015360 {
		t.Fatalf("state %d B per request at TP 4, want 48,015,360", got)
	}
	if got := s.LinearStateBytesPerRequest(8); got != 48015360/2 {
		t.Fatalf("state %d B per request at TP 8, want half of TP 4's", got)
	}
	c := w.Capacity()
	// Radix cache off, --max-running-requests 128: exactly 128 states, 6.15 GB.
	if c.StateSlots != 128 || c.StateBytes() != 128*48015360 || c.MaxRunningRequests != 128 || c.StateBytesPerRequest != 48015360 {
		t.Fatalf("state pool %d slots, %d B, %d running", c.StateSlots, c.StateBytes(), c.MaxRunningRequests)
	}
	// KV only for the 15 full-attention layers: 15 × 2 × 1 KV head × 256 × 1 B (FP8).
	if c.KVBytesPerToken != 15*2*1*256 {
		t.Fatalf("KV %d B per token per GPU, want 7,680", c.KVBytesPerToken)
	}
	// The states come out of what SGLang's fraction leaves after the weights (MemoryBudgetSGLang).
	rest := c.KVBytes + c.StateBytes()
	if c.DerivedBlocks != int(c.KVBytes/(c.KVBytesPerToken*int64(w.d.BlockSize))) || rest <= c.StateBytes() {
		t.Fatalf("blocks %d from %d KV bytes", c.DerivedBlocks, c.KVBytes)
	}
	if txt := c.String(); !strings.Contains(txt, "recurrent states") || !strings.Contains(txt, "128 slots") || !strings.Contains(txt, "45 DeltaNet layers") {
		t.Fatalf("arithmetic text:\n%s", txt)
	}
	// Radix cache on: the states take 0.9 / 1.9 of the rest, at most a third of them run.
	wr, err := NewWorker(qwen35(t, 4, false))
	if err != nil {
		t.Fatal(err)
	}
	cr := wr.Capacity()
	slots := int(float64(rest) * 0.9 / 1.9 / 48015360)
	if cr.StateSlots != slots || cr.MaxRunningRequests != min(128, slots/3) || cr.KVBytes != rest-int64(slots)*48015360 {
		t.Fatalf("ratio pool: %d slots (want %d), %d running, KV %d B (want %d)", cr.StateSlots, slots, cr.MaxRunningRequests, cr.KVBytes, rest-int64(slots)*48015360)
	}
	// A model without linear layers holds no state.
	if c := seedWorker(t).Capacity(); c.StateSlots != 0 || c.StateBytes() != 0 || c.MaxRunningRequests != 0 {
		t.Fatalf("seed worker has a state pool: %+v", c)
	}
}

func TestMambaPoolRules(t *testing.T) {
	d := Deployment{MaxNumSeqs: 64, NoPrefixCaching: true}
	if p := mambaPool(d, 10e9, 1e6); p.slots != 64 || p.maxRunning != 64 || p.bytes() != 64e6 || p.radix {
		t.Fatalf("no radix: %+v", p)
	}
	d.NoPrefixCaching = false
	// 19 GB of rest: 9 GB of states = 9,000 slots of 1 MB, 3,000 running, capped at 64.
	if p := mambaPool(d, 19e9, 1e6); p.slots != 9000 || p.maxRunning != 64 || !p.radix {
		t.Fatalf("radix: %+v", p)
	}
	d.MaxNumSeqs = 5000
	if p := mambaPool(d, 19e9, 1e6); p.maxRunning != 3000 {
		t.Fatalf("radix, large max_num_seqs: %+v", p)
	}
	if p := mambaPool(d, -1, 1e6); p.slots != 0 || p.bytes() != 0 {
		t.Fatalf("no memory left: %+v", p)
	}
	if got := (Capacity{MaxRunningRequests: 40}).RunningLimit(128); got != 40 {
		t.Fatalf("running limit under a 40-request pool: %d", got)
	}
	if got := (Capacity{}).RunningLimit(128); got != 128 {
		t.Fatalf("running limit without a state pool: %d", got)
	}
}

const qwen35Config = `{"model_type":"qwen3_5_moe","text_config":{"model_type":"qwen3_5_moe_text","num_hidden_layers":4,"hidden_size":4096,
"num_attention_heads":32,"num_key_value_heads":2,"head_dim":256,"moe_intermediate_size":1024,"shared_expert_intermediate_size":1024,
"num_experts":512,"num_experts_per_tok":10,"vocab_size":248320,"attn_output_gate":true,"mlp_only_layers":[],
"layer_types":["linear_attention","linear_attention","linear_attention","full_attention"],
"linear_conv_kernel_dim":4,"linear_key_head_dim":128,"linear_num_key_heads":16,"linear_num_value_heads":64,"linear_value_head_dim":128,"mamba_ssm_dtype":"float32"}}`

func TestParseHybridConfig(t *testing.T) {
	s, err := parseLLMSpec("qwen3.5.json", []byte(qwen35Config))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Hybrid() || s.LinearLayers != 3 || s.FullAttentionLayers() != 1 || s.LinearKeyHeads != 16 || s.LinearValueHeads != 64 ||
		s.LinearKeyHeadDim != 128 || s.LinearValueHeadDim != 128 || s.LinearConvKernel != 4 || s.LinearStateBytes != 4 ||
		!s.AttnOutputGate || !s.QKNorm || s.Experts != 512 || s.ExpertInter != 1024 || s.SharedInter != 1024 || s.Inter != 0 {
		t.Fatalf("spec %+v", s)
	}
	bf16 := strings.Replace(qwen35Config, `"mamba_ssm_dtype":"float32"`, `"mamba_ssm_dtype":"bfloat16"`, 1)
	if s, err := parseLLMSpec("x.json", []byte(bf16)); err != nil || s.LinearStateBytes != 2 {
		t.Fatalf("bfloat16 states: %d B, %v", s.LinearStateBytes, err)
	}
	for _, c := range []struct{ edit, want string }{
		{`"linear_num_value_heads":64`, "linear_num_value_heads"},
		{`"linear_conv_kernel_dim":4`, "linear_conv_kernel_dim"},
		{`"linear_num_key_heads":16`, "linear_num_key_heads"},
		{`"mamba_ssm_dtype":"float32"`, "mamba_ssm_dtype"},
		{`"full_attention"]`, "one type per layer"},
		{`"linear_attention","linear_attention","linear_attention","full_attention"]`, "without a full_attention layer"},
	} {
		bad := strings.Replace(qwen35Config, c.edit, map[string]string{
			`"linear_num_value_heads":64`: `"linear_num_value_heads":0`,
			`"linear_conv_kernel_dim":4`:  `"linear_conv_kernel_dim":1`,
			`"linear_num_key_heads":16`:   `"linear_num_key_heads":48`,
			`"mamba_ssm_dtype":"float32"`: `"mamba_ssm_dtype":"float16"`,
			`"full_attention"]`:           `"full_attention","full_attention"]`,
			`"linear_attention","linear_attention","linear_attention","full_attention"]`: `"linear_attention","linear_attention","linear_attention","linear_attention"]`,
		}[c.edit], 1)
		_, err := parseLLMSpec("qwen3.5.json", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), "qwen3.5.json: field layer_types") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.edit, err)
		}
	}
}

// A layout must split the DeltaNet heads evenly, and only SGLang prices them.
func TestHybridLayoutAndBackend(t *testing.T) {
	s, err := parseLLMSpec("qwen3.5.json", []byte(qwen35Config))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.checkLayout(Layout{TP: 32, AttentionDP: 1, MoETP: 32, MoEEP: 1}); err == nil || !strings.Contains(err.Error(), "linear-attention heads") {
		t.Fatalf("tp 32 over 16 key heads: %v", err)
	}
	if err := s.checkLayout(Layout{TP: 8, AttentionDP: 1, MoETP: 8, MoEEP: 1}); err != nil {
		t.Fatal(err)
	}
	_, _, err = readLinearAttention("", ImportOptions{Model: "Qwen/Qwen3.5-397B-A17B", Backend: BackendVLLM}, s, nil)
	if err == nil || !strings.Contains(err.Error(), "SGLang only") {
		t.Fatalf("vLLM: %v", err)
	}
}

// The DeltaNet layer's input projections by SGLang release, on GEMM rows made up by hand
// (latency n µs whatever m): before 0.5.10 four GEMMs (in_proj_qkv, in_proj_z, in_proj_b,
// in_proj_a: sglang#21019 fused them), from 0.5.10 two (in_proj_qkvz, in_proj_ba); the BF16
// ones, narrower than any measured, at the narrowest measured n (16: 5 µs).
func TestLinearProjectionsByRelease(t *testing.T) {
	s := LLMSpec{Hidden: 64, LinearLayers: 3, LinearKeyHeads: 4, LinearKeyHeadDim: 8, LinearValueHeads: 8, LinearValueHeadDim: 8}
	var rows []gemmRow
	for _, m := range []int64{1, 64} {
		for _, nk := range [][2]int64{{96, 64}, {64, 64}, {32, 64}, {64, 32}} {
			rows = append(rows, gemmRow{Dtype: "fp8_block", M: m, N: nk[0], K: nk[1], Latency: float64(nk[0]) / 1000})
		}
		rows = append(rows, gemmRow{Dtype: unquantGEMMDtype, M: m, N: 16, K: 64, Latency: 0.005})
	}
	for _, c := range []struct {
		version string
		want    float64 // µs at 8 tokens, tp 2: key width 16, value width 32, 4 value heads per GPU
		words   string
	}{
		{"0.5.9", 64 + 32 + 5 + 5 + 64, "fp8_block in_proj_qkv n=64 k=64, fp8_block in_proj_z n=32 k=64, bfloat16 in_proj_b n=16 k=64, bfloat16 in_proj_a n=16 k=64, out_proj n=64 k=32"},
		{"0.5.10", 96 + 5 + 64, "fp8_block in_proj_qkvz n=96 k=64, bfloat16 in_proj_ba n=16 k=64, out_proj n=64 k=32"},
	} {
		var notes []string
		p, words, err := linearProjections(rows, "fp8_block", s, 2, c.version, func(n string) { notes = append(notes, n) })
		if err != nil {
			t.Fatalf("%s: %v", c.version, err)
		}
		if got := p(8); !near(got, c.want) {
			t.Errorf("%s: %.3f µs, want %.3f", c.version, got, c.want)
		}
		if !strings.Contains(words, c.words) {
			t.Errorf("%s: %q, want it to name %q", c.version, words, c.words)
		}
		if len(notes) == 0 || !strings.Contains(notes[0], "narrowest measured n=16") {
			t.Errorf("%s: notes %q, want the BF16 projection's floor", c.version, notes)
		}
	}
}

// From 0.5.10 SGLang splits the DeltaNet layer's fused input projections' outputs with one
// Triton kernel a layer (sglang#21019): the B300 BF16 TP 8 table of 0.5.10 prices the
// element-wise kernels of every step that much over 0.5.9's, and nothing else apart.
func TestQwen35SplitKernelFrom0510(t *testing.T) {
	old := embeddedTable(t, "qwen3.5-397b-a17b_b300_sxm_sglang-0.5.9_tp8-adp1-moetp8-moeep1.json.gz")
	tab := embeddedTable(t, "qwen3.5-397b-a17b_b300_sxm_sglang-0.5.10_tp8-adp1-moetp8-moeep1.json.gz")
	if old.GPU.memOpUS(1) != tab.GPU.memOpUS(1) || old.Elementwise.Cols != tab.Elementwise.Cols {
		t.Fatal("the two tables differ in memory bandwidth or token nodes: not comparable")
	}
	s := tab.LLM
	for i := range tab.Elementwise.Cols {
		tokens := axisNode(i)
		want := float64(s.LinearLayers) * tab.GPU.memOpUS(s.linearSplitBytes(tokens, 8))
		if got := tab.Elementwise.Values[i] - old.Elementwise.Values[i]; math.Abs(got-want) > 0.01 {
			t.Errorf("%g tokens: 0.5.10's element-wise kernels %.3f µs over 0.5.9's, want %.3f (45 splits)", tokens, got, want)
		}
	}
	if !sglangFusedLinearProj("0.5.10.post1") || sglangFusedLinearProj("0.5.9") {
		t.Error("the fused projections and their split are 0.5.10's and later, not 0.5.9's")
	}
}
