package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/routerlab/routerlab/specdec"
)

// Deployment is one worker's hardware, parallel layout and vLLM engine arguments: everything
// the step-time and KV-capacity models depend on.
type Deployment struct {
	ModelName      string  // e.g. MiniMaxAI/MiniMax-M2.5
	HardwareSKU    string  // e.g. b200_sxm
	Backend        Backend // vllm, sglang or trtllm ("" is vllm)
	BackendVersion string  // e.g. 0.19.0

	// Quantization is the GEMM dtype the weights are served in (vLLM's --quantization, e.g.
	// fp8 for a BF16 checkpoint quantised at load); "" is the checkpoint's own.
	Quantization string
	// MoEBackend is TensorRT-LLM's moe_config.backend when a run sets one other than its
	// release's default (MoEBackendTRTLLM: the TRTLLM-Gen fused MoE), or SGLang's
	// --moe-runner-backend (MoERunnerFlashInferTRTLLM); "" is the default (backendkernels.go).
	// It keys the table like Quantization does.
	MoEBackend string

	TP          int // tensor parallel size of attention and dense layers
	AttentionDP int // attention data-parallel ranks (1 = none)
	MoETP       int // tensor parallel size inside each expert
	MoEEP       int // expert parallel size

	MaxNumBatchedTokens  int     // token budget of one step
	MaxNumSeqs           int     // running requests at most
	BlockSize            int     // engine KV block size in tokens
	GPUMemoryUtilization float64 // share of GPU memory vLLM may use
	ContextLength        int     // max model length (prompt + output)
	NumGPUBlocks         int     // KV blocks per worker; 0 = derive from memory
	// KVCacheDtype is vLLM's --kv-cache-dtype: KVFP8 stores K and V in one byte per element
	// (attention math stays BF16), KVBF16 in the model's own two ("auto" for this checkpoint).
	// It sets the KV bytes per token, hence the block count, and the attention kernels' price.
	KVCacheDtype string
	// NoPrefixCaching is vLLM's --no-enable-prefix-caching: no prompt block is looked up in
	// or published to the prefix cache (no hits, no KV events).
	NoPrefixCaching bool
	// Float32MatmulPrecision is vLLM's VLLM_FLOAT32_MATMUL_PRECISION (torch's float32 matmul
	// precision): PrecisionHighest runs FP32 matmuls — MiniMax-M2's router gate — on CUDA
	// cores, PrecisionHigh on TF32 tensor cores. "" means vLLM's default, highest.
	Float32MatmulPrecision string
	// AsyncScheduling is vLLM's --async-scheduling (the default from v0.14): a busy engine
	// schedules step N+1 when step N starts, so a request arriving meanwhile waits for the
	// step after. Off: the step-synchronous V1 scheduler, which the replays use.
	AsyncScheduling bool
	// Speculative is TensorRT-LLM's speculative_config with decoding_type MTP (package
	// specdec, model/mtp.go); the zero value is none.
	Speculative specdec.Config `json:",omitzero"`
	// TimingReference is how steps are priced and scheduled: ReferenceSilicon ("" too), the
	// validated model of vLLM's forward pass, or ReferenceDynosim, Dynamo's mocker with
	// AIConfigurator's forward-pass model (see reference.go).
	TimingReference string
	// APIServerTokenizeNS is the API server's tokenisation cost in nanoseconds per prompt
	// token, paid before the engine sees a request sent as text; 0: requests arrive as
	// token ids (Dynamo's frontend tokenises; its replay sends tokens).
	APIServerTokenizeNS int
	// RequestPathUS is the HTTP request path before the API server's handler, in µs: from a
	// client's send (its POST, where TTFT starts) to the handler holding the parsed request —
	// the client's new connection, HTTP, the server's event loop and request parsing. Paid by
	// every request before tokenisation and the engine. 0: none (the simulator's instant client).
	RequestPathUS int
	// StreamEndUS is, in a closed loop, the time from a request's last token leaving the server
	// to the client's next send, in µs: the stream's end reaching the client, its session
	// closed and its slot handed to the next request. Not part of any request's TTFT. 0: the
	// next request is sent the instant the last token is produced.
	StreamEndUS int
	// APIServerTokenizeBatching is how the API server's tokenizer runs a batch of text
	// prompts collected in one 2 ms window (TokenizeSerial, "" too, or TokenizeParallel): it
	// depends on the vLLM release (TokenizeBatchingOf); TokenizeEach has no window (SGLang).
	APIServerTokenizeBatching string
	// MaxCUDAGraphCaptureSize is vLLM's compilation_config.max_cudagraph_capture_size: steps
	// of more tokens run without CUDA graphs (cudagraph.go). 0: vLLM's default.
	MaxCUDAGraphCaptureSize int
	// CUDAGraphMode is vLLM's compilation_config.cudagraph_mode as far as it decides which
	// steps replay a graph (cudagraph.go): "" (vLLM's default, FULL_AND_PIECEWISE from 0.11,
	// PIECEWISE before) or CUDAGraphPiecewise graph every step up to the capture size;
	// CUDAGraphFullDecodeOnly only the steps that hold no prefill chunk.
	CUDAGraphMode string
	// SharedExpertsStreamTokens is vLLM's VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD: steps of
	// at most this many tokens run a MoE layer's shared experts on a second CUDA stream beside
	// the routed experts (worker.go). 0: vLLM's default, 256; -1: no second stream
	// (VLLM_DISABLE_SHARED_EXPERTS_STREAM=1).
	SharedExpertsStreamTokens int
	// FuseAllReduceRMS is vLLM's compilation_config.pass_config.fuse_allreduce_rms: steps of
	// at most AllReduceRMSFusionTokens tokens run each all-reduce and the add + RMSNorm after
	// it as one FlashInfer kernel (fusion.go).
	FuseAllReduceRMS bool
	// AllReduceFusionMaxMB is the largest all-reduce input (MiB) the fusion takes at this TP
	// size (VLLM_FLASHINFER_ALLREDUCE_FUSION_THRESHOLDS_MB); 0: vLLM's default for the GPU.
	AllReduceFusionMaxMB float64
	// MemoryBudget is what the KV cache's memory is computed as (capacity.go):
	// MemoryBudgetAIConfigurator is AIConfigurator's vLLM budget, which also takes the
	// system file's NCCL and runtime memory off; MemoryBudgetVLLM is what vLLM's own profiler
	// (v1 gpu_worker.determine_available_memory, releases 0.11 to 0.20) takes off: weights and
	// the profile step's activation peak only; MemoryBudgetSGLang is SGLang's
	// mem_fraction_static, weights and KV cache only; MemoryBudgetTRTLLM a fraction of what
	// TensorRT-LLM's profiling leaves free. "": the timing reference's (Budget).
	MemoryBudget string
}

