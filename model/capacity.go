package model

import (
	"fmt"
	"strings"
)

// Capacity is the KV-cache size of one worker and the memory arithmetic behind it, per GPU
// unless named otherwise. vLLM gives the KV cache what is left of gpu_memory_utilization ×
// GPU memory after weights, the activation peak of a max_num_batched_tokens step, NCCL
// buffers and runtime overhead; every GPU of the worker holds 1/TP of the KV heads.
//
// The budget follows AIConfigurator's vLLM backend (sdk/memory.py kv_cache_budget_bytes,
// "of total" semantics): capacity × utilisation × (1 − KVTolerance) − everything else. Its
// 2 % tolerance stands for block granularity and profiler variance; it also covers most of
// the gap between the system file's 180 GiB and the 178.35 GiB torch reports on a B200, which
// is what vLLM multiplies by the utilisation.
type Capacity struct {
	GPUs                 int     // GPUs per worker (tp × attention_dp)
	GPUMemoryBytes       int64   // physical memory of one GPU
	GPUMemoryUtilization float64 // vLLM's share of it
	UsableBytes          int64   // GPUMemoryBytes × GPUMemoryUtilization × (1 − KVTolerance)
	WeightBytes          int64   // this GPU's shard of the weights (FP8 blocks + scales, BF16 rest)
	ActivationBytes      int64   // activation peak of a max_num_batched_tokens step
	NCCLBytes            int64   // communicator buffers (system file, by GPU count)
	OtherBytes           int64   // CUDA graphs, allocator slack, runtime (system file)
	budget               string  // MemoryBudgetAIConfigurator or MemoryBudgetVLLM (unexported: the simulator digest hashes this struct)
	KVBytes              int64   // left for the KV cache
	KVCacheDtype         string  // KVFP8 or KVBF16
	KVElementBytes       int     // bytes per K or V element in the cache (1 for FP8)
	KVBytesPerToken      int64   // per GPU
	KVBytesPerTokenTotal int64   // per worker (all GPUs)
	BlockSize            int     // engine block size in tokens
	DerivedBlocks        int     // KVBytes / (KVBytesPerToken × BlockSize)
	NumGPUBlocks         int     // blocks the engine uses: DerivedBlocks, or the deployment's override
	Overridden           bool    // Deployment.NumGPUBlocks was set
	// A hybrid model's recurrent states (hybrid.go): each running request holds one of
	// StateBytesPerRequest (all DeltaNet layers, per GPU); SGLang's mamba pool keeps
	// StateSlots of them (StateBytes in all) beside the KV cache and runs at most
	// MaxRunningRequests at once. All zero for other models.
	StateBytesPerRequest int64
	StateSlots           int
	MaxRunningRequests   int

	layers, kvHeadsPerGPU, headDim int64 // the per-token arithmetic's factors, for String
	slidingLayers                  int64 // sliding-window layers left out of the per-token bytes
	window                         int
	mlaLatent, mlaRope             int64 // multi-head latent attention's cached latent and RoPE key
	indexHeadDim                   int64 // DeepSeek sparse attention's indexer key width (0: none)
	linearLayers                   int64 // a hybrid model's DeltaNet layers, for String
	radixStates                    bool  // the mamba pool was sized by SGLang's ratio rule (radix cache on)
}

// StateBytes is the mamba pool's memory per GPU: its slots' recurrent states.
func (c Capacity) StateBytes() int64 { return int64(c.StateSlots) * c.StateBytesPerRequest }

// quantBytes is the storage of a rows×cols weight matrix in a GEMM dtype: FP8 one byte per
// weight (fp8_block adds one FP32 scale per block×block tile; per-tensor FP8 one scale in all),
// NVFP4 half a byte plus an FP8 scale per 16 weights, MXFP4 half a byte plus an E8M0 scale per
// 32, BF16 two bytes.
func quantBytes(dtype string, rows, cols int64, block int, unquant int64) int64 {
	n := rows * cols
	switch dtype {
	case "fp8_block":
		b := int64(block)
		return n + ((rows+b-1)/b)*((cols+b-1)/b)*4
	case "fp8", gemmFP8Static:
		return n + 4
	case "nvfp4":
		return n/2 + n/16
	case "w4a16_mxfp4", "w4a8_mxfp4_mxfp8": // MXFP4 weights: an 8-bit scale per 32
		return n/2 + n/32
	case "int4_wo":
		return n/2 + n/16 // compressed-tensors W4A16: a BF16 scale per group of 32 (Kimi-K2)
	}
	return n * unquant
}

