package model

import "fmt"

// The all-reduce + RMSNorm fusion. vLLM's AllReduceFusionPass
// (vllm/compilation/passes/fusion/allreduce_rms_fusion.py; compilation_config.pass_config
// .fuse_allreduce_rms, enable_fi_allreduce_fusion before vLLM 0.11) replaces each
// tensor-parallel all-reduce and the residual add + RMSNorm after it — the o_proj's all-reduce
// and post_attention_layernorm, the MLP's or experts' all-reduce and the next layer's
// input_layernorm, so both of a layer's add + RMSNorm kernels — with one FlashInfer TRT-LLM
// all-reduce kernel that adds the residual and normalises as it writes the reduced rows
// (flashinfer.comm.trtllm_allreduce_fusion, pattern kARResidualRMSNorm). It does so only for
// steps whose all-reduce input fits the fusion's workspace: at most max_size_mb MiB, per GPU
// family and TP size (FI_ALLREDUCE_FUSION_MAX_SIZE_MB, vLLM v0.16.0: SM 9.0 {2: 64, 4: 2,
// 8: 0.5}, SM 10.x {2: 64, 4: 32, 8: 1}, tuned in vllm#24248; VLLM_FLASHINFER_ALLREDUCE_
// FUSION_THRESHOLDS_MB overrides it per TP size), i.e. max_size / (hidden × 2 B) tokens.
//
// Priced: a fused step no longer pays the two add + RMSNorm kernels per layer (their
// element-wise price, bytes / effective bandwidth + a launch); the fused kernel is priced as
// the custom all-reduce it replaces (AIConfigurator's custom_allreduce_perf rows: both are
// one-shot IPC all-reduces over NVLink, and no table measures the fused kernel; vllm#44079's
// CUDA-graph microbenchmark on H200 TP 8 finds the two within a few µs). The fused FP8/NVFP4
// quantisation of the norm's output (+quant_fp8 in some runs) is not priced separately: the
// GEMM rows include their input's quantisation.

// VLLMFusesAllReduceRMS is enable_allreduce_rms_fusion, vLLM's default for
// pass_config.fuse_allreduce_rms at its default optimisation level (-O2, vllm/config/vllm.py),
// for a release serving at tp × attention DP on a GPU: on for TP > 1 with data parallelism off
// on SM 9.0 or SM 10.x with FlashInfer (which vLLM's CUDA images ship). Its history:
// vllm#34299 (merged 2026-02-12) turned the fusion on at -O2, vllm#34392 (the next day) left it
// off under data parallelism (vllm#34458) until vllm#41458 (2026-05-01, after 0.19),
// vllm#35424 under pipeline parallelism (never modelled), and vllm#37755 (2026-03-21) widened
// SM 10.0 to the SM 10.x family (B300). 0.14.1's -O2 has it off (fuse_allreduce_rms: False);
// the first release documented with it on is 0.18 (its fusion guide: "O2 (Hopper/Blackwell +
// TP > 1)"), so 0.18 is where this default starts: 0.16 and 0.17, released after vllm#34299
// merged, are left unfused because their tags' contents were not read. B300 fuses from 0.19,
// the first release cut after vllm#37755. An unparsable version (a nightly) is taken as newer
// than every release, as NearestVersion does.
func VLLMFusesAllReduceRMS(version, sku string, tp, attentionDP int) bool {
	v, ok := releaseNumber(version)
	if !ok {
		v = 1 << 30
	}
	sm := gpuSMVersion[sku]
	return tp > 1 && attentionDP <= 1 && v >= 18_000 &&
		(sm == 90 || sm == 100 || (sm > 100 && sm < 110 && v >= 19_000))
}

// releaseNumber is a vLLM release as major × 1,000,000 + minor × 1,000 + patch; false for a
// version without major and minor numbers (a nightly).
func releaseNumber(version string) (int, bool) {
	var a, b, c int
	n, _ := fmt.Sscanf(version, "%d.%d.%d", &a, &b, &c)
	return a*1_000_000 + b*1_000 + c, n >= 2
}

