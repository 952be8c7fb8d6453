package model

import (
	"math"
	"testing"
)

// SGLang's DeepSeek layer runs element-wise kernels its operator tables do not hold: the q_a and
// kv_a latent RMSNorms (two streams under CUDA graphs: the longer priced) and, where the shared
// expert is not fused into the MoE kernel, the add that joins its output to the routed
// experts'. The embedded tables price them on top of the two add + RMSNorm kernels a layer and
// the embedding: the NVFP4 and FP8 B200 tables both, H200's fused-shared-expert table the
// norms alone; TensorRT-LLM's DeepSeek tables and GLM-5's latent norms (inside its measured DSA
// modules) are untouched.
func TestSGLangDeepSeekElementwise(t *testing.T) {
	for _, c := range []struct {
		name           string
		d              func(*Deployment)
		norms, addsOut bool
	}{
		{"SGLang NVFP4 TEP 8", func(d *Deployment) {
			d.Backend, d.BackendVersion, d.ModelName, d.HardwareSKU = BackendSGLang, BackendSGLang.EmbeddedVersion(), "deepseek-ai/DeepSeek-R1", "b200_sxm"
			d.Quantization, d.MoEBackend, d.TP, d.MoETP, d.MoEEP = "nvfp4", MoERunnerFlashInferTRTLLM, 8, 1, 8
		}, true, true},
		{"SGLang block-FP8 TP 8 on B200", func(d *Deployment) {
			d.Backend, d.BackendVersion, d.ModelName, d.HardwareSKU = BackendSGLang, BackendSGLang.EmbeddedVersion(), "deepseek-ai/DeepSeek-V3", "b200_sxm"
			d.TP, d.MoETP, d.MoEEP = 8, 8, 1
		}, true, true},
		{"SGLang block-FP8 TP 8 on H200 (shared expert fused)", func(d *Deployment) {
			d.Backend, d.BackendVersion, d.ModelName, d.HardwareSKU = BackendSGLang, BackendSGLang.EmbeddedVersion(), "deepseek-ai/DeepSeek-V3", "h200_sxm"
			d.TP, d.MoETP, d.MoEEP = 8, 8, 1
		}, true, false},
		{"TensorRT-LLM NVFP4 TEP 8", func(d *Deployment) {
			d.Backend, d.BackendVersion, d.ModelName, d.HardwareSKU = BackendTRTLLM, BackendTRTLLM.EmbeddedVersion(), "deepseek-ai/DeepSeek-R1", "b200_sxm"
			d.Quantization, d.TP, d.MoETP, d.MoEEP = "nvfp4", 8, 1, 8
		}, false, false},
	} {
		d := SeedDeployment()
		c.d(&d)
		w, err := NewWorker(d)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tb := w.Table()
		s, g := tb.LLM, tb.GPU
		act := float64(s.ActivationBytes)
		for i, got := range tb.Elementwise.Values {
			x := axisNode(i)
			want := float64(s.Layers)*2*tb.addNormUS(x) + g.memOpUS(x*float64(s.Hidden)*act)
			if c.norms {
				want += float64(s.Layers) * max(g.memOpUS(2*x*float64(s.QLoRARank)*act), g.memOpUS(2*x*float64(s.KVLoRARank)*act))
			}
			if c.addsOut {
				want += float64(s.MoELayers()) * g.memOpUS(3*x*float64(s.Hidden)*act)
			}
			if math.Abs(got-want) > 0.01 && (i == 0 || got != tb.Elementwise.Values[i-1]) {
				t.Errorf("%s: element-wise at %.0f tokens %.3f µs, want %.3f", c.name, x, got, want)
				break
			}
		}
		// At 4 tokens each added kernel is about its launch (mem_empirical_constant_latency).
		el := newCurve(tb.Elementwise.Values, 1)
		if at4 := el.at(4); c.norms && c.addsOut && (at4 < 700 || at4 > 760) {
			t.Errorf("%s: element-wise %.0f µs at 4 tokens; want the 122 add + RMSNorm, 61 latent norms and 58 adds at about 3 µs each", c.name, at4)
		}
	}
}