// routedExpertLayerBytes is this GPU's shard of one MoE layer's routed experts (gate, up
// and down projections of every expert, split over moe_tp × moe_ep).
func (w *Worker) routedExpertLayerBytes() int64 {
	d, s := w.d, w.table.LLM
	h, ub := int64(s.Hidden), int64(s.UnquantBytes)
	expert := func(rows, cols int64) int64 { return quantBytes(w.table.MoEQuant, rows, cols, s.WeightBlock, ub) }
	return int64(s.Experts) * (expert(h, 2*int64(s.ExpertInter)) + expert(int64(s.ExpertInter), h)) / int64(d.MoETP*d.MoEEP)
}

// RoutedExpertBytes is this GPU's shard of the routed experts' weights over all MoE layers
// (part of Capacity().WeightBytes; 0 for a dense model).
func (w *Worker) RoutedExpertBytes() int64 {
	return int64(w.table.LLM.MoELayers()) * w.routedExpertLayerBytes()
}

// KVTolerance is AIConfigurator's KV_CACHE_MEMORY_TOLERANCE for vLLM.
const KVTolerance = 0.02

// Capacity derives the worker's KV-cache block count from its memory.
func (w *Worker) Capacity() Capacity {
	d, s, g := w.d, w.table.LLM, w.table.GPU
	tp := int64(d.TP)
	h, hd := int64(s.Hidden), int64(s.HeadDim)
	heads, kv := int64(s.Heads), int64(s.KVHeads)
	kvPerGPU := max(1, kv/tp)
	ub, ab := int64(s.UnquantBytes), int64(s.ActivationBytes)
	proj := func(rows, cols int64) int64 { return quantBytes(w.table.GEMMQuant, rows, cols, s.WeightBlock, ub) }
	attnProj := func(rows, cols int64) int64 {
		return quantBytes(s.attentionQuant(w.table.GEMMQuant), rows, cols, s.WeightBlock, ub)
	}

	attn := (attnProj(h, (heads+2*kv)*hd) + attnProj(heads*hd, h)) / tp
	if s.AttnOutputGate {
		attn += attnProj(h, heads*hd) / tp // q_proj's gate half
	}
	if s.MLA() {
		// The down-projection (and its two latent norms) is replicated on every GPU; the
		// up-projections and o_proj are split by heads.
		qLoRA, kvLoRA, rope := int64(s.QLoRARank), int64(s.KVLoRARank), int64(s.QKRopeDim)
		nope, v := int64(s.QKNopeDim), int64(s.VHeadDim)
		q := attnProj(qLoRA, heads*(nope+rope)) / tp
		if qLoRA == 0 {
			q = attnProj(h, heads*(nope+rope)) / tp
		}
		attn = attnProj(h, qLoRA+kvLoRA+rope) + (qLoRA+kvLoRA)*ub + q +
			(attnProj(kvLoRA, heads*(nope+v))+quantBytes(s.oProjQuant(w.table.GEMMQuant), heads*v, h, s.WeightBlock, ub))/tp
	}
	if s.DSA() {
		attn += s.indexerWeightBytes(attnProj, ub)
	}
	mlp := func(inter int64) int64 { return (proj(h, 2*inter) + proj(inter, h)) / tp }
	experts := w.routedExpertLayerBytes()
	norms := 2 * h * ub // the two RMSNorms
	if s.QKNorm {
		norms += (heads + kv) * hd * ub
	}
	moeLayer := mlp(int64(s.SharedInter)) + experts + int64(s.Experts)*h*ub // shared and routed experts, router gate
	embeddings := 2 * int64(s.Vocab) * h * ub / tp                          // input embedding and LM head, vocab-parallel
	weights := int64(s.FullAttentionLayers())*(attn+norms) + int64(s.DenseMLPLayers())*mlp(int64(s.Inter)) +
		int64(s.MoELayers())*moeLayer + embeddings + h*ub
	if s.Hybrid() {
		weights += int64(s.LinearLayers) * (s.linearWeightBytes(tp, proj) + 2*h*ub)
	}

	// Activation peak of vLLM's profiling step at max_num_batched_tokens: the residual stream,
	// attention projections, the dense MLP's (split by tp) or the fused-MoE workspaces (every
	// token × top-k, expert intermediate split by moe_tp) and the sampler's FP32 logits for
	// max_num_seqs.
	t := int64(d.MaxNumBatchedTokens)
	act := 2*t*h*ab + t*(heads/tp+2*kvPerGPU)*hd*ab + t*(heads/tp)*hd*ab + int64(d.MaxNumSeqs)*int64(s.Vocab)*4
	if s.MLA() { // the latents, the queries, the up-projected keys and values, the attention output
		act = 2*t*h*ab + t*int64(s.QLoRARank+s.KVLoRARank+s.QKRopeDim)*ab + t*(heads/tp)*int64(s.QKNopeDim+s.QKRopeDim)*ab +
			t*(heads/tp)*int64(s.QKNopeDim+s.VHeadDim)*ab + t*(heads/tp)*int64(s.VHeadDim)*ab + int64(d.MaxNumSeqs)*int64(s.Vocab)*4
	}
	if dense := int64(s.Inter+s.SharedInter) / tp; dense > 0 {
		act += t*2*dense*ab + t*dense*ab
	}
	if s.MoE() {
		inter := int64(s.ExpertInter) / int64(d.MoETP)
		routed := t * int64(s.TopK)
		act += routed*2*inter*ab + routed*inter*ab + routed*h*ab
	}

	gpus := d.TP * d.AttentionDP
	nccl := g.NCCLMem[gpus]
	if _, ok := g.NCCLMem[gpus]; !ok {
		for n, b := range g.NCCLMem { // beyond the listed sizes hold the largest listed
			if n < gpus && b > nccl {
				nccl = b
			}
		}
	}
	usable := int64(float64(g.MemCapacity) * d.GPUMemoryUtilization * (1 - KVTolerance))
	kvBytes := usable - weights - act
	if d.Budget() == MemoryBudgetAIConfigurator {
		// AIConfigurator's budget also takes the system file's NCCL and runtime memory off.
		// vLLM's profiler does not (MemoryBudgetVLLM): its baseline snapshot is taken after
		// init_worker_distributed_environment has set up NCCL and the custom all-reduce
		// buffers (vllm#25359, from 0.11), so they and the CUDA context sit in the
		// (1 − utilisation) headroom; the KV cache is requested_memory − (weights + the
		// profile step's torch peak + the non-torch increase during it) (v1
		// gpu_worker.determine_available_memory); CUDA
		// graphs are captured after the KV cache is allocated and are not estimated into the
		// budget before VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS became the default in 0.21
		// (vllm#30515, off by default when merged). The tolerance stays in both: the torch
		// total vLLM multiplies is 0.99 of the system file's (79.19 of 80 GiB on an H100,
		// 139.8 of 141 on an H200, 178.35 of 180 on a B200).
		kvBytes -= nccl + g.OtherMem
	}
	switch d.Budget() {
	case MemoryBudgetSGLang:
		// SGLang's fraction applies to the memory free once NCCL is set up; activations and
		// CUDA graphs live outside it.
		kvBytes += act - int64(d.GPUMemoryUtilization*float64(nccl))
	case MemoryBudgetTRTLLM:
		// TensorRT-LLM sizes its cache after loading the weights and running a profiling
		// step of max_num_tokens: kv_cache_config.free_gpu_memory_fraction of the memory
		// then free (KvCacheCreator, tensorrt_llm/_torch/pyexecutor/_util.py), the NCCL
		// buffers and the runtime already allocated.
		free := int64(float64(g.MemCapacity)*(1-KVTolerance)) - weights - act - nccl - g.OtherMem
		kvBytes = int64(d.GPUMemoryUtilization * float64(free))
	}
	var state sglangStates
	if s.Hybrid() {
		state = mambaPool(d, kvBytes, s.LinearStateBytesPerRequest(d.TP))
		kvBytes -= state.bytes()
	}
	elem := s.KVCacheBytes
	if d.KVCacheDtype == KVFP8 {
		elem = 1
	}
	// vLLM's hybrid KV-cache manager (on by default since 0.10) gives sliding-window layers
	// pages from the same pool as full-attention ones, but a sliding layer holds only its
	// window's blocks per request: per token of context only the full-attention layers
	// count. The window's few blocks per request and layer group (⌈window / block⌉ + 1) are
	// left out.
	kvLayers := int64(s.FullAttentionLayers())
	if s.SlidingLayers > 0 && s.SlidingLayers < s.Layers {
		kvLayers -= int64(s.SlidingLayers)
	}
	perToken := kvLayers * 2 * kvPerGPU * hd * int64(elem)
	if s.MLA() {
		perToken = int64(s.Layers) * mlaKVElements(s) * int64(elem)
	}
	if s.DSA() {
		perToken = int64(s.Layers) * dsaKVBytesPerToken(s, d.KVCacheDtype)
	}
	derived := 0
	if kvBytes > 0 {
		derived = int(kvBytes / (perToken * int64(d.BlockSize)))
	}
	c := Capacity{
		GPUs: gpus, GPUMemoryBytes: g.MemCapacity, GPUMemoryUtilization: d.GPUMemoryUtilization,
		UsableBytes: usable, WeightBytes: weights, ActivationBytes: act, NCCLBytes: nccl, OtherBytes: g.OtherMem, budget: d.Budget(),
		KVBytes: kvBytes, KVCacheDtype: d.KVCacheDtype, KVElementBytes: elem, KVBytesPerToken: perToken, KVBytesPerTokenTotal: perToken * int64(d.TP),
		BlockSize: d.BlockSize, DerivedBlocks: derived, NumGPUBlocks: derived,
		layers: kvLayers, slidingLayers: int64(s.Layers-s.LinearLayers) - kvLayers, window: s.SlidingWindow, kvHeadsPerGPU: kvPerGPU, headDim: hd,
		StateBytesPerRequest: state.perRequest, StateSlots: state.slots, MaxRunningRequests: state.maxRunning,
		linearLayers: int64(s.LinearLayers), radixStates: state.radix,
	}
	if s.MLA() {
		c.mlaLatent, c.mlaRope, c.indexHeadDim = int64(s.KVLoRARank), int64(s.QKRopeDim), int64(s.IndexHeadDim)
	}
	if d.NumGPUBlocks > 0 {
		c.NumGPUBlocks, c.Overridden = d.NumGPUBlocks, true
	}
	return c
}