// vLLMSharedExpertsStreamTokens is VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD's default.
const vLLMSharedExpertsStreamTokens = 256

// MaxRequestPathUS bounds RequestPathUS and StreamEndUS (and model validate's flags for them):
// a second, far above any measured path.
const MaxRequestPathUS = 1_000_000

// SharedExpertsOverlapTokens is the largest step whose shared experts overlap the routed
// experts: SharedExpertsStreamTokens with vLLM's default for 0; 0 when there is no second
// stream.
func (d Deployment) SharedExpertsOverlapTokens() int {
	switch {
	case d.SharedExpertsStreamTokens < 0:
		return 0
	case d.SharedExpertsStreamTokens == 0:
		return vLLMSharedExpertsStreamTokens
	}
	return d.SharedExpertsStreamTokens
}

// KV-cache dtypes (the values of --kv-cache-dtype routerlab models).
const (
	KVFP8  = "fp8"
	KVBF16 = "bf16"
)

// KVCacheDtypes lists the supported KV-cache dtypes.
func KVCacheDtypes() []string { return []string{KVFP8, KVBF16} }

// Float32 matmul precisions (the values of VLLM_FLOAT32_MATMUL_PRECISION routerlab models).
const (
	PrecisionHighest = "highest"
	PrecisionHigh    = "high"
)

// How vLLM's API server tokenises a batch of text prompts (AsyncMicrobatchTokenizer,
// vllm/utils/async_utils.py, vllm#19334: one batcher collects the prompts that arrive within
// 2 ms, at most 32, and hands them to a one-thread executor in one call).
const (
	// TokenizeSerial: the call encodes the prompts one after another (vLLM 0.16 on). A
	// completion prompt's encode arguments carry truncation to the context + 1 (vllm#31366's
	// early-fail guard, merged in the week to 2026-02-13, after 0.15.1 and before 0.16.0), a
	// max_length that is not the tokenizer's model_max_length, so _queue_key files it under
	// ("encode", "other"), which cannot batch.
	TokenizeSerial = "serial"
	// TokenizeParallel: the call is one batched tokenizer(prompts) (vLLM 0.10 to 0.15:
	// add_special_tokens only, a batchable key), which HF tokenizers' encode_batch runs on its
	// Rayon pool, one prompt per thread (a pool of the host's logical CPUs, 224 on a DGX H100 or
	// B200, more than the batcher's 32 prompts), so it lasts as long as its longest prompt.
	TokenizeParallel = "parallel"
	// TokenizeEach: no batcher — each prompt is tokenised as it arrives, one after another on
	// one thread, and reaches the engine when its own call returns. SGLang's TokenizerManager:
	// _tokenize_texts (python/sglang/srt/managers/tokenizer_manager.py, read at 001067fff)
	// calls the tokenizer inline on the HTTP server's event loop for a single text unless
	// --enable-dynamic-batch-tokenizer (sglang#9382, off by default) routes it through a
	// batcher; InferenceX's SGLang scripts do not set it.
	TokenizeEach = "each"
)

