package model

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseBackend(t *testing.T) {
	for in, want := range map[string]Backend{"": BackendVLLM, "vllm": BackendVLLM, "sglang": BackendSGLang, "trtllm": BackendTRTLLM} {
		if got, err := ParseBackend(in); err != nil || got != want {
			t.Errorf("ParseBackend(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseBackend("tensorrt"); err == nil || !strings.Contains(err.Error(), "vllm, sglang, trtllm") {
		t.Errorf("ParseBackend(tensorrt): %v, want the supported list", err)
	}
	if Backend("").OrDefault() != BackendVLLM || BackendSGLang.OrDefault() != BackendSGLang {
		t.Error("OrDefault: want vllm for unset, the backend otherwise")
	}
}

// The layout rules of AIConfigurator's backend filters, each one refused with its reason.
func TestCheckLayout(t *testing.T) {
	for _, c := range []struct {
		b      Backend
		l      Layout
		epOnly bool
		want   string // "" runs
	}{
		{BackendTRTLLM, Layout{TP: 2, AttentionDP: 2, MoETP: 1, MoEEP: 4}, false, "tp 1 only"},
		{BackendTRTLLM, Layout{TP: 1, AttentionDP: 4, MoETP: 1, MoEEP: 4}, false, ""},
		{BackendVLLM, Layout{TP: 4, AttentionDP: 1, MoETP: 2, MoEEP: 2}, false, "not both"},
		{"", Layout{TP: 4, AttentionDP: 1, MoETP: 2, MoEEP: 2}, false, "not both"},
		{BackendSGLang, Layout{TP: 4, AttentionDP: 1, MoETP: 2, MoEEP: 2}, false, ""},
		{BackendSGLang, Layout{TP: 4, AttentionDP: 1, MoETP: 2, MoEEP: 2}, true, "moe_tp 1"},
		{BackendSGLang, Layout{TP: 4, AttentionDP: 1, MoETP: 1, MoEEP: 4}, true, ""},
	} {
		err := c.b.CheckLayout(c.l, c.epOnly)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %s (EP-only MoE %v): %v, want %q", c.b, c.l, c.epOnly, err, c.want)
		}
	}
	d := SeedDeployment()
	d.MoETP, d.MoEEP = 2, 2
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "backend vllm") {
		t.Errorf("vLLM seed at moe_tp 2 × moe_ep 2: %v, want the rule", err)
	}
	d.Backend = "tgi"
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "vllm, sglang, trtllm") {
		t.Errorf("backend tgi: %v", err)
	}
}

// Each backend's tables are read from its own rows with its own kernel choices: SGLang's
// all-reduce measured under and without CUDA graphs, TensorRT-LLM's once; the seed's experts
// as each engine runs them; and TRT-LLM's RoPE, KV write and (Llama at TP > 1) add + RMSNorm
// inside other kernels, so its element-wise work is below vLLM's on the same model and GPU.
func TestBackendKernelChoices(t *testing.T) {
	sg := embeddedTable(t, "minimax-m2.5_b200_sxm_sglang-0.5.9_tp4-adp1-moetp1-moeep4.json.gz")
	trt := embeddedTable(t, "minimax-m2.5_b200_sxm_trtllm-1.2.0rc5_tp4-adp1-moetp1-moeep4.json.gz")
	if sg.MoEKernel != "sglang_fused_moe_triton" || trt.MoEKernel != "deepgemm" {
		t.Errorf("seed experts: SGLang %q, TRT-LLM %q; want the Triton fused MoE and DeepGEMM", sg.MoEKernel, trt.MoEKernel)
	}
	if len(sg.CollectiveEager.Values) == 0 || len(trt.CollectiveEager.Values) != 0 {
		t.Errorf("eager all-reduce grids: SGLang %d values, TRT-LLM %d; want SGLang's measured, none for TRT-LLM", len(sg.CollectiveEager.Values), len(trt.CollectiveEager.Values))
	}
	v := embeddedTable(t, "llama-3.1-70b_b200_sxm_vllm-0.19.0_tp4-adp1-moetp4-moeep1_fp8.json.gz")
	tr := embeddedTable(t, "llama-3.1-70b_b200_sxm_trtllm-1.2.0rc5_tp4-adp1-moetp4-moeep1_fp8.json.gz")
	for i := range v.Elementwise.Values {
		if tr.Elementwise.Values[i] >= v.Elementwise.Values[i] {
			t.Fatalf("Llama 70B TP 4 element-wise at node %d: TRT-LLM %g µs, vLLM %g; want TRT-LLM below", i, tr.Elementwise.Values[i], v.Elementwise.Values[i])
		}
	}
	d := SeedDeployment()
	d.Backend, d.BackendVersion = BackendSGLang, BackendSGLang.EmbeddedVersion()
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	// SGLang graphs decode-only steps: a 64-token step holding a prefill chunk pays the eager
	// all-reduce, a 64-request decode step the graph one.
	mixed := w.Breakdown(&Batch{Prefill: []Chunk{{NewTokens: 32}}, Decodes: 32, DecodeContextTokens: 32 * 1024})
	decode := w.Breakdown(&Batch{Decodes: 64, DecodeContextTokens: 64 * 1024})
	if mixed.Operators.AllReduceUS <= decode.Operators.AllReduceUS {
		t.Errorf("SGLang 64-token steps: mixed all-reduce %g µs, decode-only %g; want the mixed one eager (dearer)", mixed.Operators.AllReduceUS, decode.Operators.AllReduceUS)
	}
	if d.CUDAGraphMaxTokens() != 512 {
		t.Errorf("SGLang on B200 at TP 4: graphs up to %d, want cuda_graph_max_bs 512", d.CUDAGraphMaxTokens())
	}
}

