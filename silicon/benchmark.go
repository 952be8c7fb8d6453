package silicon

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/specdec"
)

// Benchmark is how a measured row was produced: the server's engine arguments, the client's
// load and how it measured. Every row is replayed as its benchmark ran.
type Benchmark struct {
	Name string `json:"name"`
	// Server (vllm serve) arguments on top of the seed model and GPU.
	KVCacheDtype         string  `json:"kv_cache_dtype"`
	BlockSize            int     `json:"block_size"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"`
	// MaxNumBatchedTokens is the step's token budget; BatchedTokensPerISL, when > 0, sets it
	// per row to that multiple of the row's ISL instead (InferenceX: --max-num-batched-tokens
	// $((ISL*2))).
	MaxNumBatchedTokens int `json:"max_num_batched_tokens,omitempty"`
	BatchedTokensPerISL int `json:"batched_tokens_per_isl,omitempty"`
	// BatchedTokensIsModelLen sets it per row to the row's max_model_len (InferenceX's TRT-LLM
	// scripts: --max_num_tokens $MAX_MODEL_LEN).
	BatchedTokensIsModelLen bool `json:"batched_tokens_is_model_len,omitempty"`
	// BatchedTokensAboveBatch, when > 0, sets it per row to ISL + concurrency + this
	// (AIConfigurator's TRT-LLM benchmark rule: max_num_tokens = max_batch_size + ISL + 1500).
	BatchedTokensAboveBatch int `json:"batched_tokens_above_batch,omitempty"`
	MaxNumSeqs              int `json:"max_num_seqs"`
	// MaxNumSeqsIsConcurrency sets max_num_seqs per row to its concurrency instead
	// (InferenceX's Hopper scripts: --max-num-seqs $CONC).
	MaxNumSeqsIsConcurrency bool `json:"max_num_seqs_is_concurrency,omitempty"`
	AsyncScheduling         bool `json:"async_scheduling"`
	// Speculative is the server's MTP speculative decoding (TensorRT-LLM's speculative_config);
	// with BatchedTokensAboveBatch its max_num_tokens holds each request's drafts too.
	Speculative   specdec.Config `json:"speculative,omitzero"`
	PrefixCaching bool           `json:"prefix_caching"`
	// ExtraModelLen sets max_model_len to ISL + OSL + this (0: the seed's context length).
	ExtraModelLen int `json:"extra_model_len,omitempty"`
	// MaxModelLen is a fixed max_model_len (InferenceX's H100 scripts: 10240); it wins over
	// ExtraModelLen.
	MaxModelLen int `json:"max_model_len,omitempty"`
	// Float32MatmulPrecision is VLLM_FLOAT32_MATMUL_PRECISION for every row (model.Precision*);
	// "" takes it from the row's date: rows measured on or after HighPrecisionSince (YYYY-MM-DD)
	// ran with "high", earlier ones (and undated ones) with vLLM's default "highest".
	Float32MatmulPrecision string `json:"float32_matmul_precision,omitempty"`
	HighPrecisionSince     string `json:"high_float32_matmul_precision_since,omitempty"`
	// Client: lengths uniform on the integers [⌊L × RangeRatio⌋, L] for the row's ISL and OSL
	// (1: exactly ISL/OSL); WarmupPerSlot × concurrency warm-up requests run to completion
	// first and are not measured; then RequestsPerSlot × concurrency timed requests, all
	// submitted at once behind a semaphore of the row's concurrency (the first wave is a
	// burst). TTFT is the first streamed token, TPOT (e2e − TTFT) / (output tokens − 1) per
	// request, both averaged over the timed requests, as the client computes them.
	RangeRatio      float64 `json:"range_ratio"`
	WarmupPerSlot   int     `json:"warmup_per_slot"`
	RequestsPerSlot int     `json:"requests_per_slot"`
	// ServerTokensPerClientToken, when > 0, is how many tokens the server's tokenizer makes
	// of each token the client counted in a text prompt (0: the same count): a prompt the
	// client drew at L tokens reaches the engine as ⌊L × this + ½⌋ (InferenceX's client under
	// transformers 5, whose tokenizer disagreed with the server's: dsr1ClientTokenizerV5).
	ServerTokensPerClientToken float64 `json:"server_tokens_per_client_token,omitempty"`
	// DatasetEntriesPerSlot, when > 0, replays aiperf's synthetic dataset as its releases up
	// to at least db4f6397 sample it: DatasetEntriesPerSlot × concurrency distinct prompts
	// (--num-dataset-entries), every warm-up and timed request drawing one uniformly with
	// replacement (datasetDraws). 0: every timed request a prompt of its own.
	DatasetEntriesPerSlot int `json:"dataset_entries_per_slot,omitempty"`
	// APIServerTokenizeNS is what the server spends tokenising a text prompt, in ns per prompt
	// token, before the engine sees the request (0: the client sends token ids).
	APIServerTokenizeNS int `json:"api_server_tokenize_ns"`
	// APIServerTokenizeBatching is how the server's tokenizer runs a batch of prompts, as the
	// run's vLLM release did (model.TokenizeBatchingOf; "": serial).
	APIServerTokenizeBatching string `json:"api_server_tokenize_batching,omitempty"`
	// RequestPathUS and StreamEndUS are the client's HTTP request path (model.Deployment):
	// from its send to the API server's handler (in TTFT), and in the closed loop from a
	// stream's last token leaving the server to the next send (0: the instant client).
	RequestPathUS int `json:"request_path_us,omitempty"`
	StreamEndUS   int `json:"stream_end_us,omitempty"`
	// MaxCUDAGraphCaptureSize is vLLM's max_cudagraph_capture_size (0: vLLM's default,
	// which the measured runs used); larger steps run without CUDA graphs.
	MaxCUDAGraphCaptureSize int `json:"max_cudagraph_capture_size"`
	// CUDAGraphMode is the script's compilation_config.cudagraph_mode ("": vLLM's default;
	// FULL_DECODE_ONLY runs steps holding a prefill chunk without graphs).
	CUDAGraphMode string `json:"cudagraph_mode,omitempty"`
	// SharedExpertsStreamTokens is VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD (0: vLLM's
	// default, 256; -1: no second stream), which no run set.
	SharedExpertsStreamTokens int `json:"shared_experts_stream_tokens,omitempty"`
	// MemoryBudget is how each row's KV cache is sized (model.MemoryBudget*). "": as the
	// measured vLLM server's profiler sized it, model.MemoryBudgetVLLM — every row is a vLLM
	// release before 0.21, whose budget leaves NCCL and CUDA graphs out (model/capacity.go).
	MemoryBudget string `json:"memory_budget,omitempty"`
	// FuseAllReduceRMS is the script's compilation_config.pass_config.fuse_allreduce_rms
	// (enable_fi_allreduce_fusion before vLLM 0.11): FlashInfer's fused all-reduce + add +
	// RMSNorm in small steps (model/fusion.go); nil when the script leaves it to the vLLM
	// release's default (model.VLLMFusesAllReduceRMS). AllReduceFusionMaxMB is the script's
	// VLLM_FLASHINFER_ALLREDUCE_FUSION_THRESHOLDS_MB by TP size (zero: vLLM's default).
	FuseAllReduceRMS     *bool            `json:"fuse_allreduce_rms,omitempty"`
	AllReduceFusionMaxMB FusionThresholds `json:"allreduce_fusion_max_mb,omitzero"`
	// ExpertParallel is the script's --enable-expert-parallel: false when the script never
	// passes it, so vLLM shards every expert over the tensor-parallel group (its default,
	// FusedMoEParallelConfig without expert parallelism) whatever moe_ep the row is labelled
	// with; true when it always spreads the experts over the worker's GPUs (TensorRT-LLM's
	// --ep_size equal to --tp_size) whatever moe_tp the row is labelled with; nil replays the
	// row's labels.
	ExpertParallel *bool `json:"expert_parallel,omitempty"`
	// AttentionDP: the script enables attention data parallelism whatever the row's label,
	// so the label's tp GPUs ran as that many one-GPU attention ranks with the experts over
	// all of them (scriptAttentionDP, model/attentiondp.go).
	AttentionDP bool `json:"attention_dp,omitempty"`
	// SGLangMaxPrefillTokens and SGLangRecvInterval are SGLang's --max-prefill-tokens and
	// --scheduler-recv-interval (engine.SchedulerConfig; 0: SGLang's defaults).
	SGLangMaxPrefillTokens int `json:"sglang_max_prefill_tokens,omitempty"`
	SGLangRecvInterval     int `json:"sglang_scheduler_recv_interval,omitempty"`
	// TRTLLMBatchWaitIters and TRTLLMBatchWaitRatio are TensorRT-LLM's
	// batch_wait_timeout_iters and batch_wait_max_tokens_ratio as the script sets them
	// (engine.SchedulerConfig; 0: off, the release's default). TensorRT-LLM ignores them
	// with attention data parallelism.
	TRTLLMBatchWaitIters int     `json:"trtllm_batch_wait_timeout_iters,omitempty"`
	TRTLLMBatchWaitRatio float64 `json:"trtllm_batch_wait_max_tokens_ratio,omitempty"`
	// TRTLLMADPBalance is the script's attention_dp_config (enable_balance, timeout_iters,
	// batching_wait_iters) for the rows it runs with attention data parallelism
	// (engine.SchedulerConfig).
	TRTLLMADPBalance           bool `json:"trtllm_adp_balance,omitempty"`
	TRTLLMADPTimeoutIters      int  `json:"trtllm_adp_timeout_iters,omitempty"`
	TRTLLMADPBatchingWaitIters int  `json:"trtllm_adp_batching_wait_iters,omitempty"`
	// MoEBackend is TensorRT-LLM's moe_config.backend or SGLang's --moe-runner-backend as the
	// script sets it when that is not the release's default (model.MoEBackendTRTLLM,
	// model.MoERunnerFlashInferTRTLLM); "" the default's kernels.
	MoEBackend string `json:"moe_backend,omitempty"`
	// CUTLASSWithAttentionDP: on layouts with attention data parallelism the script runs the
	// release's default CUTLASS experts instead of MoEBackend (InferenceX's
	// dsr1_fp4_b200_trt.sh from 6eecc0e66: MOE_BACKEND CUTLASS under DP_ATTENTION).
	CUTLASSWithAttentionDP bool `json:"cutlass_with_attention_dp,omitempty"`
	// BatchedTokensAtLeast is a floor on the computed max_num_batched_tokens (the 2026
	// InferenceX TensorRT-LLM scripts' max_num_tokens of at least 8,192); 0: none.
	BatchedTokensAtLeast int `json:"batched_tokens_at_least,omitempty"`
	// TimingReference prices the replay (model.ReferenceSilicon when empty; dynosim shows how
	// Dynamo's mocker with AIConfigurator's pricing fares against the measurements).
	TimingReference string `json:"timing_reference,omitempty"`
}

