package silicon

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
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
	MaxNumBatchedTokens int  `json:"max_num_batched_tokens,omitempty"`
	BatchedTokensPerISL int  `json:"batched_tokens_per_isl,omitempty"`
	MaxNumSeqs          int  `json:"max_num_seqs"`
	AsyncScheduling     bool `json:"async_scheduling"`
	PrefixCaching       bool `json:"prefix_caching"`
	// ExtraModelLen sets max_model_len to ISL + OSL + this (0: the seed's context length).
	ExtraModelLen int `json:"extra_model_len,omitempty"`
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
	// APIServerTokenizeNS is what the server spends tokenising a text prompt, in ns per prompt
	// token, before the engine sees the request (0: the client sends token ids).
	APIServerTokenizeNS int `json:"api_server_tokenize_ns"`
	// MaxCUDAGraphCaptureSize is vLLM's max_cudagraph_capture_size (0: vLLM's default,
	// which the measured runs used); larger steps run without CUDA graphs.
	MaxCUDAGraphCaptureSize int `json:"max_cudagraph_capture_size"`
	// TimingReference prices the replay (model.ReferenceSilicon when empty; dynosim shows how
	// Dynamo's mocker with AIConfigurator's pricing fares against the measurements).
	TimingReference string `json:"timing_reference,omitempty"`
}

// VLLMTokenizeNS is the published upper bound on vLLM's API-server tokenisation, 1,340 ns
// per prompt token: vllm#19334 measured 100 completions of 10,000-token text prompts with
// max_tokens 1 at 1.338 s before microbatched tokenisation, everything included (the GPU's
// prefill too), so tokenisation took at most that.
const VLLMTokenizeNS = 1340

