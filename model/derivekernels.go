package model

// The words of t.Kernels: what each grid of a derived table was priced from.

import (
	"cmp"
	"fmt"
	"strings"
)

// kernels states in t.Kernels what each grid was priced from, in the order of its grids.
func (d *deriver) kernels() {
	t, s, l := d.t, d.s, d.l
	mlpWords := d.mlpWords
	if s.DenseLayers > 0 {
		mlpWords = fmt.Sprintf(" (%d dense layers)%s", s.DenseLayers, mlpWords)
	}
	t.Kernels = []string{
		fmt.Sprintf("%s: %s%s%s; %s logits n=%d k=%d (n interpolated)",
			d.gemmRel, d.attnWords, mlpWords, strings.Replace(d.sharedWords, "MLP", "shared experts", 1),
			unquantGEMMDtype, s.Vocab/l.TP, s.Hidden),
	}
	if d.fp8 != nil {
		fed := func(in bool) string {
			if in {
				return "FP8"
			}
			return "BF16, quantised with the static scale"
		}
		t.Kernels = append(t.Kernels, fmt.Sprintf("fp8_static GEMMs (TensorRT-LLM's FP8QDQ with the checkpoint's input scales): each fp8 row less %s; less %s where the input arrives in FP8 (qkv: %s, o_proj: %s, gate_up: %s, down: %s)",
			d.fp8.computeRel, d.fp8.matrixRel, fed(d.fp8In.qkv), fed(d.fp8In.oProj), fed(d.fp8In.gateUp), fed(d.fp8In.down)))
	}
	if s.MoE() {
		t.Kernels = append(t.Kernels, d.gateWords, d.moeWords)
	}
	t.Kernels = append(t.Kernels, d.attentionWords())
	if l.TP > 1 {
		t.Kernels = append(t.Kernels, d.allReduceWords())
	}
	t.Kernels = append(t.Kernels, d.elementwiseWords())
}

// attentionWords states what the attention grids were priced from.
func (d *deriver) attentionWords() string {
	s, mla := d.s, d.mla
	switch {
	case s.DSA():
		return fmt.Sprintf("%s, %s: the measured DSA module (%s at %d heads per GPU, %s projections, %s attention; %s) less its MLA projections priced above, decode beyond the measured context growing by the indexer alone (index_topk %d); KV cache %s (kv_cache_dtype %s) and fp8 (kv_cache_dtype %s, levelled to at most the %s price)",
			d.ctxRel, d.genRel, mla.dsaArch, d.headsPerGPU, d.attnQuant, attentionDtype, d.dsaWords, s.IndexTopK, attentionDtype, KVBF16, KVFP8, attentionDtype)
	case mla.ops:
		return fmt.Sprintf("%s, %s: the MLA attention kernels at %d heads per GPU, %s attention, prefill with kv_b and decode with the %s BMMs (%s); KV cache %s (kv_cache_dtype %s) and fp8 (kv_cache_dtype %s, levelled to at most the %s price)",
			d.ctxRel, d.genRel, d.headsPerGPU, attentionDtype, d.mlaBMM, mla.bmmRel, attentionDtype, KVBF16, KVFP8, attentionDtype)
	case s.MLA():
		return fmt.Sprintf("%s, %s: the measured MLA module (DeepSeek-V3 shape at %d heads per GPU, %s projections, %s attention) less its projections priced above; KV cache %s (kv_cache_dtype %s) and fp8 (kv_cache_dtype %s, levelled to at most the %s price)",
			d.ctxRel, d.genRel, d.headsPerGPU, d.attnQuant, attentionDtype, attentionDtype, KVBF16, KVFP8, attentionDtype)
	}
	return fmt.Sprintf("%s, %s: %d heads / %d KV heads per GPU, head_dim %d, %s attention; KV cache %s (kv_cache_dtype %s) and fp8 (kv_cache_dtype %s, levelled to at most the %s price)",
		d.ctxRel, d.genRel, d.headsPerGPU, d.kvPerGPU, s.HeadDim, attentionDtype, attentionDtype, KVBF16, KVFP8, attentionDtype)
}

// allReduceWords states what the all-reduce grids were priced from.
func (d *deriver) allReduceWords() string {
	t, l := d.t, d.l
	graphMode, eagerMode := allReduceModes(t.Backend)
	mode := cmp.Or(graphMode, string(t.Backend))
	switch {
	case d.allreduceEagerly != nil && t.Backend.OrDefault() == BackendVLLM:
		mode += " (" + eagerMode + " above the CUDA-graph capture size)"
	case d.allreduceEagerly != nil:
		mode += " (" + eagerMode + " in the steps run without CUDA graphs: every step holding a prefill chunk)"
	}
	perLayer := fmt.Sprintf("2 per layer of tokens×%d elements", d.s.Hidden)
	if d.qkVarianceElems > 0 {
		perLayer += fmt.Sprintf(" and 1 of tokens×%g (the per-layer QK-norm's FP32 variances of q and k)", d.qkVarianceElems)
	}
	return fmt.Sprintf("%s: %s %s all-reduce over %d GPUs, %s", d.arRel, mode, allreduceElemType, l.TP, perLayer)
}

// elementwiseWords states what the element-wise grid was priced from.
func (d *deriver) elementwiseWords() string {
	s := d.s
	qkNorm := ""
	switch {
	case d.perLayerQKNorm:
		qkNorm = " per-layer QK-norm as 2 passes over q and k,"
	case s.QKNorm && d.fused.qkNormRoPE:
		qkNorm = " QK-norm with RoPE as one pass over q and k,"
	case s.QKNorm:
		qkNorm = " QK-norm,"
	}
	norms := "2 add+RMSNorm,"
	if d.fused.normInAllReduce {
		norms = "(2 add+RMSNorm inside the all-reduces)"
	}
	var aroundAttn string
	switch {
	case d.latentNorms:
		aroundAttn = " (RoPE and KV write inside the measured MLA kernel), the q_a and kv_a latent RMSNorms on two streams (the longer priced)"
	case d.fused.ropeInAttention:
		aroundAttn = qkNorm + " (RoPE and KV write inside the attention kernel)"
	case s.MLA():
		aroundAttn = " (RoPE, latent norms and KV write inside the MLA module)"
	case d.sglangKernels && s.Hybrid() && s.AttnOutputGate:
		aroundAttn = " on the full-attention layers copies of q, the gate and k, an RMSNorm of each of q and k, RoPE as one kernel (the KV write inside the measured attention), the gate's sigmoid and multiply; on the linear-attention layers the gated RMSNorm"
		if sglangFusedLinearProj(d.t.BackendVersion) {
			aroundAttn += " and the split of the input projections' outputs (fused_qkvzba_split_reshape_cat_contiguous)"
		}
	case d.sglangKernels:
		if s.QKNorm && !d.perLayerQKNorm {
			qkNorm = " QK-norm as a copy and an RMSNorm of each of q and k,"
		}
		aroundAttn = qkNorm + " RoPE as one kernel (the KV write inside the measured attention)"
		if s.Inter > 0 && !s.Hybrid() {
			aroundAttn += ", SiLU-and-mul"
		}
	default:
		aroundAttn = qkNorm + " RoPE, KV write"
	}
	embedWords := "embedding"
	if d.sharedAdd {
		embedWords = "embedding; per MoE layer the shared experts' output added to the routed experts'"
	}
	return fmt.Sprintf("element-wise (%s%s per layer; %s): bytes / (mem_bw × mem_bw_empirical_scaling_factor) + mem_empirical_constant_latency", norms, aroundAttn, embedWords)
}