// fusesAllReduceRMS says whether deployment d, serving row r, fuses all-reduce + RMSNorm: as
// the script sets it, else as the vLLM release that measured the row does by default (not
// the release of the tables that price it).
func (b Benchmark) fusesAllReduceRMS(r Row, d model.Deployment) bool {
	if b.FuseAllReduceRMS != nil {
		return *b.FuseAllReduceRMS
	}
	return model.VLLMFusesAllReduceRMS(r.BackendVersion, d.HardwareSKU, d.TP, d.AttentionDP)
}

// FusionThresholds is VLLM_FLASHINFER_ALLREDUCE_FUSION_THRESHOLDS_MB: the largest all-reduce
// input (MiB) fused at each TP size; zero takes vLLM's default.
type FusionThresholds struct {
	TP2 float64 `json:"2,omitempty"`
	TP4 float64 `json:"4,omitempty"`
	TP8 float64 `json:"8,omitempty"`
}

// at is the threshold of a TP size (0: vLLM's default).
func (f FusionThresholds) at(tp int) float64 {
	return map[int]float64{2: f.TP2, 4: f.TP4, 8: f.TP8}[tp]
}

// InferenceXTokenizeNS is what vLLM's API server spends tokenising InferenceX's random text
// prompts, 3,400 ns per prompt token on one thread: a published rate times a measured ratio,
// nothing read from the rows. vllm#19012 (a maintainer, DGX H100 host) times the HF fast
// tokenizer at 10.7 ms for "hi " × 10,000, 1.07 µs per token; InferenceX's prompts are
// consecutive vocabulary ids decoded to text (benchmark_serving.py, sample_random_requests),
// whose words miss the BPE word cache, and cost 3.16 times that per token (HF tokenizers 0.23.2,
// one thread, each prompt timed once on a tokenizer warmed by other such prompts, against
// "hi " × 10,000 on its own, alternated in one run: ISL 1024 3.46 and 3.56, ISL 8192 2.78 and
// 2.84 on GPT-4o's 200 k and DeepSeek-V3's 128 k byte-level BPE vocabularies, stand-ins for
// MiniMax-M2.5's, which is not available offline; silicon/testdata/tokenizer-rate).
// 1.07 × 3.16 = 3.38 µs. The same rate serves every model of the sample: on gpt-oss's own
// o200k_harmony vocabulary and Llama 3.1's 128 k one, InferenceX's prompts cost within 7 % of
// GPT-4o's per token on the same machine (7.07, 7.60 and 7.30 µs at ISL 1024). The engine
// queues it as the run's vLLM release batches a completion prompt (engine/apiserver.go,
// model.TokenizeBatchingOf).
const InferenceXTokenizeNS = 3400