// gpuSMVersion is the compute capability of each GPU the tables cover (sm_version in
// AIConfigurator's system files, systems/<sku>.yaml; TestGPUSMVersions checks them).
var gpuSMVersion = map[string]int{"h100_sxm": 90, "h200_sxm": 90, "b200_sxm": 100, "b300_sxm": 103}

// allReduceFusionMaxMB is vLLM's FI_ALLREDUCE_FUSION_MAX_SIZE_MB: the largest all-reduce input
// (MiB) fused, by GPU family (SM 9.0; SM 10.x, is_device_capability_family(100)) and TP size.
func allReduceFusionMaxMB(sm, tp int) float64 {
	switch {
	case sm == 90:
		return map[int]float64{2: 64, 4: 2, 8: 0.5}[tp]
	case sm >= 100 && sm < 110:
		return map[int]float64{2: 64, 4: 32, 8: 1}[tp]
	}
	return 0
}

// AllReduceRMSFusionTokens is the largest step, in tokens, whose all-reduces vLLM fuses with
// the add + RMSNorm after them under this deployment on table t's model and GPU; 0 when
// nothing is fused (the fusion off, one GPU, a GPU or TP size without a FlashInfer workspace
// size, or the dynosim reference, which prices AIConfigurator's unfused ops).
func (d Deployment) AllReduceRMSFusionTokens(t *Table) int {
	if !d.FuseAllReduceRMS || d.TP < 2 || d.Dynosim() {
		return 0
	}
	mb := d.AllReduceFusionMaxMB
	if mb == 0 {
		mb = allReduceFusionMaxMB(gpuSMVersion[t.HardwareSKU], d.TP)
	}
	return int(mb * (1 << 20) / float64(t.LLM.Hidden*t.LLM.ActivationBytes))
}

// allReduceRMSFusion takes the fused add + RMSNorm kernels out of a table's non-attention sum
// at the grid's nodes of at most the fusion's tokens (the switch falls between the nodes on
// either side of it), before the eager curve is derived from the sum: the pass is compiled
// into the model, so steps run without CUDA graphs fuse too.
func allReduceRMSFusion(d Deployment, t *Table, sum []float64) {
	limit := float64(d.AllReduceRMSFusionTokens(t))
	for i := range sum {
		if x := axisNode(i); x <= limit {
			sum[i] -= 2 * float64(t.LLM.Layers) * t.addNormUS(x)
		}
	}
}

// addNormUS prices one residual add + RMSNorm over a step of tokens: it reads the hidden
// state and the residual and writes both back, 4 × hidden elements per token.
func (t *Table) addNormUS(tokens float64) float64 {
	return t.GPU.memOpUS(tokens * float64(4*t.LLM.Hidden) * float64(t.LLM.ActivationBytes))
}

// memOpUS prices memory-bound element-wise work, which no table measures, as AIConfigurator
// does from the system file: bytes / (bandwidth × empirical scaling) + a constant launch
// latency.
func (g GPUSpec) memOpUS(bytes float64) float64 {
	return bytes/(g.MemBW*g.MemBWScaling)*1e6 + g.MemConstantUS
}

// AllReduceRMSFusionWords says what the deployment fuses on table t, for model info.
func (d Deployment) AllReduceRMSFusionWords(t *Table) string {
	switch n := d.AllReduceRMSFusionTokens(t); {
	case !d.FuseAllReduceRMS:
		return "off (compilation_config.pass_config.fuse_allreduce_rms false): every all-reduce and add + RMSNorm priced apart"
	case n == 0:
		return "on, but nothing is fused here (one GPU, the dynosim reference, or no FlashInfer workspace size for this GPU and TP)"
	default:
		return fmt.Sprintf("on: steps of up to %d tokens run FlashInfer's fused all-reduce + add + RMSNorm (2 per layer), priced as the custom all-reduce without the two add + RMSNorm kernels", n)
	}
}
