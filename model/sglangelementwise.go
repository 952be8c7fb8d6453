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
// bandwidth plus one launch (GPUSpec.memOpUS). Multi-head latent attention prices its RoPE and
// KV write inside the measured MLA module; what SGLang's DeepSeek layer runs outside every
// table (the latent RMSNorms, the shared-output add) is priced below. A hybrid model's gated
// full-attention layers (Qwen3.5) are priced by sglangGatedAttentionUS.

// sglangAroundAttentionUS is one layer's RoPE and, where the model has a per-head QK-norm, its
// copies and RMSNorms, at a step whose queries and keys take q and k bytes.
func sglangAroundAttentionUS(memOp func(float64) float64, q, k float64, qkNorm bool) float64 {
	us := memOp(2 * (q + k))
	if qkNorm {
		us += 2*memOp(2*q) + 2*memOp(2*k)
	}
	return us
}

// sglangGatedAttentionUS is one of Qwen3.5's full-attention layers' element-wise kernels at a
// step whose queries and keys take q and k bytes, as SGLang 0.5.9 and 0.5.10 run them on CUDA
// (Qwen3_5AttentionDecoderLayer in python/sglang/srt/models/qwen3_5.py; the upstream revisions
// of those releases are not in the index, so the kernels are read from the later PRs that fused
// them, each stating what ran before it):
//
//   - q_proj yields each head's query and gate interleaved; forward_prepare_native chunks them
//     and reshapes q and the gate to contiguous tensors, a copy each (sglang#27656, 2026-06-09:
//     "copy q", "copy gate" before its fused kernel; sglang#28320, 2026-06-15, the CUDA fusion
//     of "deinterleave + 2x gemma_rmsnorm + RoPE").
//   - QK-norm: _apply_qk_norm runs q_norm on the now contiguous q (no copy) and reshapes k by
//     head — a copy, k being a column slice of the fused qkv output — before k_norm; two
//     GemmaRMSNorm kernels, in series (the alternate stream was HIP-only until the CUDA one
//     came with the fusions above).
//   - RoPE: Qwen3.5's interleaved 3-D MRoPE over the rotary part of each head, one Triton
//     kernel (MRotaryEmbedding's triton mrope, sglang#11722, merged 2025-10; named
//     _triton_mrope_forward_fused in sglang#28839). Priced over whole heads: at decode it is
//     its launch.
//   - KV write: inside the measured attention rows, as for every SGLang GQA layer (above): the
//     runs' full-attention backends (trtllm_mha on B200 and B300, flashinfer on H200, under
//     HybridLinearAttnBackend) write k and v in their forward.
//   - Output gate: torch.sigmoid(gate) then attn_output * gate, two kernels (sglang#27630,
//     2026-06-09: "two separate PyTorch elementwise kernels"; the fused_sigmoid_mul of
//     sglang#26857 and later releases is not in 0.5.9 or 0.5.10).
func sglangGatedAttentionUS(memOp func(float64) float64, q, k float64) float64 {
	deinterleave := 2 * memOp(2*q)
	qkNorm := memOp(2*q) + memOp(2*k) + memOp(2*k)
	rope := memOp(2 * (q + k))
	gate := memOp(2*q) + memOp(3*q)
	return deinterleave + qkNorm + rope + gate
}

// sglangSiluAndMulUS is one dense MLP layer's SiLU-and-mul at a step of tokens: it reads the
// gate_up output (2 × inter per GPU) and writes inter per GPU.
func sglangSiluAndMulUS(memOp func(float64) float64, tokens float64, interPerGPU, activationBytes int) float64 {
	return memOp(3 * tokens * float64(interPerGPU*activationBytes))
}

// sglangDeepSeekSharedAdd says whether SGLang's DeepSeek layer runs the shared-output add,
// one of the two element-wise kernels of that layer no operator table holds (the other, the
// latent RMSNorms: mlaLatentNormsUnmeasured), priced as every unmeasured element-wise kernel
// is (memOpUS). SGLang's DeepSeek tables measure MLA's operators apart (mla_ops.go):
// AIConfigurator's collector times the attention layer's call (RadixAttention under
// trtllm_mla: RoPE, the FP8 quantisation and the KV write with the kernel;
// collector/sglang/collect_mla.py at 91b69b6ce), the BMMs and the projections, and none of them
// runs the latent RMSNorms that DeepseekV2AttentionMLA applies between the fused q_a/kv_a
// projection and q_b: q_a_layernorm over the q latent and kv_a_layernorm over the KV latent,
// every layer and step ("overlap qk norm" in python/sglang/srt/models/deepseek_v2.py at
// 3e4a39ee: on the current and the alternate stream under CUDA graphs, in series without).
// Nor does the MoE table hold the add that joins the shared experts' output to the routed
// experts' (final_hidden_states += shared_output in DeepseekV2MoE.forward_normal_dual_stream
// and forward_normal, same file) where the shared expert is not fused into the kernel as expert
// 257: SGLang's DeepseekV2MoE layers (DeepSeek and GLM-5, sglangDualStreamTokens) with a
// shared expert of their own.
func sglangDeepSeekSharedAdd(b Backend, s LLMSpec, fusedShared int) bool {
	moeLayer := s.Architecture == "deepseek_v3" || s.Architecture == "glm_moe_dsa"
	return b == BackendSGLang && moeLayer && s.SharedInter > 0 && fusedShared == 0
}