// InferenceXRequestPathUS and InferenceXStreamEndUS are InferenceX's client's HTTP request
// path around vLLM's OpenAI server, measured on this project's 2-core host (not the DGX host
// that ran the rows) by silicon/requestpath: InferenceX's own request function
// (backend_request_func.py at bddbf403: a new aiohttp.ClientSession per request, a streamed
// POST to /v1/completions) in benchmark_serving.py's closed loop against a stub that streams
// as vLLM 0.19's completion endpoint does (FastAPI under uvicorn on uvloop, SSE chunks every
// 20 tokens, usage, [DONE]). Request path: send → the handler holding the parsed request;
// stream end: the last token's chunk handed to the socket → the next send. The median of
// 12 runs' medians (c 4, 8 and 16, four runs each; the stream end over the 8 runs that timed
// it): 1.96 and 0.98 ms, with no trend in concurrency (request path 2.06, 1.88, 1.84 ms at c
// 4, 8, 16). Nothing in them comes from the rows (docs/validation.md, "The request path, measured").
const (
	InferenceXRequestPathUS = 1960
	InferenceXStreamEndUS   = 980
)

// InferenceX is the benchmark the shared silicon rows come from (SemiAnalysis InferenceX,
// benchmarks/single_node/minimaxm2.5_fp8_b200.sh at commit bddbf403, image
// vllm/vllm-openai:v0.19.0): `vllm serve --gpu-memory-utilization 0.90 --block-size=32
// --kv-cache-dtype fp8 --max-cudagraph-capture-size 2048 --max-num-batched-tokens $((ISL*2))
// --no-enable-prefix-caching` with
// vLLM's default max_num_seqs (1024 on GPUs of 70 GiB and more) and its default async
// scheduler (since v0.14), max_model_len ISL + OSL + 200; its client
// (utils/bench_serving/benchmark_serving.py via benchmark_lib.sh) uses --random-range-ratio
// 0.8, --ignore-eos, --request-rate inf with --max-concurrency CONC, --num-warmups 2 × CONC
// and --num-prompts 10 × CONC, and posts each prompt as text to /v1/completions, which the
// server tokenises (InferenceXTokenizeNS). The script's one later change that reaches the kernels,
// commit 41ed82dc1 (2026-04-21 17:00 PDT), exports VLLM_FLOAT32_MATMUL_PRECISION=high: runs
// from 2026-04-22 on compute the FP32 router gate on TF32 tensor cores.
func InferenceX() Benchmark {
	return Benchmark{
		Name: "inferencex", KVCacheDtype: model.KVFP8, BlockSize: 32, GPUMemoryUtilization: 0.9,
		BatchedTokensPerISL: 2, MaxNumSeqs: 1024, AsyncScheduling: true, PrefixCaching: false,
		ExtraModelLen: 200, HighPrecisionSince: "2026-04-22",
		MaxCUDAGraphCaptureSize: 2048, APIServerTokenizeNS: InferenceXTokenizeNS,
		RequestPathUS: InferenceXRequestPathUS, StreamEndUS: InferenceXStreamEndUS,
		RangeRatio: InferenceXRangeRatio, WarmupPerSlot: 2, RequestsPerSlot: 10,
	}
}