// InferenceX is the benchmark the shared silicon rows come from (SemiAnalysis InferenceX,
// benchmarks/single_node/minimaxm2.5_fp8_b200.sh at commit bddbf403, image
// vllm/vllm-openai:v0.19.0): `vllm serve --gpu-memory-utilization 0.90 --block-size=32
// --kv-cache-dtype fp8 --max-num-batched-tokens $((ISL*2)) --no-enable-prefix-caching` with
// vLLM's default max_num_seqs (1024 on GPUs of 70 GiB and more) and its default async
// scheduler (since v0.14), max_model_len ISL + OSL + 200; its client
// (utils/bench_serving/benchmark_serving.py via benchmark_lib.sh) uses --random-range-ratio
// 0.8, --ignore-eos, --request-rate inf with --max-concurrency CONC, --num-warmups 2 × CONC
// and --num-prompts 10 × CONC. The script's one later change that reaches the kernels,
// commit 41ed82dc1 (2026-04-21 17:00 PDT), exports VLLM_FLOAT32_MATMUL_PRECISION=high: runs
// from 2026-04-22 on compute the FP32 router gate on TF32 tensor cores.
func InferenceX() Benchmark {
	return Benchmark{
		Name: "inferencex", KVCacheDtype: model.KVFP8, BlockSize: 32, GPUMemoryUtilization: 0.9,
		BatchedTokensPerISL: 2, MaxNumSeqs: 1024, AsyncScheduling: true, PrefixCaching: false,
		ExtraModelLen: 200, HighPrecisionSince: "2026-04-22",
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

// Benchmarks lists the named profiles.
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
	MaxRequestsPerSlot = 1000    // --requests-per-slot and --warmup-per-slot
	MaxReplayRequests  = 1 << 20 // warm-up and timed requests of one row
	MaxReplayBlocks    = 1 << 25 // prompt blocks of one row's timed requests
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
	case b.TimingReference != "" && !slices.Contains(model.TimingReferences(), b.TimingReference):
		return fmt.Errorf("silicon: benchmark %s: timing_reference %q (want one of %s)", b.Name, b.TimingReference, strings.Join(model.TimingReferences(), ", "))
	case b.MaxCUDAGraphCaptureSize < 0:
		return fmt.Errorf("silicon: benchmark %s: max_cudagraph_capture_size %d, want >= 0", b.Name, b.MaxCUDAGraphCaptureSize)
	case b.APIServerTokenizeNS < 0:
		return fmt.Errorf("silicon: benchmark %s: api_server_tokenize_ns %d, want >= 0", b.Name, b.APIServerTokenizeNS)
	case b.MaxNumBatchedTokens < 0 || b.BatchedTokensPerISL < 0 || b.ExtraModelLen < 0:
		return fmt.Errorf("silicon: benchmark %s: negative batched tokens or model length", b.Name)
	case !slices.Contains(model.KVCacheDtypes(), b.KVCacheDtype):
		return fmt.Errorf("silicon: benchmark %s: kv_cache_dtype %q (want one of %s)", b.Name, b.KVCacheDtype, strings.Join(model.KVCacheDtypes(), ", "))
	case b.MaxNumBatchedTokens == 0 && b.BatchedTokensPerISL == 0:
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
		d.Backend = r.Backend
	}
	d.Quantization = quantizationOf(r.Precision)
	if v := model.NearestVersion(d.ModelName, d.HardwareSKU, r.BackendVersion); v != "" {
		d.BackendVersion = v // stated per row (Result.ReplayedVersion)
	}
	d.KVCacheDtype, d.BlockSize, d.GPUMemoryUtilization = b.KVCacheDtype, b.BlockSize, b.GPUMemoryUtilization
	d.MaxNumBatchedTokens, d.MaxNumSeqs = b.MaxNumBatchedTokens, b.MaxNumSeqs
	if b.BatchedTokensPerISL > 0 {
		d.MaxNumBatchedTokens = b.BatchedTokensPerISL * r.ISL
	}
	if b.ExtraModelLen > 0 {
		d.ContextLength = r.ISL + r.OSL + b.ExtraModelLen
	}
	// Dynamo's mocker has no asynchronous scheduler: under dynosim every pass is scheduled
	// when the previous one ends.
	d.AsyncScheduling, d.NoPrefixCaching = b.AsyncScheduling && b.TimingReference != model.ReferenceDynosim, !b.PrefixCaching
	d.Float32MatmulPrecision = b.float32Precision(r)
	d.APIServerTokenizeNS = b.APIServerTokenizeNS
	d.MaxCUDAGraphCaptureSize = b.MaxCUDAGraphCaptureSize
	d.TimingReference = b.TimingReference
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
	fp32 := "float32 matmuls " + b.Float32MatmulPrecision
	if b.Float32MatmulPrecision == "" {
		fp32 = fmt.Sprintf("float32 matmuls highest, high in runs from %s", b.HighPrecisionSince)
	}
	if b.TimingReference == model.ReferenceDynosim {
		sched = "step-synchronous (timing reference dynosim: Dynamo's mocker)"
	}
	prompts := "prompts sent as token ids"
	if b.APIServerTokenizeNS > 0 {
		prompts = fmt.Sprintf("text prompts tokenised by the API server at %d ns/token", b.APIServerTokenizeNS)
	}
	graphs := "CUDA graphs up to vLLM's default capture size"
	if b.MaxCUDAGraphCaptureSize > 0 {
		graphs = fmt.Sprintf("CUDA graphs up to %d tokens", b.MaxCUDAGraphCaptureSize)
	}
	return fmt.Sprintf("%s: %s KV cache, block %d, %s, max_num_seqs %d, %s scheduling, %s, %s, %s; %s, %s, %d warm-up + %d timed requests per slot",
		b.Name, b.KVCacheDtype, b.BlockSize, tokens, b.MaxNumSeqs, sched, cache, fp32, graphs, lengths, prompts, b.WarmupPerSlot, b.RequestsPerSlot)
}

// Options shape the validation.
type Options struct {
	Benchmark Benchmark // zero value: InferenceX()
	Seed      uint64
}

