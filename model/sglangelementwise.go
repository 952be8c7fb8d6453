package model

// SGLang's element-wise kernels around a grouped-query attention layer, priced as its sources
// launch them rather than by AIConfigurator's op list (RoPE as two ops, the KV-cache write as
// two, a QK-norm as two passes of an element-wise op and a norm over each of q and k, times
// 1.1), whose per-op launch constant is most of a small decode step's element-wise price.
//
//   - KV-cache write: inside the attention rows. SGLang's model calls RadixAttention with
//     save_kv_cache on, and FlashAttentionBackend.forward_decode and forward_extend write k and
//     v into the pool (token_to_kv_pool.set_kv_buffer) before the attention kernel
//     (python/sglang/srt/layers/attention/flashattention_backend.py; FA3 is SGLang's default
//     attention backend on Hopper for Qwen3ForCausalLM, Qwen3MoeForCausalLM and
//     LlamaForCausalLM: is_fa3_default_architecture, python/sglang/srt/utils.py).
//     TRTLLMHAAttnBackend, the collector's backend on SM100, does the same
//     (trtllm_mha_backend.py). AIConfigurator's SGLang collector times exactly that call,
//     layer(q, k, v, forward_batch), for its context and generation attention rows
//     (collector/sglang/collect_attn.py since c689661c8, 2025-11-26: the collector of the
//     0.5.6.post2 rows of 699677931 and of every later collection), so the write is measured
//     there and not priced again.
//   - RoPE: one in-place kernel over q and k (RotaryEmbedding.forward_cuda calls sgl_kernel's
//     apply_rope_with_cos_sin_cache_inplace; python/sglang/srt/layers/rotary_embedding.py).
//   - QK-norm (Qwen3, Qwen3-MoE): Qwen3Attention._apply_qk_norm reshapes q and k by head —
//     a copy, since q and k are column slices of the fused qkv output — and runs q_norm and
//     k_norm, one RMSNorm kernel each (python/sglang/srt/models/qwen3.py, read at d4ff9a85 and
//     01b5f572). sglang#7740 (merged 2025-07-03, before every release the rows ran) moves
//     k's pair to a second stream under CUDA-graph capture; priced in series, as eager steps
//     run it: k's pair is 2 of the layer's kernels.
//   - SiLU-and-mul: one kernel after the dense MLP's gate_up GEMM (Qwen2MLP and LlamaMLP's
//     SiluAndMul.forward_cuda, sgl_kernel's silu_and_mul); a MoE layer's runs inside the
//     fused-MoE kernel its rows measure.
//
// Each kernel is priced as the add + RMSNorm is: bytes read and written over the effective
// bandwidth plus one launch (GPUSpec.memOpUS). Multi-head latent attention prices its
// element-wise work inside the measured MLA module, and a hybrid model's full-attention layers
// (Qwen3.5) keep the op list: neither is changed here.

// sglangAroundAttentionUS is one layer's RoPE and, where the model has a per-head QK-norm, its
// copies and RMSNorms, at a step whose queries and keys take q and k bytes.
func sglangAroundAttentionUS(memOp func(float64) float64, q, k float64, qkNorm bool) float64 {
	us := memOp(2 * (q + k))
	if qkNorm {
		us += 2*memOp(2*q) + 2*memOp(2*k)
	}
	return us
}

// sglangSiluAndMulUS is one dense MLP layer's SiLU-and-mul at a step of tokens: it reads the
// gate_up output (2 × inter per GPU) and writes inter per GPU.
func sglangSiluAndMulUS(memOp func(float64) float64, tokens float64, interPerGPU, activationBytes int) float64 {
	return memOp(3 * tokens * float64(interPerGPU*activationBytes))
}