// Ideal is the textbook closed-loop benchmark: vLLM's serving defaults for large GPUs (8192
// batched tokens, 1024 sequences) on the seed worker, every request exactly ISL/OSL, the
// step-synchronous scheduler, no warm-up.
func Ideal() Benchmark {
	d := model.SeedDeployment()
	return Benchmark{
		Name: "ideal", KVCacheDtype: d.KVCacheDtype, BlockSize: d.BlockSize, GPUMemoryUtilization: d.GPUMemoryUtilization,
		MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024, PrefixCaching: true, Float32MatmulPrecision: model.PrecisionHighest,
		RangeRatio: 1, RequestsPerSlot: 10,
	}
}

// Benchmarks lists the named profiles; under inferencex each row takes its own run's
// settings (InferenceXRuns), InferenceX() being the seed's.
func Benchmarks() []Benchmark { return []Benchmark{InferenceX(), Ideal()} }

// BenchmarkNamed returns a named profile.
func BenchmarkNamed(name string) (Benchmark, error) {
	var names []string
	for _, b := range Benchmarks() {
		if b.Name == name {
			return b, nil
		}
		names = append(names, b.Name)
	}
	return Benchmark{}, fmt.Errorf("silicon: unknown benchmark %q (want one of %s)", name, strings.Join(names, ", "))
}