// TestTRTLLMExpertKernels pins which TensorRT-LLM expert rows price each checkpoint: the table
// each collection holds for the kernel the engine runs (backendkernels.go).
func TestTRTLLMExpertKernels(t *testing.T) {
	for _, c := range []struct {
		sku, quant            string
		mla                   bool
		source, version, rows string
	}{
		{"h200_sxm", "fp8_block", true, "moe_torch_flow", "", "fp8_block"},          // CUTLASS, H200's legacy label
		{"h100_sxm", "fp8_block", false, "moe_torch_flow_cutlass", "", "fp8_block"}, // CUTLASS
		{"b200_sxm", "fp8_block", true, "deepgemm", "1.3.0rc10", "fp8_block"},       // DeepSeek's shape on 8 GPUs
		{"b200_sxm", "fp8_block", false, "deepgemm", "", "fp8_block"},
		{"b200_sxm", "nvfp4", true, "moe_torch_flow_cutlass", "", "nvfp4"},
		{"h200_sxm", "w4a16_mxfp4", false, "moe_torch_flow", "", "w4a16_mxfp4"},               // Hopper: every layout at 1.2.0rc5
		{"b200_sxm", "w4a16_mxfp4", false, "moe_torch_flow", "1.3.0rc10", "w4a8_mxfp4_mxfp8"}, // Blackwell: MXFP8 activations
	} {
		mk, err := backendMoEKernel(BackendTRTLLM, "", c.sku, trtllmVersion, c.quant, c.mla)
		if err != nil || mk.Source != c.source || mk.Version != c.version || mk.Quant != c.rows {
			t.Errorf("%s %s (mla %v): %s %q at %q, %v; want %s %q at %q", c.sku, c.quant, c.mla, mk.Quant, mk.Source, mk.Version, err, c.rows, c.source, c.version)
		}
	}
	for name, kernel := range map[string]string{
		"deepseek-r1_h200_sxm_trtllm-1.2.0rc5_tp8-adp1-moetp8-moeep1.json.gz":         "moe_torch_flow",
		"deepseek-r1_b200_sxm_trtllm-1.2.0rc5_tp8-adp1-moetp1-moeep8.json.gz":         "deepgemm",
		"deepseek-v3_b200_sxm_trtllm-1.2.0rc5_tp4-adp1-moetp4-moeep1_nvfp4.json.gz":   "moe_torch_flow_cutlass",
		"gpt-oss-120b_h200_sxm_trtllm-1.2.0rc5_tp4-adp1-moetp4-moeep1.json.gz":        "moe_torch_flow",
		"qwen3-235b-a22b-fp8_h100_sxm_trtllm-1.2.0rc5_tp8-adp1-moetp1-moeep8.json.gz": "moe_torch_flow_cutlass",
	} {
		if got := embeddedTable(t, name).MoEKernel; got != kernel {
			t.Errorf("%s: experts from %q, want %q", name, got, kernel)
		}
	}
}