// Result is one row with its prediction; Skipped rows carry the reason and no prediction.
// Note says how the row was read when its labels were not taken at face value.
type Result struct {
	Row
	PredTTFTMS  float64 `json:"pred_ttft_ms"`
	PredTPOTMS  float64 `json:"pred_tpot_ms"`
	TTFTErrPct  float64 `json:"ttft_err_pct"` // (pred − silicon) / silicon × 100
	TPOTErrPct  float64 `json:"tpot_err_pct"`
	Skipped     string  `json:"skipped,omitempty"`
	Note        string  `json:"note,omitempty"`
	ValidatedAs string  `json:"validated_as"` // the layout replayed (see Note when it differs from the labels)
	// Float32MatmulPrecision is the VLLM_FLOAT32_MATMUL_PRECISION the row was replayed with.
	Float32MatmulPrecision string `json:"float32_matmul_precision,omitempty"`
	NumGPUBlocks           int    `json:"num_gpu_blocks,omitempty"`
	// ReplayedVersion is the vLLM version of the tables the row was replayed on: the nearest
	// embedded to the one it was measured on (BackendVersion).
	ReplayedVersion string `json:"replayed_version,omitempty"`
}

// Group is one (model, GPU, precision) of the rows: counts, MAPEs and mean signed errors.
type Group struct {
	Backend   string  `json:"backend,omitempty"`
	Model     string  `json:"model"`
	System    string  `json:"system"`
	Precision string  `json:"precision"`
	Validated int     `json:"validated"`
	Skipped   int     `json:"skipped"`
	TTFTMAPE  float64 `json:"ttft_mape"`
	TPOTMAPE  float64 `json:"tpot_mape"`
	TTFTBias  float64 `json:"ttft_bias_pct"` // mean signed error
	TPOTBias  float64 `json:"tpot_bias_pct"`
	// SkipReason is the most frequent reason among the group's skipped rows.
	SkipReason string `json:"skip_reason,omitempty"`
}

// LayoutMAPE is the error over the validated rows of one layout.
type LayoutMAPE struct {
	Layout   string  `json:"layout"`
	Rows     int     `json:"rows"`
	TTFTMAPE float64 `json:"ttft_mape"`
	TPOTMAPE float64 `json:"tpot_mape"`
}

// ConcurrencyError is the signed mean error over the validated rows of one concurrency.
type ConcurrencyError struct {
	Concurrency int     `json:"concurrency"`
	Rows        int     `json:"rows"`
	TTFTGapMS   float64 `json:"ttft_gap_ms"` // mean measured − predicted TTFT
	TTFTErrPct  float64 `json:"ttft_err_pct"`
	TPOTErrPct  float64 `json:"tpot_err_pct"`
}

// Report is the whole validation; MAPEs are percentages over the validated rows.
type Report struct {
	Benchmark     Benchmark          `json:"benchmark"`
	Rows          []Result           `json:"rows"`
	TTFTMAPE      float64            `json:"ttft_mape"`
	TPOTMAPE      float64            `json:"tpot_mape"`
	Validated     int                `json:"validated"`
	Skipped       int                `json:"skipped"`
	Layouts       []LayoutMAPE       `json:"layouts"`
	Groups        []Group            `json:"groups"`
	Concurrencies []ConcurrencyError `json:"concurrencies"`
}

// quantizationOf is the serving precision (model.Deployment.Quantization) of a row's
// precision label: a family (fp4: NVIDIA's NVFP4 checkpoints or gpt-oss's own MXFP4; fp8: an
// FP8 checkpoint or vLLM's FP8 quantisation of a BF16 one) the loader resolves per model, and
// an empty label the checkpoint as published.
func quantizationOf(precision string) string {
	switch p := strings.ToLower(precision); p {
	case "", "bf16", "bfloat16":
		return ""
	default:
		return p
	}
}

// denseLabels reads a row whose MoE sizes are unset (0 or 1 on a multi-GPU worker, as the
// collections label dense models) as vLLM's default layout: every GPU of the tensor-parallel
// group holds a shard of every expert, if the model has any.
func denseLabels(r Row) (Row, string, bool) {
	gpus := r.TP * r.AttentionDP
	if r.MoETP*r.MoEEP == gpus || r.MoETP > 1 || r.MoEEP > 1 {
		return r, "", false
	}
	note := fmt.Sprintf("labelled moe_tp %d, moe_ep %d: replayed as moe_tp %d (vLLM's default without expert parallelism)", r.MoETP, r.MoEEP, gpus)
	r.MoETP, r.MoEEP = gpus, 1
	return r, note, true
}