// The memory budget of validation: a row's replay holds a request (about 200 bytes with its
// share of the engine) per warm-up and timed request and an 8-byte hash id per prompt block,
// so these bound one replay to about 0.5 GB whatever the flags and the CSV say.
const (
	MaxRequestsPerSlot = 1000    // --requests-per-slot, --warmup-per-slot and --dataset-entries-per-slot
	MaxReplayRequests  = 1 << 20 // warm-up and timed requests of one row
	MaxReplayBlocks    = 1 << 25 // prompt blocks of one row's distinct prompts (timed, or aiperf's dataset)
)

// InferenceXRangeRatio is InferenceX's RANDOM_RANGE_RATIO (.github/workflows/benchmark-tmpl.yml).
const InferenceXRangeRatio = 0.8

func (b Benchmark) check() error {
	switch {
	case !(b.RangeRatio > 0 && b.RangeRatio <= 1):
		return fmt.Errorf("silicon: benchmark %s: range ratio %g is not in (0, 1]", b.Name, b.RangeRatio)
	case b.RequestsPerSlot < 1 || b.RequestsPerSlot > MaxRequestsPerSlot:
		return fmt.Errorf("silicon: benchmark %s: requests per slot %d, want 1 to %d (the memory budget of a row's replay)", b.Name, b.RequestsPerSlot, MaxRequestsPerSlot)
	case b.WarmupPerSlot < 0 || b.WarmupPerSlot > MaxRequestsPerSlot:
		return fmt.Errorf("silicon: benchmark %s: warm-up requests per slot %d, want 0 to %d (the memory budget of a row's replay)", b.Name, b.WarmupPerSlot, MaxRequestsPerSlot)
	case b.DatasetEntriesPerSlot < 0 || b.DatasetEntriesPerSlot > MaxRequestsPerSlot:
		return fmt.Errorf("silicon: benchmark %s: dataset entries per slot %d, want 0 to %d (the memory budget of a row's replay)", b.Name, b.DatasetEntriesPerSlot, MaxRequestsPerSlot)
	case b.TimingReference != "" && !slices.Contains(model.TimingReferences(), b.TimingReference):
		return fmt.Errorf("silicon: benchmark %s: timing_reference %q (want one of %s)", b.Name, b.TimingReference, strings.Join(model.TimingReferences(), ", "))
	case b.MaxCUDAGraphCaptureSize < 0:
		return fmt.Errorf("silicon: benchmark %s: max_cudagraph_capture_size %d, want >= 0", b.Name, b.MaxCUDAGraphCaptureSize)
	case b.CUDAGraphMode != "" && !slices.Contains(model.CUDAGraphModes(), b.CUDAGraphMode):
		return fmt.Errorf("silicon: benchmark %s: cudagraph_mode %q (want one of %s)", b.Name, b.CUDAGraphMode, strings.Join(model.CUDAGraphModes(), ", "))
	case b.SharedExpertsStreamTokens < -1:
		return fmt.Errorf("silicon: benchmark %s: shared_experts_stream_tokens %d, want >= -1", b.Name, b.SharedExpertsStreamTokens)
	case min(b.AllReduceFusionMaxMB.TP2, b.AllReduceFusionMaxMB.TP4, b.AllReduceFusionMaxMB.TP8) < 0:
		return fmt.Errorf("silicon: benchmark %s: negative all-reduce fusion threshold", b.Name)
	case b.ServerTokensPerClientToken != 0 && !(b.ServerTokensPerClientToken >= 1 && !math.IsInf(b.ServerTokensPerClientToken, 1)):
		return fmt.Errorf("silicon: benchmark %s: server_tokens_per_client_token %v, want 0 (the same count) or a finite number >= 1", b.Name, b.ServerTokensPerClientToken)
	case b.APIServerTokenizeNS < 0:
		return fmt.Errorf("silicon: benchmark %s: api_server_tokenize_ns %d, want >= 0", b.Name, b.APIServerTokenizeNS)
	case b.RequestPathUS < 0 || b.StreamEndUS < 0:
		return fmt.Errorf("silicon: benchmark %s: request_path_us %d, stream_end_us %d, want >= 0", b.Name, b.RequestPathUS, b.StreamEndUS)
	case b.MemoryBudget != "" && !slices.Contains(model.MemoryBudgets(), b.MemoryBudget):
		return fmt.Errorf("silicon: benchmark %s: memory_budget %q, want one of %s", b.Name, b.MemoryBudget, strings.Join(model.MemoryBudgets(), ", "))
	case b.APIServerTokenizeBatching != "" && !slices.Contains(model.TokenizeBatchings(), b.APIServerTokenizeBatching):
		return fmt.Errorf("silicon: benchmark %s: api_server_tokenize_batching %q, want one of %s", b.Name, b.APIServerTokenizeBatching,
			strings.Join(model.TokenizeBatchings(), ", "))
	case b.SGLangMaxPrefillTokens < 0 || b.SGLangRecvInterval < 0:
		return fmt.Errorf("silicon: benchmark %s: negative sglang max_prefill_tokens or scheduler_recv_interval", b.Name)
	case b.TRTLLMADPTimeoutIters < 0 || b.TRTLLMADPBatchingWaitIters < 0:
		return fmt.Errorf("silicon: benchmark %s: trtllm attention_dp_config timeout_iters %d, batching_wait_iters %d (want >= 0)", b.Name, b.TRTLLMADPTimeoutIters, b.TRTLLMADPBatchingWaitIters)
	case b.TRTLLMBatchWaitIters < 0 || !(b.TRTLLMBatchWaitRatio >= 0 && b.TRTLLMBatchWaitRatio <= 1):
		return fmt.Errorf("silicon: benchmark %s: trtllm batch_wait_timeout_iters %d (want >= 0), batch_wait_max_tokens_ratio %v (want 0…1)", b.Name, b.TRTLLMBatchWaitIters, b.TRTLLMBatchWaitRatio)
	case b.MaxNumBatchedTokens < 0 || b.BatchedTokensPerISL < 0 || b.BatchedTokensAboveBatch < 0 || b.ExtraModelLen < 0 || b.MaxModelLen < 0:
		return fmt.Errorf("silicon: benchmark %s: negative batched tokens or model length", b.Name)
	case !slices.Contains(model.KVCacheDtypes(), b.KVCacheDtype):
		return fmt.Errorf("silicon: benchmark %s: kv_cache_dtype %q (want one of %s)", b.Name, b.KVCacheDtype, strings.Join(model.KVCacheDtypes(), ", "))
	case b.MaxNumBatchedTokens == 0 && b.BatchedTokensPerISL == 0 && b.BatchedTokensAboveBatch == 0:
		return fmt.Errorf("silicon: benchmark %s: neither max_num_batched_tokens nor a multiple of ISL is set", b.Name)
	case b.Float32MatmulPrecision != "" && !slices.Contains(model.Float32MatmulPrecisions(), b.Float32MatmulPrecision):
		return fmt.Errorf("silicon: benchmark %s: float32_matmul_precision %q (want one of %s)", b.Name, b.Float32MatmulPrecision,
			strings.Join(model.Float32MatmulPrecisions(), ", "))
	case b.Float32MatmulPrecision == "" && !isDate(b.HighPrecisionSince):
		return fmt.Errorf("silicon: benchmark %s: neither a float32_matmul_precision nor a YYYY-MM-DD date from which runs used high", b.Name)
	}
	return nil
}