// TestTRTLLMGenExperts pins the rows that price TensorRT-LLM's moe_config.backend TRTLLM
// (TRTLLM-Gen): NVFP4 from the TRT-LLM collector's min-latency rows, block-FP8 from vLLM
// 0.24.0's rows of the same FlashInfer TRT-LLM kernel; Blackwell only, TensorRT-LLM only. A
// deployment that names the backend gets its own table; one that does not, the CUTLASS one.
func TestTRTLLMGenExperts(t *testing.T) {
	for _, c := range []struct {
		quant, source, version string
		backend                Backend
	}{
		{"nvfp4", "moe_torch_flow_min_latency", "", ""},
		{"fp8_block", trtllmMoEKernel, "0.24.0", BackendVLLM},
	} {
		mk, err := backendMoEKernel(BackendTRTLLM, MoEBackendTRTLLM, "b200_sxm", trtllmVersion, c.quant, true)
		if err != nil || mk.Source != c.source || mk.Version != c.version || mk.Backend != c.backend || mk.Quant != c.quant {
			t.Errorf("TRTLLM backend, %s: %+v, %v; want %s at %q %q", c.quant, mk, err, c.source, c.backend, c.version)
		}
	}
	for _, c := range []struct {
		b   Backend
		sku string
	}{{BackendTRTLLM, "h200_sxm"}, {BackendSGLang, "b200_sxm"}, {BackendVLLM, "b200_sxm"}} {
		if _, err := backendMoEKernel(c.b, MoEBackendTRTLLM, c.sku, "", "nvfp4", true); err == nil {
			t.Errorf("%s on %s with moe_config.backend TRTLLM: no error", c.b, c.sku)
		}
	}
	d := SeedDeployment()
	d.ModelName, d.Backend, d.BackendVersion, d.Quantization = "deepseek-ai/DeepSeek-R1", BackendTRTLLM, trtllmVersion, "nvfp4"
	d.TP, d.MoETP, d.MoEEP = 8, 8, 1
	for moe, kernel := range map[string]string{"": "moe_torch_flow_cutlass", MoEBackendTRTLLM: "moe_torch_flow_min_latency"} {
		d.MoEBackend = moe
		tb, err := loadTable(d)
		if err != nil || tb.MoEKernel != kernel || tb.MoEBackend != moe {
			t.Errorf("DeepSeek-R1 NVFP4 B200 TP 8, MoE backend %q: table %v, %v; want experts from %s", moe, tb != nil && err == nil, err, kernel)
		}
	}
	d.HardwareSKU, d.Quantization, d.MoEBackend = "h200_sxm", "", MoEBackendTRTLLM
	if _, err := loadTable(d); err == nil || !strings.Contains(err.Error(), "MoE backend TRTLLM") {
		t.Errorf("DeepSeek-R1 on H200 under moe_config.backend TRTLLM: %v; want no table, naming the MoE backend", err)
	}
}

// TestSGLangFlashInferTRTLLMExperts pins the rows that price SGLang's --moe-runner-backend
// flashinfer_trtllm: NVFP4 experts on Blackwell from SGLang 0.5.14's own rows of that runner
// (0.5.9 measures NVFP4 only under CuteDSL); any other runner, GPU or expert dtype is an error.
// The DeepSeek NVFP4 deployment that names the runner gets its table on B200 and B300.
func TestSGLangFlashInferTRTLLMExperts(t *testing.T) {
	for _, sku := range []string{"b200_sxm", "b300_sxm"} {
		mk, err := backendMoEKernel(BackendSGLang, MoERunnerFlashInferTRTLLM, sku, sglangVersion, "nvfp4", true)
		if err != nil || mk != (MoEKernel{Version: "0.5.14", Source: "sglang_flashinfer_trtllm_moe", Quant: "nvfp4"}) {
			t.Errorf("%s: %+v, %v; want SGLang 0.5.14's sglang_flashinfer_trtllm_moe nvfp4 rows", sku, mk, err)
		}
	}
	for _, c := range []struct{ runner, sku, quant string }{
		{"cutlass", "b200_sxm", "nvfp4"},
		{MoERunnerFlashInferTRTLLM, "h200_sxm", "nvfp4"},
		{MoERunnerFlashInferTRTLLM, "b200_sxm", "fp8_block"},
	} {
		if mk, err := backendMoEKernel(BackendSGLang, c.runner, c.sku, sglangVersion, c.quant, true); err == nil {
			t.Errorf("SGLang runner %q on %s, %s experts: %+v, no error", c.runner, c.sku, c.quant, mk)
		}
	}
	d := SeedDeployment()
	d.ModelName, d.Backend, d.BackendVersion, d.Quantization = "deepseek-ai/DeepSeek-V3", BackendSGLang, sglangVersion, "nvfp4"
	d.TP, d.MoETP, d.MoEEP, d.MoEBackend = 8, 1, 8, MoERunnerFlashInferTRTLLM
	for _, sku := range []string{"b200_sxm", "b300_sxm"} {
		d.HardwareSKU = sku
		tb, err := loadTable(d)
		if err != nil || tb.MoEKernel != "sglang_flashinfer_trtllm_moe" || tb.MoEBackend != MoERunnerFlashInferTRTLLM {
			t.Errorf("DeepSeek-V3 NVFP4 %s TEP 8 under flashinfer_trtllm: table %v, %v", sku, tb != nil && err == nil, err)
		}
	}
}

