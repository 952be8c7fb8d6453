package model

import (
	"math"
	"strings"
	"testing"
)

// TestStaticFP8Overhead: a quantisation table is read at a measured k as measured, between two
// measured k linearly in k, above the largest at its latency per element of k, and a k below
// every measured one is an error naming the table.
func TestStaticFP8Overhead(t *testing.T) {
	rows := []quantRow{
		{M: 1, K: 1024, Dtype: "fp8", Latency: 0.008}, {M: 64, K: 1024, Dtype: "fp8", Latency: 0.010},
		{M: 1, K: 4096, Dtype: "fp8", Latency: 0.011}, {M: 64, K: 4096, Dtype: "fp8", Latency: 0.019},
		{M: 1, K: 2048, Dtype: "fp16", Latency: 1}, // another dtype: ignored
	}
	for _, c := range []struct {
		k    int
		m    float64
		want float64
	}{
		{1024, 1, 8}, {1024, 64, 10}, {4096, 64, 19},
		{2048, 1, 9},    // a third of the way from 1,024 to 4,096
		{8192, 64, 38},  // above 4,096: × 2
		{1024, 32.5, 9}, // between the measured m
		{1024, 0.5, 8},  // below the first m: its latency
		{3072, 64, 16},  // two thirds of the way
	} {
		f, err := overhead(rows, "computescale_perf.parquet", c.k)
		if err != nil {
			t.Fatal(err)
		}
		if got := f(c.m); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("k %d m %g: %g µs, want %g", c.k, c.m, got, c.want)
		}
	}
	if _, err := overhead(rows, "computescale_perf.parquet", 512); err == nil || !strings.Contains(err.Error(), "computescale_perf.parquet") {
		t.Errorf("k below every measured k: %v, want an error naming the table", err)
	}
}

// TestStaticFP8GEMM: a row of the dynamic path less compute_scale, less scale_matrix too for an
// FP8 input, and never below the weights' read at the memory bandwidth.
func TestStaticFP8GEMM(t *testing.T) {
	q := &staticFP8{
		computeScale: []quantRow{{M: 1, K: 1024, Dtype: "fp8", Latency: 0.008}, {M: 8, K: 1024, Dtype: "fp8", Latency: 0.008}},
		scaleMatrix:  []quantRow{{M: 1, K: 1024, Dtype: "fp8", Latency: 0.0025}, {M: 8, K: 1024, Dtype: "fp8", Latency: 0.0025}},
		memBW:        8e12,
	}
	row := func(float64) float64 { return 20 }
	for _, c := range []struct {
		n        int
		fp8Input bool
		want     float64
	}{
		{8192, false, 12}, {8192, true, 9.5},
		{131072, true, 131072 * 1024 / 8e12 * 1e6}, // 16.8 µs of weights: the floor
	} {
		g, err := q.gemm(row, c.n, 1024, c.fp8Input)
		if err != nil {
			t.Fatal(err)
		}
		if got := g(4); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("n %d FP8 input %v: %g µs, want %g", c.n, c.fp8Input, got, c.want)
		}
	}
}

// TestTRTLLMFP8Inputs pins which GEMMs of a per-tensor FP8 layer TensorRT-LLM feeds FP8: o_proj
// (the attention's out_scale) and down_proj (SwiGLU's quantisation) always, qkv and gate_up
// only behind the all-reduce that fuses RMSNorm and the FP8 quantisation (Llama at TP > 1).
// The embedded Llama-3.1-70B FP8 tables (ModelOpt's static scales) say so; the NVFP4 one, vLLM's
// and TensorRT-LLM's Qwen3-32B FP8 (its checkpoint unpublished) price the fp8 rows as measured.
func TestTRTLLMFP8Inputs(t *testing.T) {
	if got := trtllmFP8Inputs(fusedElementwise(BackendTRTLLM, "llama", 8192, 1)); got != (fp8Inputs{oProj: true, down: true}) {
		t.Errorf("Llama at TP 1: %+v, want o_proj and down only", got)
	}
	if got := trtllmFP8Inputs(fusedElementwise(BackendTRTLLM, "llama", 8192, 8)); got != (fp8Inputs{qkv: true, oProj: true, gateUp: true, down: true}) {
		t.Errorf("Llama at TP 8: %+v, want every GEMM", got)
	}
	if f := fusedElementwise(BackendTRTLLM, "llama", 4096, 8); f.normInAllReduce {
		t.Errorf("Llama-3.1-8B (hidden 4,096) at TP 8: %+v, want its add + RMSNorm outside the all-reduce (TensorRT-LLM#6205)", f)
	}
	line := func(tb *Table) string {
		for _, k := range tb.Kernels {
			if strings.HasPrefix(k, "fp8_static GEMMs") {
				return k
			}
		}
		return ""
	}
	for name, want := range map[string]string{
		"llama-3.1-70b_b200_sxm_trtllm-1.2.0rc5_tp1-adp1-moetp1-moeep1_fp8.json.gz":   "qkv: BF16, quantised with the static scale, o_proj: FP8, gate_up: BF16, quantised with the static scale, down: FP8",
		"llama-3.1-70b_h200_sxm_trtllm-1.2.0rc5_tp8-adp1-moetp8-moeep1_fp8.json.gz":   "qkv: FP8, o_proj: FP8, gate_up: FP8, down: FP8",
		"llama-3.1-70b_b200_sxm_trtllm-1.2.0rc5_tp4-adp1-moetp4-moeep1_nvfp4.json.gz": "",
		"llama-3.1-70b_b200_sxm_vllm-0.19.0_tp4-adp1-moetp4-moeep1_fp8.json.gz":       "",
		"qwen3-32b_h100_sxm_trtllm-1.2.0rc5_tp4-adp1-moetp4-moeep1_fp8.json.gz":       "",
	} {
		got := line(embeddedTable(t, name))
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want it to name %q", name, got, want)
		}
	}
}

// TestReadStaticFP8: only the fp8_static mode reads the quantisation tables; under another
// backend it is an error naming the mode, and a missing table is an error naming its path.
func TestReadStaticFP8(t *testing.T) {
	var srcs []Source
	if q, err := readStaticFP8(t.TempDir(), "b200_sxm", BackendTRTLLM, trtllmVersion, "fp8", GPUSpec{}, &srcs); q != nil || err != nil {
		t.Errorf("fp8 (dynamic scales): %v, %v; want nothing read", q, err)
	}
	if _, err := readStaticFP8(t.TempDir(), "b200_sxm", BackendVLLM, "0.19.0", gemmFP8Static, GPUSpec{}, &srcs); err == nil || !strings.Contains(err.Error(), "fp8_static") {
		t.Errorf("fp8_static under vLLM: %v, want an error naming the mode", err)
	}
	_, err := readStaticFP8(t.TempDir(), "b200_sxm", BackendTRTLLM, trtllmVersion, gemmFP8Static, GPUSpec{}, &srcs)
	if err == nil || !strings.Contains(err.Error(), "computescale_perf.parquet") {
		t.Errorf("no quantize tables: %v, want an error naming the missing file", err)
	}
}