// String renders the arithmetic, one quantity per line.
func (c Capacity) String() string {
	var b strings.Builder
	gb := func(x int64) string { return fmt.Sprintf("%8.2f GB", float64(x)/1e9) }
	budget := "; memory_budget " + c.budget // the default follows the timing reference (Deployment.Budget): always named
	free := c.budget == MemoryBudgetTRTLLM
	if free {
		fmt.Fprintf(&b, "GPU memory            %s × %.2f = %s per GPU (%d GPUs%s)\n",
			gb(c.GPUMemoryBytes), 1-KVTolerance, gb(int64(float64(c.GPUMemoryBytes)*(1-KVTolerance))), c.GPUs, budget)
	} else {
		fmt.Fprintf(&b, "GPU memory            %s × %.2f utilisation × %.2f = %s usable per GPU (%d GPUs%s)\n",
			gb(c.GPUMemoryBytes), c.GPUMemoryUtilization, 1-KVTolerance, gb(c.UsableBytes), c.GPUs, budget)
	}
	fmt.Fprintf(&b, "  − weights           %s\n", gb(c.WeightBytes))
	if c.budget == MemoryBudgetSGLang {
		fmt.Fprintf(&b, "  (activations       %s, outside SGLang's mem_fraction_static with NCCL and CUDA graphs)\n", gb(c.ActivationBytes))
	} else {
		fmt.Fprintf(&b, "  − activations       %s\n", gb(c.ActivationBytes))
	}
	switch c.budget {
	case MemoryBudgetSGLang:
		fmt.Fprintf(&b, "  − NCCL × %.2f       %s (set up before SGLang measures the memory its fraction applies to)\n", c.GPUMemoryUtilization, gb(int64(c.GPUMemoryUtilization*float64(c.NCCLBytes))))
	case MemoryBudgetVLLM:
		fmt.Fprintf(&b, "  (NCCL              %s, allocated before vLLM's baseline snapshot: outside its budget)\n", gb(c.NCCLBytes))
		fmt.Fprintf(&b, "  (runtime/other     %s, AIConfigurator's padding for CUDA graphs and the context: outside vLLM's budget before 0.21)\n", gb(c.OtherBytes))
	default:
		fmt.Fprintf(&b, "  − NCCL              %s\n", gb(c.NCCLBytes))
		fmt.Fprintf(&b, "  − runtime/other     %s\n", gb(c.OtherBytes))
	}
	if free {
		fmt.Fprintf(&b, "  × %.2f free_gpu_memory_fraction\n", c.GPUMemoryUtilization)
	}
	if c.StateSlots > 0 {
		rule := "--max-running-requests with the radix cache off"
		if c.radixStates {
			rule = fmt.Sprintf("mamba_full_memory_ratio %.1f of the rest; at most slots / %d running", mambaFullMemoryRatio, mambaSlotsPerRunning)
		}
		fmt.Fprintf(&b, "  − recurrent states  %s (%d slots × %.2f MB, %d DeltaNet layers; %s)\n",
			gb(c.StateBytes()), c.StateSlots, float64(c.StateBytesPerRequest)/1e6, c.linearLayers, rule)
	}
	fmt.Fprintf(&b, "  = KV cache          %s per GPU\n", gb(c.KVBytes))
	if c.indexHeadDim > 0 {
		fmt.Fprintf(&b, "KV per token          %d layers × (%d kv_lora_rank + %d qk_rope_head_dim latent, kv_cache_dtype %s + %d-wide FP8 indexer key with its scales) = %d B per GPU (DSA: SGLang's NSA pool, whole on every GPU)\n",
			c.layers, c.mlaLatent, c.mlaRope, c.KVCacheDtype, c.indexHeadDim, c.KVBytesPerToken)
	} else if c.mlaLatent > 0 {
		fmt.Fprintf(&b, "KV per token          %d layers × (%d kv_lora_rank + %d qk_rope_head_dim) × %d B (kv_cache_dtype %s) = %d B per GPU (MLA: the latent, whole on every GPU)\n",
			c.layers, c.mlaLatent, c.mlaRope, c.KVElementBytes, c.KVCacheDtype, c.KVBytesPerToken)
	} else {
		fmt.Fprintf(&b, "KV per token          %d layers × 2 (K, V) × %d KV heads × %d head_dim × %d B (kv_cache_dtype %s) = %d B per GPU\n",
			c.layers, c.kvHeadsPerGPU, c.headDim, c.KVElementBytes, c.KVCacheDtype, c.KVBytesPerToken)
	}
	if c.linearLayers > 0 {
		fmt.Fprintf(&b, "                      (full-attention layers only: the %d DeltaNet layers keep a fixed state per request instead)\n", c.linearLayers)
	}
	if c.slidingLayers > 0 {
		fmt.Fprintf(&b, "                      (full-attention layers only: the %d sliding-window layers keep %d tokens a request, vLLM's hybrid allocator)\n",
			c.slidingLayers, c.window)
	}
	fmt.Fprintf(&b, "                      %d B = %.0f KiB per worker (all %d GPUs)\n",
		c.KVBytesPerTokenTotal, float64(c.KVBytesPerTokenTotal)/1024, c.GPUs)
	fmt.Fprintf(&b, "KV blocks             %s / (%d B × %d tokens) = %d blocks (%d tokens per worker)\n",
		strings.TrimSpace(gb(c.KVBytes)), c.KVBytesPerToken, c.BlockSize, c.DerivedBlocks, int64(c.DerivedBlocks)*int64(c.BlockSize))
	if c.Overridden {
		fmt.Fprintf(&b, "num_gpu_blocks        %d (set by the deployment, overrides the derived %d)\n", c.NumGPUBlocks, c.DerivedBlocks)
	}
	return b.String()
}

// KVBytesPerTokenModel is the model's KV cache bytes per token over all its layers and KV
// heads, not replicated across GPUs: what a disaggregated handoff moves per prompt token, as
// Dynamo's mocker computes kv_bytes_per_token (layers × 2 × KV heads × head dim × element
// bytes, lib/mocker/src/common/protocols.rs at 04c3ab60); sliding-window layers and multi-head
// latent attention as the cache holds them.
func (w *Worker) KVBytesPerTokenModel() int64 {
	c := w.Capacity()
	s := w.table.LLM
	if s.MLA() {
		return c.KVBytesPerToken // the latent is one copy per GPU already
	}
	return c.layers * 2 * int64(s.KVHeads) * c.headDim * int64(c.KVElementBytes)
}