// TestSGLangFusedSharedExperts pins where SGLang folds DeepSeek's shared expert into the fused
// MoE kernel: DeepseekV3ForCausalLM's 256 experts under the Triton runner with the experts not
// spread over ranks; not under FlashInfer's TRT-LLM runner (server_args turns the fusion off),
// not with moe_ep > 1, not for GLM-5 or under another backend. The embedded H200 tables then
// price no shared-expert GEMMs and their experts above the routed rows alone; B200's keep them.
func TestSGLangFusedSharedExperts(t *testing.T) {
	ds := LLMSpec{Architecture: "deepseek_v3", Experts: 256, TopK: 8, ExpertInter: 2048, SharedInter: 2048}
	triton := MoEKernel{Source: sglangTritonMoE, Quant: "fp8_block"}
	tp8, tep8 := Layout{TP: 8, AttentionDP: 1, MoETP: 8, MoEEP: 1}, Layout{TP: 8, AttentionDP: 1, MoETP: 1, MoEEP: 8}
	glm := ds
	glm.Architecture = "glm_moe_dsa"
	for _, c := range []struct {
		what string
		b    Backend
		s    LLMSpec
		mk   MoEKernel
		l    Layout
		want int
	}{
		{"DeepSeek, Triton, TP 8", BackendSGLang, ds, triton, tp8, 1},
		{"DeepSeek, Triton, experts over 8 ranks", BackendSGLang, ds, triton, tep8, 0},
		{"DeepSeek, FlashInfer TRT-LLM runner", BackendSGLang, ds, MoEKernel{Backend: BackendVLLM, Version: "0.24.0", Source: trtllmMoEKernel, Quant: "fp8_block"}, tp8, 0},
		{"GLM-5", BackendSGLang, glm, triton, tp8, 0},
		{"TensorRT-LLM", BackendTRTLLM, ds, triton, tp8, 0},
	} {
		if got := sglangFusedSharedExperts(c.b, c.s, c.mk, c.l); got != c.want {
			t.Errorf("%s: %d fused shared experts, want %d", c.what, got, c.want)
		}
	}
	d := SeedDeployment()
	d.ModelName, d.Backend, d.BackendVersion, d.Quantization = "deepseek-ai/DeepSeek-V3", BackendSGLang, sglangVersion, ""
	d.TP, d.MoETP, d.MoEEP = 8, 8, 1
	for sku, fused := range map[string]bool{"h200_sxm": true, "b200_sxm": false} {
		d.HardwareSKU = sku
		tb, err := loadTable(d)
		if err != nil {
			t.Fatalf("DeepSeek-V3 SGLang TP 8 on %s: %v", sku, err)
		}
		words := strings.Join(tb.Extrapolated, "; ")
		if (tb.SharedExperts.Values == nil) != fused || strings.Contains(words, "fuses the shared expert") != fused {
			t.Errorf("%s: shared-expert grid %v, fusion named %v; want fused %v", sku, tb.SharedExperts.Values != nil, strings.Contains(words, "fuses the shared expert"), fused)
		}
	}
}

