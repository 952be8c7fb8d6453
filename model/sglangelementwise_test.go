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
// norms alone. TensorRT-LLM's DeepSeek attention runs the same two norms on two streams outside
// the attention call its MLA rows time (mlaLatentNormsUnmeasured), with no shared-output kernel (the add
// joins the outputs in the MoE all-reduce or the MoE layer): its tables price the norms alone.
// GLM-5's latent norms run inside its measured DSA modules.
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
		}, true, false},
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

// TestSGLangQwen3DecodeBreakdown lays out the decode step of SGLang's Qwen3-32B BF16 on H100 at
// the gap-analysis rows' layouts (docs/backend-validation.md, "Worst groups": SGLang Qwen3-32B) and holds
// its element-wise part to the kernels SGLang launches per layer (sglangelementwise.go): two
// add + RMSNorm, RoPE, QK-norm's copy and RMSNorm of q and of k, SiLU-and-mul — eight, with
// the KV write inside the measured attention — plus the embedding.
func TestSGLangQwen3DecodeBreakdown(t *testing.T) {
	type point struct {
		version     string
		tp, decodes int
	}
	const ctx = 1150 // a 1,024-token prompt half-way through 256 output tokens, and the template's
	t.Logf("| release's tables | TP | requests | projections | all-reduce | element-wise | attention | logits | step (ms) |")
	for _, p := range []point{{"0.5.9", 1, 5}, {"0.5.9", 1, 13}, {"0.5.6.post2", 2, 13}, {"0.5.6.post2", 2, 90},
		{"0.5.6.post2", 4, 13}, {"0.5.6.post2", 4, 92}, {"0.5.6.post2", 8, 13}, {"0.5.6.post2", 8, 92}} {
		d := SeedDeployment()
		d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion = "Qwen/Qwen3-32B", "h100_sxm", BackendSGLang, p.version
		d.Quantization, d.KVCacheDtype = "", KVBF16
		d.TP, d.MoETP, d.MoEEP = p.tp, p.tp, 1
		d.MaxNumSeqs, d.MaxNumBatchedTokens, d.GPUMemoryUtilization, d.MemoryBudget = 1024, 8192, 0.84, MemoryBudgetSGLang
		w, err := NewWorker(d)
		if err != nil {
			t.Fatalf("TP %d: %v", p.tp, err)
		}
		br := w.Breakdown(&Batch{Decodes: p.decodes, DecodeContextTokens: int64(p.decodes) * ctx})
		o := br.Operators
		if sum := br.NonAttentionUS + br.LogitsUS + br.DecodeAttnUS; br.TotalUS != int64(math.Ceil(sum)) {
			t.Errorf("TP %d, %d requests: step %d µs, parts sum to %.3f", p.tp, p.decodes, br.TotalUS, sum)
		}
		// The element-wise grid is sampled at its nodes; at the launch-bound sizes here it is
		// within a few per cent of the kernels' price at the step's exact tokens.
		s, g, n := w.table.LLM, w.table.GPU, float64(p.decodes)
		q, k := n*float64(s.Heads/p.tp*s.HeadDim*s.ActivationBytes), n*float64(max(1, s.KVHeads/p.tp)*s.HeadDim*s.ActivationBytes)
		want := float64(s.Layers)*(2*w.table.addNormUS(n)+sglangAroundAttentionUS(g.memOpUS, q, k, true)+
			sglangSiluAndMulUS(g.memOpUS, n, s.Inter/p.tp, s.ActivationBytes)) + g.memOpUS(n*float64(s.Hidden*s.ActivationBytes))
		if math.Abs(o.ElementwiseUS-want) > 0.05*want {
			t.Errorf("TP %d, %d requests: element-wise %.0f µs, SGLang's 8 kernels per layer and the embedding %.0f", p.tp, p.decodes, o.ElementwiseUS, want)
		}
		t.Logf("| %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |", p.version, p.tp, p.decodes,
			o.ProjectionsUS/1000, o.AllReduceUS/1000, o.ElementwiseUS/1000, br.DecodeAttnUS/1000, br.LogitsUS/1000, float64(br.TotalUS)/1000)
	}
}

// Qwen3.5's full-attention layers run SGLang 0.5.9's kernels, not the op list: the copies of
// q, the gate and k, q_norm and k_norm, one RoPE kernel, the gate's sigmoid and its multiply
// (eight, the KV write inside the measured attention), beside every layer's two add + RMSNorm,
// the DeltaNet layers' gated RMSNorm and the embedding (sglangGatedAttentionUS). The B200 BF16
// table at TP 8 holds exactly that sum at every token count.
func TestSGLangQwen35Elementwise(t *testing.T) {
	g := qwen35Group{"B200 BF16 TP 8", "b200_sxm", "0.5.9", "", KVBF16, 8, 8, 1}
	tb := g.worker(t).Table()
	s, gpu := tb.LLM, tb.GPU
	act := float64(s.ActivationBytes)
	headsPerGPU, kvPerGPU := s.Heads/g.tp, max(1, s.KVHeads/g.tp)
	launches := sglangGatedAttentionUS(func(float64) float64 { return 1 }, 1, 1)
	if launches != 8 {
		t.Fatalf("a full-attention layer prices %g kernels, want 8", launches)
	}
	for i, got := range tb.Elementwise.Values {
		x := axisNode(i)
		q, k := x*float64(headsPerGPU*s.HeadDim)*act, x*float64(kvPerGPU*s.HeadDim)*act
		want := float64(s.Layers)*2*tb.addNormUS(x) + gpu.memOpUS(x*float64(s.Hidden)*act) +
			float64(s.FullAttentionLayers())*(2*gpu.memOpUS(2*q)+gpu.memOpUS(2*q)+2*gpu.memOpUS(2*k)+gpu.memOpUS(2*(q+k))+gpu.memOpUS(2*q)+gpu.memOpUS(3*q)) +
			float64(s.LinearLayers)*gpu.memOpUS(3*x*float64(s.linearValueDim()/g.tp)*act)
		if math.Abs(got-want) > 0.01 && (i == 0 || got != tb.Elementwise.Values[i-1]) {
			t.Errorf("element-wise at %.0f tokens %.3f µs, want %.3f", x, got, want)
			break
		}
	}
}