func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// float32Precision is the VLLM_FLOAT32_MATMUL_PRECISION row r ran with under this benchmark.
func (b Benchmark) float32Precision(r Row) string {
	if b.Float32MatmulPrecision != "" {
		return b.Float32MatmulPrecision
	}
	if len(r.Measured) >= 10 && isDate(r.Measured[:10]) && r.Measured[:10] >= b.HighPrecisionSince {
		return model.PrecisionHigh
	}
	return model.PrecisionHighest
}

// serverTokens is how many tokens the server makes of a text prompt the client drew at n
// tokens (Benchmark.ServerTokensPerClientToken).
func (b Benchmark) serverTokens(n int) int {
	if b.ServerTokensPerClientToken == 0 {
		return n
	}
	return int(math.Round(float64(n) * b.ServerTokensPerClientToken))
}

// deployment is the worker serving row r under this benchmark.
func (b Benchmark) deployment(r Row) model.Deployment {
	d := model.SeedDeployment()
	d.BackendVersion, d.TP, d.AttentionDP, d.MoETP, d.MoEEP = r.BackendVersion, r.TP, r.AttentionDP, r.MoETP, r.MoEEP
	// A row that names its checkpoint, system or backend (AIConfigurator's sample) is replayed
	// on that one's tables; a combination without tables is skipped with the loader's reason.
	if r.Model != "" {
		d.ModelName = r.Model
	}
	if r.System != "" {
		d.HardwareSKU = r.System
	}
	if r.Backend != "" {
		d.Backend = model.Backend(r.Backend)
	}
	d.Quantization = quantizationOf(r.Precision)
	if v := model.NearestVersion(d.ModelName, d.HardwareSKU, r.BackendVersion); v != "" {
		d.BackendVersion = v // stated per row (Result.ReplayedVersion)
	}
	switch d.Backend {
	case model.BackendSGLang:
		d.BackendVersion = model.SGLangTablesVersion(d.HardwareSKU, r.BackendVersion) // the run's release's collection
	case model.BackendTRTLLM:
		d.BackendVersion = d.Backend.EmbeddedVersion() // the one embedded release
	}
	d.KVCacheDtype, d.BlockSize, d.GPUMemoryUtilization = b.KVCacheDtype, b.BlockSize, b.GPUMemoryUtilization
	d.MaxNumBatchedTokens, d.MaxNumSeqs = b.MaxNumBatchedTokens, b.MaxNumSeqs
	if b.BatchedTokensPerISL > 0 {
		d.MaxNumBatchedTokens = b.BatchedTokensPerISL * r.ISL
	}
	if b.MaxNumSeqsIsConcurrency {
		d.MaxNumSeqs = r.Concurrency
	}
	if b.BatchedTokensAboveBatch > 0 {
		d.MaxNumBatchedTokens = r.ISL + (1+b.Speculative.DraftLen)*r.Concurrency + b.BatchedTokensAboveBatch
	}
	d.Speculative = b.Speculative
	d.MaxNumBatchedTokens = max(d.MaxNumBatchedTokens, b.BatchedTokensAtLeast)
	switch {
	case b.MaxModelLen > 0:
		d.ContextLength = b.MaxModelLen
	case b.ExtraModelLen > 0:
		d.ContextLength = r.ISL + r.OSL + b.ExtraModelLen
	}
	// Dynamo's mocker has no asynchronous scheduler: under dynosim every pass is scheduled
	// when the previous one ends.
	d.AsyncScheduling, d.NoPrefixCaching = b.AsyncScheduling && b.TimingReference != model.ReferenceDynosim, !b.PrefixCaching
	d.Float32MatmulPrecision = b.float32Precision(r)
	d.APIServerTokenizeNS, d.APIServerTokenizeBatching = b.APIServerTokenizeNS, b.APIServerTokenizeBatching
	d.RequestPathUS, d.StreamEndUS = b.RequestPathUS, b.StreamEndUS
	d.MaxCUDAGraphCaptureSize, d.CUDAGraphMode = b.MaxCUDAGraphCaptureSize, b.CUDAGraphMode
	d.TimingReference, d.MoEBackend = b.TimingReference, b.MoEBackend
	if b.CUTLASSWithAttentionDP && r.AttentionDP > 1 {
		d.MoEBackend = ""
	}
	d.SharedExpertsStreamTokens = b.SharedExpertsStreamTokens
	d.MemoryBudget = cmp.Or(b.MemoryBudget, model.MemoryBudgetVLLM)
	d.FuseAllReduceRMS, d.AllReduceFusionMaxMB = b.fusesAllReduceRMS(r, d), b.AllReduceFusionMaxMB.at(r.TP)
	if d.Backend.OrDefault() != model.BackendVLLM {
		d.FuseAllReduceRMS = false // vLLM's fusion pass; SGLang's and TRT-LLM's are not modelled
	}
	if b.BatchedTokensIsModelLen && d.ContextLength > 0 {
		d.MaxNumBatchedTokens = d.ContextLength
	}
	return d
}