// TestSGLangDualStreamSharedExperts pins SGLang's second stream for DeepSeek's unfused shared
// expert (DeepseekV2MoE.forward_normal_dual_stream): up to 1,024 tokens a step pays the
// longer of the shared expert and the gate with the routed experts, above it both in series;
// TensorRT-LLM's DeepSeek layers stay in series, and a model of another MoE layer has none.
func TestSGLangDualStreamSharedExperts(t *testing.T) {
	d := SeedDeployment()
	d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion, d.Quantization = "deepseek-ai/DeepSeek-V3", "b200_sxm", BackendSGLang, sglangVersion, ""
	d.TP, d.MoETP, d.MoEEP, d.NumGPUBlocks = 8, 8, 1, 100000
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	if got := sglangDualStreamTokens(w.table); got != 1024 {
		t.Fatalf("DeepSeek-V3 under SGLang: dual stream up to %d tokens, want 1024", got)
	}
	for _, n := range []int{4, 64, 2048} {
		o := w.Breakdown(&Batch{Prefill: []Chunk{{NewTokens: n}}}).Operators
		want := -min(o.SharedExpertsUS, o.RouterGateUS+o.ExpertsUS)
		if n > 1024 {
			want = 0
		}
		if o.SharedExpertsUS <= 0 || math.Abs(o.AdjustmentUS-want) > 1 {
			t.Errorf("%d tokens: shared experts %.0f µs, gate %.0f, routed %.0f, adjustment %.0f; want %.0f", n, o.SharedExpertsUS, o.RouterGateUS, o.ExpertsUS, o.AdjustmentUS, want)
		}
	}
	d.Backend, d.BackendVersion = BackendTRTLLM, trtllmVersion
	if w, err = NewWorker(d); err != nil {
		t.Fatal(err)
	}
	if o := w.Breakdown(&Batch{Decodes: 4, DecodeContextTokens: 4000}).Operators; o.SharedExpertsUS <= 0 || math.Abs(o.AdjustmentUS) > 1 {
		t.Errorf("TensorRT-LLM DeepSeek-V3: shared experts %.0f µs, adjustment %.0f; want them in series", o.SharedExpertsUS, o.AdjustmentUS)
	}
	if got := sglangDualStreamTokens(&Table{Backend: BackendSGLang, LLM: LLMSpec{Architecture: "qwen3_moe"}}); got != 0 {
		t.Errorf("Qwen3 MoE under SGLang: dual stream up to %d tokens, want 0", got)
	}
}

// SGLang 0.5.6.post2's and 0.5.9's Hopper tables price block-FP8 experts above 32 tokens from
// H200's 0.5.10 rows, the nearest collection that times the block-scaled Triton kernel
// (sglangBlockFP8MoEVersion), and at up to 32 tokens from their own collection's
// (sglangmoereduce.go): at 8,192 tokens Qwen3-235B's 94 layers of 0.5.10's power_law_1.2 rows
// (2.427 ms at moe_tp 2, 1.568 at moe_tp 4), not of 0.5.6.post2's per-tensor ones (1.831, 1.190).
func TestSGLangBlockFP8ExpertRows(t *testing.T) {
	const layers, tokens = 94, 8192
	for _, c := range []struct {
		name             string
		block, perTensor float64 // ms a layer at 8,192 tokens
	}{
		{"qwen3-235b-a22b-fp8_h200_sxm_sglang-0.5.6.post2_tp2-adp1-moetp2-moeep1.json.gz", 2.427288, 1.831084},
		{"qwen3-235b-a22b-fp8_h200_sxm_sglang-0.5.6.post2_tp4-adp1-moetp4-moeep1.json.gz", 1.567758, 1.190422},
	} {
		tb := embeddedTable(t, c.name)
		moe := newCurve(tb.MoE.Values, 1)
		got, want := moe.at(tokens), layers*c.block*1000
		if math.Abs(got-want) > 0.01*want {
			t.Errorf("%s: experts at %d tokens %.0f µs, want %d × %.3f ms (per-tensor rows: %.0f)", c.name, tokens, got, layers, c.block, layers*c.perTensor*1000)
		}
	}
	for _, c := range []struct{ name, own string }{
		{"qwen3-235b-a22b-fp8_h200_sxm_sglang-0.5.6.post2_tp2-adp1-moetp2-moeep1.json.gz", "0.5.6.post2"},
		{"qwen3-235b-a22b-fp8_h200_sxm_sglang-0.5.9_tp4-adp1-moetp4-moeep1.json.gz", "0.5.9"},
		{"deepseek-v3_h200_sxm_sglang-0.5.9_tp8-adp1-moetp8-moeep1.json.gz", "0.5.9"},
		{"glm-5_h200_sxm_sglang-0.5.9_tp8-adp1-moetp8-moeep1_fp8.json.gz", "0.5.9"},
	} {
		var moeRows []string
		for _, s := range embeddedTable(t, c.name).Sources {
			if strings.Contains(s.Path, "/moe/") {
				moeRows = append(moeRows, s.Path)
			}
		}
		want := []string{"h200_sxm/moe/sglang/0.5.10/moe_perf.parquet", "h200_sxm/moe/sglang/" + c.own + "/moe_perf.parquet"}
		if !slices.Equal(moeRows, want) {
			t.Errorf("%s: expert rows from %v, want %v", c.name, moeRows, want)
		}
	}
}