// TokenizeBatchings lists the API server's tokenisation batching modes.
func TokenizeBatchings() []string { return []string{TokenizeSerial, TokenizeParallel, TokenizeEach} }

// TokenizeBatchingOf is how vLLM release version (major.minor.patch) tokenises a batch of
// completion prompts: TokenizeParallel before 0.16.0 (from 0.10.0, AsyncMicrobatchTokenizer's
// first release), TokenizeSerial from 0.16.0 (vllm#31366).
func TokenizeBatchingOf(version string) string {
	if v, ok := releaseNumber(version); ok && v < 16_000 {
		return TokenizeParallel
	}
	return TokenizeSerial
}

// TokenizeBatchingWords says how the API server tokenises a window's prompts in batching.
func TokenizeBatchingWords(batching string) string {
	switch batching {
	case TokenizeParallel:
		return "a 2 ms window's prompts in one parallel call, released together when the longest is done (vLLM 0.10–0.15)"
	case TokenizeEach:
		return "each prompt as it arrives, one after another, no batch window (SGLang's TokenizerManager)"
	}
	return "a 2 ms window's prompts one after another, released together when the last is done (vLLM 0.16 on)"
}

// TokenizeBatching is the batching mode d's API server tokenises with ("" is TokenizeSerial).
func (d Deployment) TokenizeBatching() string {
	if d.APIServerTokenizeBatching == "" {
		return TokenizeSerial
	}
	return d.APIServerTokenizeBatching
}

// The KV-cache memory budgets (Deployment.MemoryBudget).
const (
	MemoryBudgetAIConfigurator = "aiconfigurator"
	MemoryBudgetVLLM           = "vllm"
	// MemoryBudgetSGLang is SGLang's (model_runner.py, profile_max_num_token): the KV pool is
	// what is left of mem_fraction_static (GPUMemoryUtilization) of the memory free once NCCL
	// is set up, after the weights are loaded; activations and CUDA graphs live in the rest.
	MemoryBudgetSGLang = "sglang"
	// MemoryBudgetTRTLLM is TensorRT-LLM's (PyTorch flow, pyexecutor/_util.py,
	// cal_max_tokens): free_gpu_memory_fraction (GPUMemoryUtilization) of what the profiling
	// step leaves free — the memory less the weights, the activation peak at max_num_tokens
	// and the non-torch memory (NCCL).
	MemoryBudgetTRTLLM = "trtllm"
)

// MemoryBudgets lists the supported KV-cache memory budgets.
func MemoryBudgets() []string {
	return []string{MemoryBudgetAIConfigurator, MemoryBudgetVLLM, MemoryBudgetSGLang, MemoryBudgetTRTLLM}
}

// Budget is the memory budget d sizes its KV cache with. Unset, it follows the timing
// reference, the one place that default is read: silicon models a vLLM worker, whose cache
// is what vLLM's own profiler leaves (MemoryBudgetVLLM), as `model validate` sizes every
// measured server; dynosim models Dynamo's mocker priced by AIConfigurator, whose stack
// sizes a vLLM worker with AIConfigurator's budget (MemoryBudgetAIConfigurator).
func (d Deployment) Budget() string {
	switch {
	case d.MemoryBudget != "":
		return d.MemoryBudget
	case d.Dynosim():
		return MemoryBudgetAIConfigurator
	}
	return MemoryBudgetVLLM
}

// Float32MatmulPrecisions lists the supported float32 matmul precisions.
func Float32MatmulPrecisions() []string { return []string{PrecisionHighest, PrecisionHigh} }

// float32Precision is the precision d runs its FP32 matmuls at.
func (d Deployment) float32Precision() string {
	if d.Float32MatmulPrecision == "" {
		return PrecisionHighest
	}
	return d.Float32MatmulPrecision
}