// convertedDEP reads a row labelled with attention data parallelism on top of tensor-parallel
// attention (tp > 1) whose batch size is its concurrency divided by attention_dp: such labels
// come from a conversion that computed attention_dp = GPUs / TP and split the batch
// accordingly, while the run itself was a TEP worker (TP attention, expert-parallel MoE) on TP
// GPUs serving the whole concurrency — the same runs appear in the shared file under TEP labels
// with the same measurements. A classic DEP row (tp 1 per attention rank) is left as it is.
func convertedDEP(r Row) (Row, string, bool) {
	if r.TP <= 1 || r.AttentionDP <= 1 || r.BatchSize*r.AttentionDP != r.Concurrency {
		return r, "", false
	}
	note := fmt.Sprintf("labelled attention_dp %d, moe_ep %d, batch %d: validated as TEP (tp %d, moe_ep %d) at batch = concurrency %d",
		r.AttentionDP, r.MoEEP, r.BatchSize, r.TP, r.TP, r.Concurrency)
	r.AttentionDP, r.MoETP, r.MoEEP, r.BatchSize = 1, 1, r.TP, r.Concurrency
	return r, note, true
}

// Validate replays, for every row, one worker of the row's layout under the benchmark that
// measured it, and compares the simulated mean TTFT and TPOT with the measured ones.
// Nothing is fitted to the rows: the worker's step times come from the embedded tables.
func Validate(ctx context.Context, rows []Row, o Options) (*Report, error) {
	if o.Benchmark.Name == "" {
		o.Benchmark = InferenceX()
	}
	b := o.Benchmark
	if err := b.check(); err != nil {
		return nil, err
	}
	type pred struct {
		ttft, tpot float64
		blocks     int
	}
	type key struct {
		d              model.Deployment
		conc, isl, osl int
	}
	done := map[key]pred{} // identical rows (repeated measurements) share one replay
	rep := &Report{Benchmark: b}
	for _, r := range rows {
		res := Result{Row: r}
		sim := r
		if c, note, ok := convertedDEP(r); ok {
			sim, res.Note = c, note
		}
		if c, note, ok := denseLabels(sim); ok && r.Unsupported == "" {
			sim, res.Note = c, strings.TrimPrefix(res.Note+"; "+note, "; ")
		}
		d := b.deployment(sim)
		res.ValidatedAs, res.Float32MatmulPrecision, res.ReplayedVersion = sim.Layout(), d.Float32MatmulPrecision, d.BackendVersion
		switch {
		case r.Unsupported != "":
			res.Skipped = r.Unsupported
		case sim.MoETP*sim.MoEEP != sim.TP*sim.AttentionDP:
			res.Skipped = fmt.Sprintf("labels tp %d, attention_dp %d, moe_tp %d, moe_ep %d do not describe one worker", r.TP, r.AttentionDP, r.MoETP, r.MoEEP)
		case sim.AttentionDP > 1:
			res.Skipped = fmt.Sprintf("attention_dp %d (DEP): attention data parallelism is not modelled", r.AttentionDP)
		case r.Concurrency > d.MaxNumSeqs:
			res.Skipped = fmt.Sprintf("concurrency %d exceeds max_num_seqs %d", r.Concurrency, d.MaxNumSeqs)
		}
		if res.Skipped == "" {
			k := key{d, r.Concurrency, r.ISL, r.OSL}
			p, ok := done[k]
			if !ok {
				ttft, tpot, blocks, err := replay(ctx, d, sim, b, o.Seed)
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					res.Skipped = err.Error()
				}
				p = pred{ttft, tpot, blocks}
				if err == nil {
					done[k] = p
				}
			}
			if res.Skipped == "" {
				res.PredTTFTMS, res.PredTPOTMS, res.NumGPUBlocks = p.ttft, p.tpot, p.blocks
				res.TTFTErrPct = (p.ttft - r.TTFTMS) / r.TTFTMS * 100
				res.TPOTErrPct = (p.tpot - r.TPOTMS) / r.TPOTMS * 100
			}
		}
		rep.Rows = append(rep.Rows, res)
	}
	rep.summarise()
	return rep, nil
}