// String describes the benchmark in one line.
func (b Benchmark) String() string {
	lengths, sched, cache := "fixed ISL/OSL", "step-synchronous", "prefix caching on"
	if b.RangeRatio < 1 {
		lengths = fmt.Sprintf("lengths uniform in [%g × ISL/OSL, ISL/OSL]", b.RangeRatio)
	}
	if b.AsyncScheduling {
		sched = "async"
	}
	if !b.PrefixCaching {
		cache = "prefix caching off"
	}
	tokens := fmt.Sprintf("max_num_batched_tokens %d", b.MaxNumBatchedTokens)
	if b.BatchedTokensPerISL > 0 {
		tokens = fmt.Sprintf("max_num_batched_tokens %d × ISL", b.BatchedTokensPerISL)
	}
	if b.BatchedTokensAboveBatch > 0 {
		tokens = fmt.Sprintf("max_num_batched_tokens ISL + concurrency + %d", b.BatchedTokensAboveBatch)
	}
	if b.BatchedTokensAtLeast > 0 {
		tokens += fmt.Sprintf(" (at least %d)", b.BatchedTokensAtLeast)
	}
	fp32 := "float32 matmuls " + b.Float32MatmulPrecision
	if b.Float32MatmulPrecision == "" {
		fp32 = fmt.Sprintf("float32 matmuls highest, high in runs from %s", b.HighPrecisionSince)
	}
	if b.TimingReference == model.ReferenceDynosim {
		sched = "step-synchronous (timing reference dynosim: Dynamo's mocker)"
	}
	prompts := "prompts sent as token ids"
	if b.APIServerTokenizeNS > 0 {
		prompts = fmt.Sprintf("text prompts tokenised by the API server at %d ns/token, %s", b.APIServerTokenizeNS, model.TokenizeBatchingWords(b.APIServerTokenizeBatching))
	}
	if b.ServerTokensPerClientToken > 0 {
		prompts += fmt.Sprintf(", each prompt %g × the client's token count on the server (the client's tokenizer disagrees with the server's)", b.ServerTokensPerClientToken)
	}
	if b.DatasetEntriesPerSlot > 0 {
		prompts += fmt.Sprintf(", each request drawing its prompt with replacement from %d × concurrency (aiperf's synthetic dataset)", b.DatasetEntriesPerSlot)
	}
	if b.RequestPathUS > 0 || b.StreamEndUS > 0 {
		prompts += fmt.Sprintf(", request path %d µs from send to handler and %d µs from a stream's last token to the next send (measured here, not on the DGX host)", b.RequestPathUS, b.StreamEndUS)
	}
	graphs := "CUDA graphs up to vLLM's default capture size"
	if b.MaxCUDAGraphCaptureSize > 0 {
		graphs = fmt.Sprintf("CUDA graphs up to %d tokens", b.MaxCUDAGraphCaptureSize)
	}
	if b.CUDAGraphMode == model.CUDAGraphFullDecodeOnly {
		graphs += " for decode-only steps (cudagraph_mode FULL_DECODE_ONLY: steps holding a prefill run eagerly)"
	}
	switch {
	case b.FuseAllReduceRMS == nil:
		graphs += ", all-reduce + RMSNorm fused where the vLLM release does by default (from 0.18 at TP > 1)"
	case *b.FuseAllReduceRMS:
		graphs += ", all-reduce + RMSNorm fused in small steps"
	}
	if b.ExpertParallel != nil && !*b.ExpertParallel {
		graphs += ", no expert parallelism (experts sharded over the TP group, whatever the moe_ep label)"
	}
	if b.ExpertParallel != nil && *b.ExpertParallel {
		graphs += ", expert parallelism over the worker's GPUs (whatever the moe_tp label)"
	}
	if b.MoEBackend != "" {
		graphs += ", moe_config.backend " + b.MoEBackend
	}
	seqs := fmt.Sprint(b.MaxNumSeqs)
	if b.MaxNumSeqsIsConcurrency {
		seqs = "= concurrency"
	}
	budget := "sized as vLLM's profiler sizes it"
	if b.MemoryBudget == model.MemoryBudgetAIConfigurator {
		budget = "sized by AIConfigurator's memory budget"
	}
	return fmt.Sprintf("%s: %s KV cache, block %d, %s, %s, max_num_seqs %s, %s scheduling, %s, %s, %s; %s, %s, %d warm-up + %d timed requests per slot",
		b.Name, b.KVCacheDtype, b.BlockSize, budget, tokens, seqs, sched, cache, fp32, graphs, lengths, prompts, b.WarmupPerSlot, b.RequestsPerSlot)
}

// scheduler is the engine's scheduler arguments under this benchmark on deployment d: batch
// waiting without attention data parallelism (PyExecutor._schedule skips it then), its
// balancing with it.
func (b Benchmark) scheduler(d model.Deployment) engine.SchedulerConfig {
	c := engine.SchedulerConfig{SGLangMaxPrefillTokens: b.SGLangMaxPrefillTokens, SGLangRecvInterval: b.SGLangRecvInterval}
	if d.AttentionDP <= 1 {
		c.TRTLLMBatchWaitTimeoutIters, c.TRTLLMBatchWaitMaxTokensRatio = b.TRTLLMBatchWaitIters, b.TRTLLMBatchWaitRatio
	} else {
		c.TRTLLMADPBalance, c.TRTLLMADPTimeoutIters, c.TRTLLMADPBatchingWaitIters = b.TRTLLMADPBalance, b.TRTLLMADPTimeoutIters, b.TRTLLMADPBatchingWaitIters
	}
	return c
}