// Layout is the deployment's parallel layout.
func (d Deployment) Layout() Layout {
	return Layout{TP: d.TP, AttentionDP: d.AttentionDP, MoETP: d.MoETP, MoEEP: d.MoEEP}
}

// SeedDeployment is the seed worker: MiniMax-M2.5 FP8 on four B200s in the TEP layout
// (attention TP 4, experts EP 4) under vLLM 0.19.0, with the FP8 KV cache AIConfigurator
// chooses for this block-FP8 checkpoint and the published benchmarks serve with.
func SeedDeployment() Deployment {
	return Deployment{
		ModelName:            "MiniMaxAI/MiniMax-M2.5",
		HardwareSKU:          "b200_sxm",
		Backend:              BackendVLLM,
		BackendVersion:       "0.19.0",
		TP:                   4,
		AttentionDP:          1,
		MoETP:                1,
		MoEEP:                4,
		MaxNumBatchedTokens:  16384,
		MaxNumSeqs:           512,
		BlockSize:            64,
		GPUMemoryUtilization: 0.9,
		ContextLength:        131072,
		KVCacheDtype:         KVFP8,
	}
}

// Upper bounds of a deployment's sizes: the experiment file's ranges (config's key table)
// and model validate's, so that no product of them (tokens × bytes, blocks × workers)
// overflows an int64 and every flag of model info is checked as the file's keys are.
const (
	MaxParallel      = 4096
	MaxBatchedTokens = 1 << 24
	MaxNumSeqs       = 1 << 20
	MaxBlockSize     = 1 << 16
	MaxContextLength = 1 << 24
	MaxNumGPUBlocks  = 1 << 30
)