// replay runs one row's benchmark on one simulated worker: the warm-up requests to
// completion, then the timed ones from an idle worker, as the client's two phases do. Each
// phase starts with an empty cache: exact with prefix caching off (the inferencex profile);
// with it on, a real worker would still hold the warm-up prompt for the first timed request.
func replay(ctx context.Context, d model.Deployment, r Row, b Benchmark, seed uint64) (ttft, tpot float64, blocks int, err error) {
	w, err := model.NewWorker(d)
	if err != nil {
		return 0, 0, 0, err
	}
	d.NumGPUBlocks = w.Capacity().NumGPUBlocks
	n := r.Concurrency * b.RequestsPerSlot
	if reqs, ids := n+r.Concurrency*b.WarmupPerSlot, n*((r.ISL+d.BlockSize-1)/d.BlockSize); reqs > MaxReplayRequests || ids > MaxReplayBlocks {
		return 0, 0, 0, fmt.Errorf("the replay would hold %d requests and %d prompt blocks, beyond the budget of %d and %d: "+
			"lower --requests-per-slot", reqs, ids, MaxReplayRequests, MaxReplayBlocks)
	}
	isl, osl := sampleLengths(n, r.ISL, b.RangeRatio, seed), sampleLengths(n, r.OSL, b.RangeRatio, seed+1)
	next := int64(0) // every block of every timed prompt is distinct: no prefix sharing
	prompt := func(isl, osl int) trace.Request {
		ids := make([]int64, (isl+d.BlockSize-1)/d.BlockSize)
		for j := range ids {
			ids[j] = next
			next++
		}
		return trace.Request{InputLength: isl, OutputLength: osl, HashIDs: ids}
	}
	timed := make([]trace.Request, n)
	for i := range timed {
		timed[i] = prompt(isl[i], osl[i])
	}
	rc := router.DefaultConfig()
	rc.BlockSize = d.BlockSize
	cfg := engine.Config{Workers: 1, Worker: d, Router: rc, ReplayConcurrency: r.Concurrency, Seed: seed}
	run := func(name string, reqs []trace.Request) (*engine.Report, error) {
		tr := &trace.Trace{Name: fmt.Sprintf("silicon row %d %s", r.Line, name), BlockSize: d.BlockSize, Requests: reqs}
		return engine.Replay(ctx, cfg, w, tr)
	}
	if warm := r.Concurrency * b.WarmupPerSlot; warm > 0 {
		// The client warms up with its first prompt, repeated.
		reqs := make([]trace.Request, warm)
		for i := range reqs {
			reqs[i] = timed[0]
		}
		if _, err := run("warm-up", reqs); err != nil {
			return 0, 0, 0, err
		}
	}
	rep, err := run("timed", timed)
	if err != nil {
		return 0, 0, 0, err
	}
	return rep.Summary.MeanTTFTMS, rep.Summary.MeanTPOTMS, d.NumGPUBlocks, nil
}

// sampleLengths draws n lengths uniformly from the integers [⌊hi × ratio⌋, hi] (at least 1)
// the way the benchmark client's random dataset does, deterministically from seed.
func sampleLengths(n, hi int, ratio float64, seed uint64) []int {
	lo := min(max(int(float64(hi)*ratio), 1), hi)
	rng := rand.New(rand.NewPCG(seed, 0x5111c0))
	out := make([]int, n)
	for i := range out {
		out[i] = lo + rng.IntN(hi-lo+1)
	}
	return out
}

