package model

import (
	"path/filepath"
	"testing"
)

// SGLang's DeepSeek prefill runs eagerly (graphDecodeOnly), so a step could be bound by the
// host's launches rather than by its kernels. The one table here that times eager host work of
// that model is AIConfigurator's SGLang wideep_context_mla_perf: its collector calls the
// attention module (DeepseekV2AttentionMLA) without a CUDA graph or piecewise graphs between
// one pair of CUDA events, synchronising after each call (collector/sglang/collect_wideep_attn.py
// at 85bee563e for 0.5.6.post2; collect_mla_module.py, _run_prefill, at feebdae3d for 0.5.10),
// so a row is about max(host issue, device time) of one layer's attention. The rows have that
// shape: flat from 1 to 1,024 tokens (host-bound), growing beyond (device-bound). At the runs'
// heads per GPU (TP 8: 16; TEP 4: 32) that floor (its rows at 1 and 1,024 tokens), over all 61
// layers, is below what the replay already prices for a whole 1k-prompt prefill step: taking
// max(host, device) with the host time measured would not move those steps, and cannot give
// the 100–170 ms by which the rows' 1k prompts are under (docs/backend-validation.md, worst groups).
func TestSGLangEagerAttentionFloor(t *testing.T) {
	aic := sharedAICDir(t)
	for _, c := range []struct {
		sku, version, kernel string
		heads                int
		d                    func(*Deployment)
	}{
		{"h200_sxm", "0.5.6.post2", "fa3", 16, tp8("h200_sxm")},
		{"h200_sxm", "0.5.10", "fa3", 16, tp8("h200_sxm")},
		{"h200_sxm", "0.5.10", "flashinfer", 16, tp8("h200_sxm")},
		{"b200_sxm", "0.5.10", "trtllm_mla", 16, tp8("b200_sxm")},
		{"b200_sxm", "0.5.10", "trtllm_mla", 32, func(d *Deployment) {
			d.ModelName, d.HardwareSKU, d.Quantization, d.MoEBackend = "deepseek-ai/DeepSeek-V3", "b200_sxm", "nvfp4", "flashinfer_trtllm"
			d.TP, d.MoETP, d.MoEEP = 4, 1, 4
		}},
	} {
		var srcs []Source
		rows, err := readParquet[mlaRow](aic, filepath.Join(c.sku, "mla", "sglang", c.version, "wideep_context_mla_perf.parquet"), &srcs)
		if err != nil {
			t.Fatal(err)
		}
		var at1, at1k, at8k, hi float64 // hi: the largest row up to 1,024 tokens (one timed pass each: noisy)
		for _, r := range rows {
			if r.Kernel != c.kernel || r.Heads != int64(c.heads) || r.Batch != 1 || r.Step != 0 {
				continue
			}
			if r.ISL <= 1024 {
				hi = max(hi, r.Latency)
			}
			switch r.ISL {
			case 1:
				at1 = r.Latency
			case 1024:
				at1k = r.Latency
			case 8192:
				at8k = r.Latency
			}
		}
		name := c.sku + " " + c.version + " " + c.kernel
		if at1 == 0 || at1k == 0 || at8k == 0 {
			t.Fatalf("%s, %d heads: no rows at 1, 1,024 and 8,192 tokens", name, c.heads)
		}
		if at1k > 1.35*at1 || at8k < 1.4*at1 {
			t.Errorf("%s, %d heads: %.3f ms at 1 token, %.3f at 1,024, %.3f at 8,192: not a host floor under growing kernels", name, c.heads, at1, at1k, at8k)
		}
		d := SeedDeployment()
		d.Backend, d.BackendVersion = BackendSGLang, BackendSGLang.EmbeddedVersion()
		c.d(&d)
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		host := float64(w.Table().LLM.Layers) * max(at1, at1k) * 1000
		// InferenceX's 1k prompts are 819–1,024 tokens long (range ratio 0.8).
		step := w.Breakdown(&Batch{Prefill: []Chunk{{NewTokens: 819}}}).TotalUS
		t.Logf("%s, %d heads: eager attention module %.3f ms at 1 token, %.3f at 1,024 (at most %.3f up to it), %.3f at 8,192; × %d layers %.1f ms against an 819-token prefill step priced at %.1f ms (%s)",
			name, c.heads, at1, at1k, hi, at8k, w.Table().LLM.Layers, host/1000, float64(step)/1000, d.Layout())
		if host >= float64(step) {
			t.Errorf("%s: the measured eager floor over %d layers (%.1f ms) exceeds the priced 819-token prefill (%.1f ms): the eager host time would move the 1k prompts", name, w.Table().LLM.Layers, host/1000, float64(step)/1000)
		}
	}
}

func tp8(sku string) func(*Deployment) {
	return func(d *Deployment) {
		d.ModelName, d.HardwareSKU = "deepseek-ai/DeepSeek-R1", sku
		d.TP, d.MoETP, d.MoEEP = 8, 8, 1
	}
}