// Validate checks the engine arguments that the timing and memory models rely on.
func (d Deployment) Validate() error {
	switch {
	case d.TP < 1 || d.AttentionDP < 1 || d.MoETP < 1 || d.MoEEP < 1:
		return fmt.Errorf("deployment: tp, attention_dp, moe_tp and moe_ep must be >= 1 (have %d, %d, %d, %d)",
			d.TP, d.AttentionDP, d.MoETP, d.MoEEP)
	case d.TP > MaxParallel || d.AttentionDP > MaxParallel || d.MoETP > MaxParallel || d.MoEEP > MaxParallel:
		return fmt.Errorf("deployment: tp, attention_dp, moe_tp and moe_ep must be at most %d (have %d, %d, %d, %d)",
			MaxParallel, d.TP, d.AttentionDP, d.MoETP, d.MoEEP)
	case d.MaxNumBatchedTokens > MaxBatchedTokens:
		return fmt.Errorf("deployment: max_num_batched_tokens %d must be at most %d", d.MaxNumBatchedTokens, MaxBatchedTokens)
	case d.MaxNumSeqs > MaxNumSeqs:
		return fmt.Errorf("deployment: max_num_seqs %d must be at most %d", d.MaxNumSeqs, MaxNumSeqs)
	case d.BlockSize > MaxBlockSize:
		return fmt.Errorf("deployment: block_size %d must be at most %d tokens", d.BlockSize, MaxBlockSize)
	case d.ContextLength > MaxContextLength:
		return fmt.Errorf("deployment: context_length %d must be at most %d tokens", d.ContextLength, MaxContextLength)
	case d.NumGPUBlocks > MaxNumGPUBlocks:
		return fmt.Errorf("deployment: num_gpu_blocks %d must be at most %d", d.NumGPUBlocks, MaxNumGPUBlocks)
	case d.TP*d.AttentionDP != d.MoETP*d.MoEEP:
		return fmt.Errorf("deployment: tp×attention_dp (%d) must equal moe_tp×moe_ep (%d)",
			d.TP*d.AttentionDP, d.MoETP*d.MoEEP)
	case d.MaxNumBatchedTokens < 1:
		return fmt.Errorf("deployment: max_num_batched_tokens must be >= 1 (have %d)", d.MaxNumBatchedTokens)
	case d.MaxNumSeqs < 1:
		return fmt.Errorf("deployment: max_num_seqs must be >= 1 (have %d)", d.MaxNumSeqs)
	case d.BlockSize < 1:
		return fmt.Errorf("deployment: block_size must be >= 1 (have %d)", d.BlockSize)
	case !(d.GPUMemoryUtilization > 0 && d.GPUMemoryUtilization <= 1):
		return fmt.Errorf("deployment: gpu_memory_utilization must be in (0, 1] (have %g)", d.GPUMemoryUtilization)
	case d.ContextLength < 0:
		return fmt.Errorf("deployment: context_length must be >= 0 (0: unchecked; have %d)", d.ContextLength)
	case !slices.Contains(KVCacheDtypes(), d.KVCacheDtype):
		return fmt.Errorf("deployment: kv_cache_dtype %q is not supported (want one of %s)", d.KVCacheDtype, strings.Join(KVCacheDtypes(), ", "))
	case d.APIServerTokenizeNS < 0 || d.APIServerTokenizeNS > 1e6:
		return fmt.Errorf("deployment: api_server_tokenize_ns %d must be in [0, 1000000] ns per prompt token", d.APIServerTokenizeNS)
	case d.RequestPathUS < 0 || d.RequestPathUS > MaxRequestPathUS:
		return fmt.Errorf("deployment: request_path_us %d must be in [0, %d] µs", d.RequestPathUS, MaxRequestPathUS)
	case d.StreamEndUS < 0 || d.StreamEndUS > MaxRequestPathUS:
		return fmt.Errorf("deployment: stream_end_us %d must be in [0, %d] µs", d.StreamEndUS, MaxRequestPathUS)
	case !slices.Contains(TokenizeBatchings(), d.TokenizeBatching()):
		return fmt.Errorf("deployment: api_server_tokenize_batching %q is not supported (want one of %s)",
			d.APIServerTokenizeBatching, strings.Join(TokenizeBatchings(), ", "))
	case !slices.Contains(CUDAGraphModes(), d.CUDAGraphMode) && d.CUDAGraphMode != "":
		return fmt.Errorf("deployment: cudagraph_mode %q (want one of %s)", d.CUDAGraphMode, strings.Join(CUDAGraphModes(), ", "))
	case d.MaxCUDAGraphCaptureSize < 0 || d.MaxCUDAGraphCaptureSize > maxCaptureSize:
		return fmt.Errorf("deployment: max_cudagraph_capture_size %d must be in [0, %d] tokens (0: vLLM's default)", d.MaxCUDAGraphCaptureSize, maxCaptureSize)
	case d.SharedExpertsStreamTokens < -1 || d.SharedExpertsStreamTokens > maxCaptureSize:
		return fmt.Errorf("deployment: shared_experts_stream_tokens %d must be in [-1, %d] tokens (0: vLLM's default, 256; -1: no second stream)", d.SharedExpertsStreamTokens, maxCaptureSize)
	case !(d.AllReduceFusionMaxMB >= 0 && d.AllReduceFusionMaxMB <= 1<<10):
		return fmt.Errorf("deployment: all-reduce fusion max size %g MiB must be in [0, 1024] (0: vLLM's default)", d.AllReduceFusionMaxMB)
	case d.NumGPUBlocks < 0:
		return fmt.Errorf("deployment: num_gpu_blocks must be >= 0 (have %d)", d.NumGPUBlocks)
	case !slices.Contains(TimingReferences(), d.timingReference()):
		return fmt.Errorf("deployment: timing_reference %q is not supported (want one of %s)", d.TimingReference, strings.Join(TimingReferences(), ", "))
	case d.Speculative.Validate() != nil:
		return fmt.Errorf("deployment: %w", d.Speculative.Validate())
	case d.Speculative.On() && (d.Backend.OrDefault() != BackendTRTLLM || d.AttentionDP > 1 || d.Dynosim()):
		return fmt.Errorf("deployment: speculative decoding (MTP) is modelled for TensorRT-LLM without attention data parallelism under the silicon reference only")
	case d.Dynosim() && d.AsyncScheduling:
		return fmt.Errorf("deployment: timing_reference dynosim schedules as Dynamo's mocker, which has no asynchronous scheduler: set async_scheduling false")
	case !slices.Contains(MemoryBudgets(), d.Budget()):
		return fmt.Errorf("deployment: memory_budget %q is not supported (want one of %s)", d.MemoryBudget, strings.Join(MemoryBudgets(), ", "))
	case d.Backend != "" && !slices.Contains(Backends(), d.Backend):
		_, err := ParseBackend(string(d.Backend))
		return fmt.Errorf("deployment: %w", err)
	case d.Backend.CheckLayout(d.Layout(), false) != nil:
		return fmt.Errorf("deployment: %w", d.Backend.CheckLayout(d.Layout(), false))
	case !slices.Contains(Float32MatmulPrecisions(), d.float32Precision()):
		return fmt.Errorf("deployment: float32_matmul_precision %q is not supported (want one of %s)",
			d.Float32MatmulPrecision, strings.Join(Float32MatmulPrecisions(), ", "))
	}
	return nil
}