func (rep *Report) summarise() {
	type acc struct {
		n                      int
		ttft, tpot, gap, sttft float64
		stpot                  float64
	}
	all := acc{}
	by := map[string]*acc{}
	byConc := map[int]*acc{}
	for _, r := range rep.Rows {
		if r.Skipped != "" {
			rep.Skipped++
			continue
		}
		rep.Validated++
		if by[r.ValidatedAs] == nil {
			by[r.ValidatedAs] = &acc{}
		}
		if byConc[r.Concurrency] == nil {
			byConc[r.Concurrency] = &acc{}
		}
		for _, x := range []*acc{by[r.ValidatedAs], byConc[r.Concurrency], &all} {
			x.n++
			x.ttft += math.Abs(r.TTFTErrPct)
			x.tpot += math.Abs(r.TPOTErrPct)
			x.gap += r.TTFTMS - r.PredTTFTMS
			x.sttft += r.TTFTErrPct
			x.stpot += r.TPOTErrPct
		}
	}
	if all.n > 0 {
		rep.TTFTMAPE, rep.TPOTMAPE = all.ttft/float64(all.n), all.tpot/float64(all.n)
	}
	for _, k := range slices.Sorted(maps.Keys(by)) {
		a := by[k]
		rep.Layouts = append(rep.Layouts, LayoutMAPE{Layout: k, Rows: a.n,
			TTFTMAPE: a.ttft / float64(a.n), TPOTMAPE: a.tpot / float64(a.n)})
	}
	rep.Groups = groups(rep.Rows)
	for _, c := range slices.Sorted(maps.Keys(byConc)) {
		a, n := byConc[c], float64(byConc[c].n)
		rep.Concurrencies = append(rep.Concurrencies, ConcurrencyError{Concurrency: c, Rows: a.n,
			TTFTGapMS: a.gap / n, TTFTErrPct: a.sttft / n, TPOTErrPct: a.stpot / n})
	}
}

// groups summarises the rows per (model, GPU, precision), in order of first appearance.
func groups(rows []Result) []Group {
	var out []Group
	idx := map[[4]string]int{}
	reasons := map[int]map[string]int{}
	for _, r := range rows {
		k := [4]string{r.Backend, r.Model, r.System, r.Precision}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Group{Backend: r.Backend, Model: r.Model, System: r.System, Precision: r.Precision})
			reasons[i] = map[string]int{}
		}
		g := &out[i]
		if r.Skipped != "" {
			g.Skipped++
			reason, _, _ := strings.Cut(r.Skipped, " (")
			if _, rest, ok := strings.Cut(reason, ": "); ok && strings.Contains(reason[:strings.Index(reason, ": ")], ":") {
				reason = rest // a file:line prefix
			}
			reasons[i][reason]++
			continue
		}
		g.Validated++
		g.TTFTMAPE += math.Abs(r.TTFTErrPct)
		g.TPOTMAPE += math.Abs(r.TPOTErrPct)
		g.TTFTBias += r.TTFTErrPct
		g.TPOTBias += r.TPOTErrPct
	}
	for i := range out {
		g := &out[i]
		if n := float64(g.Validated); n > 0 {
			g.TTFTMAPE, g.TPOTMAPE, g.TTFTBias, g.TPOTBias = g.TTFTMAPE/n, g.TPOTMAPE/n, g.TTFTBias/n, g.TPOTBias/n
		}
		best := 0
		for _, reason := range slices.Sorted(maps.Keys(reasons[i])) {
			if n := reasons[i][reason]; n > best {
				g.SkipReason, best = reason, n
			}
		}
	}
	return out
}

// WriteJSON prints the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteTable prints one line per row, then the MAPE per layout and overall.
// listSkipped is how many skipped rows the table lists one by one; more (a file such as
// AIConfigurator's whole sample, thousands of rows of other models) are counted by reason.
const listSkipped = 40

type skipGroup struct {
	reason      string
	rows, first int
}

// skippedByReason groups the skipped rows by their reason without the row's own details: a
// "file:line: " prefix and anything from " (" on (a missing table's list of the embedded ones),
// most frequent first.
func (rep *Report) skippedByReason() []skipGroup {
	idx := map[string]int{}
	var out []skipGroup
	for _, r := range rep.Rows {
		if r.Skipped == "" {
			continue
		}
		reason := r.Skipped
		if file, rest, ok := strings.Cut(reason, ": "); ok {
			if _, line, ok := strings.Cut(file, ":"); ok && line != "" && strings.Trim(line, "0123456789") == "" {
				reason = rest
			}
		}
		reason, _, _ = strings.Cut(reason, " (")
		i, ok := idx[reason]
		if !ok {
			i = len(out)
			idx[reason] = i
			out = append(out, skipGroup{reason: reason, first: r.Line})
		}
		out[i].rows++
	}
	slices.SortStableFunc(out, func(a, b skipGroup) int { return b.rows - a.rows })
	return out
}

