package model

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The fused all-reduce + add + RMSNorm takes both of a layer's add + RMSNorm kernels out of
// steps of at most vLLM's FlashInfer workspace size (per GPU family and TP size, or the run's
// override) and leaves larger steps, one GPU, the dynosim reference and the switch off as
// they were.
func TestAllReduceRMSFusion(t *testing.T) {
	d := SeedDeployment()
	d.ModelName, d.HardwareSKU, d.Quantization, d.TP, d.MoETP, d.MoEEP = "moonshotai/Kimi-K2.5", "b200_sxm", "nvfp4", 4, 1, 4
	d.MaxCUDAGraphCaptureSize = 4096
	worker := func(d Deployment) *Worker {
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	off := worker(d)
	d.FuseAllReduceRMS = true
	on := worker(d)
	tb := on.Table()
	// SM 10.0 at TP 4: 32 MiB / (7,168 × 2 B) = 2,340 tokens.
	if n := d.AllReduceRMSFusionTokens(tb); n != 2340 {
		t.Fatalf("fused up to %d tokens, want 2340", n)
	}
	nonAttention := func(w *Worker, tokens int) float64 {
		return w.Breakdown(&Batch{Decodes: tokens, DecodeContextTokens: int64(tokens)}).NonAttentionUS
	}
	for _, node := range []int{0, 8, 32, 44} { // 1, 4, 256, 2,048 tokens: fused
		tokens := axisNode(node)
		norm := tb.GPU.MemConstantUS + tokens*4*7168*2/(tb.GPU.MemBW*tb.GPU.MemBWScaling)*1e6
		if got, want := nonAttention(off, int(tokens))-nonAttention(on, int(tokens)), 2*61*norm; math.Abs(got-want) > 1e-6 {
			t.Fatalf("%g tokens: fusion saves %g µs, want 2 × 61 layers × %g µs", tokens, got, want)
		}
	}
	if a, b := nonAttention(off, 4096), nonAttention(on, 4096); a != b {
		t.Fatalf("4,096 tokens (above the workspace): %g µs fused, %g unfused", b, a)
	}
	// The run's threshold wins: 1 MiB is 73 tokens.
	d.AllReduceFusionMaxMB = 1
	if n := d.AllReduceRMSFusionTokens(tb); n != 73 {
		t.Fatalf("1 MiB: fused up to %d tokens, want 73", n)
	}
	if a, b := nonAttention(off, 128), nonAttention(worker(d), 128); a != b {
		t.Fatalf("128 tokens above a 1 MiB workspace: %g µs fused, %g unfused", b, a)
	}
	for _, c := range []struct {
		sku    string
		tp     int
		tokens int
	}{{"h200_sxm", 8, 36}, {"h200_sxm", 4, 146}, {"b200_sxm", 8, 73}, {"b300_sxm", 8, 73}, {"b200_sxm", 2, 4681}, {"b200_sxm", 1, 0}, {"a100_sxm", 4, 0}} {
		e := Deployment{FuseAllReduceRMS: true, TP: c.tp}
		tc := &Table{HardwareSKU: c.sku, LLM: LLMSpec{Hidden: 7168, ActivationBytes: 2}}
		if n := e.AllReduceRMSFusionTokens(tc); n != c.tokens {
			t.Fatalf("%s TP %d: fused up to %d tokens, want %d", c.sku, c.tp, n, c.tokens)
		}
	}
	d.TimingReference, d.AsyncScheduling = ReferenceDynosim, false
	if n := d.AllReduceRMSFusionTokens(tb); n != 0 {
		t.Fatalf("dynosim fuses %d tokens, want none (AIConfigurator's unfused ops)", n)
	}
	d.TimingReference, d.AllReduceFusionMaxMB = "", -1
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "all-reduce fusion") {
		t.Fatalf("a negative fusion threshold: %v", err)
	}
}

// gpuSMVersion agrees with AIConfigurator's system files.
func TestGPUSMVersions(t *testing.T) {
	dir := sharedAIC
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("../shared/aic absent (%v): the system files are not available", err)
	}
	re := regexp.MustCompile(`(?m)^\s*sm_version:\s*(\d+)`)
	for sku, want := range gpuSMVersion {
		b, err := os.ReadFile(filepath.Join(dir, sku+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		m := re.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s.yaml: no gpu.sm_version", sku)
		}
		if got, _ := strconv.Atoi(string(m[1])); got != want {
			t.Fatalf("%s: sm_version %d in the system file, %d in gpuSMVersion", sku, got, want)
		}
	}
}

// vLLM's -O2 default for the fusion (enable_allreduce_rms_fusion) by release, GPU and layout.
func TestVLLMFusesAllReduceRMS(t *testing.T) {
	for _, c := range []struct {
		version, sku string
		tp, dp       int
		want         bool
	}{
		{"0.19.0", "b200_sxm", 4, 1, true},
		{"0.19.0", "b200_sxm", 1, 1, false}, // nothing to reduce
		{"0.19.0", "b200_sxm", 4, 4, false}, // data parallel: vllm#34392 until vllm#41458
		{"0.18.0", "h200_sxm", 8, 1, true},  // the 0.18 fusion guide
		{"0.18.0", "h100_sxm", 2, 1, true},
		{"0.17.0", "b200_sxm", 4, 1, false}, // before the first release documented fusing
		{"0.15.1", "b200_sxm", 4, 1, false},
		{"0.12.0", "h100_sxm", 4, 1, false}, // 0.14.1's -O2 still off
		{"0.19.0", "b300_sxm", 4, 1, true},  // SM 10.3 from vllm#37755
		{"0.18.0", "b300_sxm", 4, 1, false},
		{"nightly-5b8c30d62b754b57", "b200_sxm", 2, 1, true},
	} {
		if got := VLLMFusesAllReduceRMS(c.version, c.sku, c.tp, c.dp); got != c.want {
			t.Errorf("vLLM %s on %s tp %d dp %d: %v, want %v", c.version, c.sku, c.tp, c.dp, got, c.want)
		}
	}
}