// sglangCompiledReduceRows keeps the block collection's rows of the kernel above 32 tokens, the
// table's own at or below, and every other kernel's rows of the block collection.
func TestSGLangCompiledReduceRows(t *testing.T) {
	mk := MoEKernel{Source: sglangTritonMoE, Quant: "fp8_block"}
	row := func(kernel string, tokens int, us float64) moeRow {
		return moeRow{Kernel: kernel, Dtype: "fp8_block", Tokens: int64(tokens), Latency: us}
	}
	block := []moeRow{row(sglangTritonMoE, 8, 80), row(sglangTritonMoE, 32, 90), row(sglangTritonMoE, 64, 150), row("other", 8, 7)}
	own := []moeRow{row(sglangTritonMoE, 8, 70), row(sglangTritonMoE, 32, 85), row(sglangTritonMoE, 64, 120), row("other", 8, 5)}
	got := sglangCompiledReduceRows(block, own, mk)
	want := []moeRow{row(sglangTritonMoE, 64, 150), row("other", 8, 7), row(sglangTritonMoE, 8, 70), row(sglangTritonMoE, 32, 85)}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}

// TestTRTLLMQwen3BlockFP8: TensorRT-LLM's Qwen3-32B tables are Qwen's block-FP8 checkpoint
// (backendImports), priced from the fp8_block GEMM rows, not the per-tensor fp8 rows whose
// dynamic scaling no loadable checkpoint runs; the TP 1 decode step at 8 requests of 1,500
// tokens is the figure docs/backend-validation.md quotes ("TRT-LLM Qwen3-32B FP8: which checkpoint").
func TestTRTLLMQwen3BlockFP8(t *testing.T) {
	for _, tp := range []int{1, 2, 4, 8} {
		name := fmt.Sprintf("qwen3-32b_h100_sxm_trtllm-1.2.0rc5_tp%d-adp1-moetp%d-moeep1_fp8.json.gz", tp, tp)
		if tb := embeddedTable(t, name); tb.GEMMQuant != "fp8_block" || tb.LLM.WeightBlock != 128 {
			t.Errorf("%s: GEMMs %s, tiles %d; want fp8_block, 128", name, tb.GEMMQuant, tb.LLM.WeightBlock)
		}
	}
	d := SeedDeployment()
	d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion = "Qwen/Qwen3-32B", "h100_sxm", BackendTRTLLM, "1.2.0rc5"
	d.Quantization, d.KVCacheDtype, d.TP, d.MoETP, d.MoEEP = "fp8", KVFP8, 1, 1, 1
	d.MaxNumSeqs, d.GPUMemoryUtilization, d.MemoryBudget = 128, 0.8, MemoryBudgetTRTLLM
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	br := w.Breakdown(&Batch{Decodes: 8, DecodeContextTokens: 8 * 1500})
	t.Logf("TP 1, 8 requests: step %d µs, GEMMs %.0f µs", br.TotalUS, br.Operators.ProjectionsUS)
	if br.TotalUS < 15750 || br.TotalUS > 16070 {
		t.Errorf("TP 1 step at 8 requests: %d µs, want the quoted 15.9 ms (per-tensor fp8 rows: 18.5 ms)", br.TotalUS)
	}
}