func (rep *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%5s %-6s %5s %5s %5s │ %9s %9s %7s │ %8s %8s %7s\n",
		"line", "layout", "conc", "isl", "osl", "TTFT ms", "pred", "err", "TPOT ms", "pred", "err")
	for _, r := range rep.Rows {
		layout := r.ValidatedAs
		if layout == "" {
			layout = r.Layout()
		}
		if r.Skipped != "" && rep.Skipped > listSkipped {
			continue // summarised by reason below
		}
		fmt.Fprintf(&b, "%5d %-6s %5d %5d %5d │ %9.1f ", r.Line, layout, r.Concurrency, r.ISL, r.OSL, r.TTFTMS)
		if r.Skipped != "" {
			fmt.Fprintf(&b, "skipped: %s\n", r.Skipped)
			continue
		}
		fmt.Fprintf(&b, "%9.1f %+6.1f%% │ %8.2f %8.2f %+6.1f%%\n", r.PredTTFTMS, r.TTFTErrPct, r.TPOTMS, r.PredTPOTMS, r.TPOTErrPct)
	}
	b.WriteString("\n")
	for _, l := range rep.Layouts {
		fmt.Fprintf(&b, "%-6s %3d rows   TTFT MAPE %5.1f%%   TPOT MAPE %5.1f%%\n", l.Layout, l.Rows, l.TTFTMAPE, l.TPOTMAPE)
	}
	fmt.Fprintf(&b, "all    %3d rows   TTFT MAPE %5.1f%%   TPOT MAPE %5.1f%%   (%d skipped)\n",
		rep.Validated, rep.TTFTMAPE, rep.TPOTMAPE, rep.Skipped)
	if len(rep.Groups) > 1 {
		fmt.Fprintf(&b, "\n%-44s %4s %8s   %9s %6s  %9s %6s\n", "by model, GPU and precision", "rows", "skipped", "TTFT MAPE", "bias", "TPOT MAPE", "bias")
		for _, g := range rep.Groups {
			name := fmt.Sprintf("%s %s %s", g.Model, g.System, cmp.Or(g.Precision, "bf16"))
			if g.Backend != "" && g.Backend != "vllm" {
				name = g.Backend + " " + name
			}
			if g.Validated == 0 {
				fmt.Fprintf(&b, "%-44s %4d %8d   skipped: %s\n", name, g.Validated, g.Skipped, g.SkipReason)
				continue
			}
			fmt.Fprintf(&b, "%-44s %4d %8d   %8.1f%% %+5.1f%%  %8.1f%% %+5.1f%%\n", name, g.Validated, g.Skipped,
				g.TTFTMAPE, g.TTFTBias, g.TPOTMAPE, g.TPOTBias)
		}
	}
	if rep.Skipped > listSkipped {
		b.WriteString("\nskipped rows by reason (--format json lists each)\n")
		for _, g := range rep.skippedByReason() {
			fmt.Fprintf(&b, "%6d  %s (first: line %d)\n", g.rows, g.reason, g.first)
		}
	}
	b.WriteString("\nby concurrency   rows   TTFT gap (measured − pred)   TTFT err   TPOT err\n")
	for _, c := range rep.Concurrencies {
		fmt.Fprintf(&b, "%14d   %4d   %21.1f ms   %+7.1f%%   %+7.1f%%\n", c.Concurrency, c.Rows, c.TTFTGapMS, c.TTFTErrPct, c.TPOTErrPct)
	}
	for _, r := range rep.Rows {
		if r.Note != "" {
			fmt.Fprintf(&b, "line %d: %s\n", r.Line, r.Note)
		}
	}
	fmt.Fprintf(&b, "benchmark %s\n", rep.Benchmark)
	_, err := io.WriteString(w, b.String())
	return err
}
