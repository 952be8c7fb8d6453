package cli

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/silicon"
	"github.com/routerlab/routerlab/specdec"
)

func newModelValidateCmd() *cobra.Command {
	var path, format, profile, kvDtype, fp32, ref, tokenizeBatching, graphMode, budget string
	var perSlot, warmup, entries, batched, seqs, block, tokenizeNS, capture, sharedStream, requestPath, streamEnd int
	var rangeRatio, maxTTFT, maxTPOT float64
	var mtpFirst, mtpLater float64
	var async, prefix, fuseARRMS, expertParallel bool
	cmd := &cobra.Command{
		Use:   "validate --silicon FILE.csv",
		Short: "Replay measured closed-loop benchmarks and compare TTFT and TPOT",
		Long: `validate reads measured runs (columns config_id, concurrency, measured, backend_version,
precision, gemm_quant_mode, moe_quant_mode, isl, osl, batch_size, tp_size, attention_dp_size,
moe_tp_size, moe_ep_size, silicon_ttft_ms, silicon_tpot_ms) and, for every FP8 row, simulates
one worker of that layout serving the row's benchmark: the server's engine arguments, the
client's lengths, warm-up and concurrency. It prints predicted vs measured mean TTFT and TPOT,
the MAPE per layout and the signed error per concurrency; rows without tables (other
precision, attention data parallelism, unknown version) are listed as skipped with the reason.
Nothing is fitted to the rows.

--benchmark inferencex (the default) replays each row with the settings of the run that
measured it (silicon.InferenceXRuns: the SemiAnalysis InferenceX script and commit per model,
GPU, precision and date — KV cache dtype, block size, batched tokens, max_num_seqs, CUDA-graph
capture size, prefix caching, warm-up, and the API server's tokenisation of its text prompts
batched as the run's vLLM release does; the seed's shared rows: FP8 KV cache, block 32,
max_num_batched_tokens 2 × ISL, CUDA graphs to 2,048 tokens, lengths uniform in [0.8 L, L],
2 × concurrency warm-up then 10 × concurrency timed requests). --benchmark ideal is the
textbook replay: vLLM's defaults 8192/1024, block 64, exactly ISL/OSL, step-synchronous, no
warm-up. Under both, each row's KV cache is sized as the measured server's vLLM profiler sized
it (--memory-budget vllm: weights and activations off, NCCL and CUDA graphs outside the
budget before vLLM 0.21). The flags below override single settings of every row's benchmark.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if path == "" {
				return fmt.Errorf("model validate: --silicon FILE.csv is required")
			}
			if format != "table" && format != "json" && format != "csv" {
				return fmt.Errorf("model validate: --format %q: want table, json or csv", format)
			}
			b, err := silicon.BenchmarkNamed(profile)
			if err != nil {
				return fmt.Errorf("model validate: --benchmark: %w", err)
			}
			fl := cmd.Flags()
			if fl.Changed("range-ratio") && !(rangeRatio > 0 && rangeRatio <= 1) {
				return fmt.Errorf("model validate: --range-ratio %g: want a ratio in (0, 1]", rangeRatio)
			}
			if fl.Changed("api-tokenize-batching") && !slices.Contains(model.TokenizeBatchings(), tokenizeBatching) {
				return fmt.Errorf("model validate: --api-tokenize-batching %q: want one of %s", tokenizeBatching, strings.Join(model.TokenizeBatchings(), ", "))
			}
			if fl.Changed("cudagraph-mode") && !slices.Contains(model.CUDAGraphModes(), graphMode) {
				return fmt.Errorf("model validate: --cudagraph-mode %q: want one of %s", graphMode, strings.Join(model.CUDAGraphModes(), ", "))
			}
			if fl.Changed("memory-budget") && !slices.Contains(model.MemoryBudgets(), budget) {
				return fmt.Errorf("model validate: --memory-budget %q: want one of %s", budget, strings.Join(model.MemoryBudgets(), ", "))
			}
			for _, f := range []struct {
				flag string
				v    float64
			}{{"mtp-first-acceptance", mtpFirst}, {"mtp-later-acceptance", mtpLater}} {
				if fl.Changed(f.flag) && !(f.v > 0 && f.v <= 1) {
					return fmt.Errorf("model validate: --%s %g: want a probability in (0, 1]", f.flag, f.v)
				}
			}
			if fl.Changed("max-num-batched-tokens") && batched < 1 {
				return fmt.Errorf("model validate: --max-num-batched-tokens %d: want at least 1", batched)
			}
			type intFlag struct {
				flag     string
				v        int
				min, max int // the memory budget's bound
				dst      func(*silicon.Benchmark) *int
			}
			ints := []intFlag{
				{"requests-per-slot", perSlot, 1, silicon.MaxRequestsPerSlot, func(b *silicon.Benchmark) *int { return &b.RequestsPerSlot }},
				{"warmup-per-slot", warmup, 0, silicon.MaxRequestsPerSlot, func(b *silicon.Benchmark) *int { return &b.WarmupPerSlot }},
				{"dataset-entries-per-slot", entries, 0, silicon.MaxRequestsPerSlot, func(b *silicon.Benchmark) *int { return &b.DatasetEntriesPerSlot }},
				{"max-num-seqs", seqs, 1, 1 << 20, func(b *silicon.Benchmark) *int { return &b.MaxNumSeqs }},
				{"block-size", block, 1, 1 << 16, func(b *silicon.Benchmark) *int { return &b.BlockSize }},
				{"api-tokenize-ns", tokenizeNS, 0, 1 << 40, func(b *silicon.Benchmark) *int { return &b.APIServerTokenizeNS }},
				{"request-path-us", requestPath, 0, model.MaxRequestPathUS, func(b *silicon.Benchmark) *int { return &b.RequestPathUS }},
				{"stream-end-us", streamEnd, 0, model.MaxRequestPathUS, func(b *silicon.Benchmark) *int { return &b.StreamEndUS }},
				{"max-cudagraph-capture-size", capture, 0, 1 << 20, func(b *silicon.Benchmark) *int { return &b.MaxCUDAGraphCaptureSize }},
				{"shared-experts-stream-tokens", sharedStream, -1, 1 << 20, func(b *silicon.Benchmark) *int { return &b.SharedExpertsStreamTokens }},
			}
			for _, c := range ints {
				if fl.Changed(c.flag) && (c.v < c.min || c.v > c.max) {
					return fmt.Errorf("model validate: --%s %d: want %d to %d (per-slot counts: the memory budget of a row's replay)", c.flag, c.v, c.min, c.max)
				}
			}
			// The flags change single settings of every row's benchmark: under inferencex
			// each row's own run's, under ideal the profile's.
			override := func(b *silicon.Benchmark) {
				if fl.Changed("timing-reference") {
					b.TimingReference = ref
				}
				if fl.Changed("cudagraph-mode") {
					b.CUDAGraphMode = graphMode
				}
				if fl.Changed("range-ratio") {
					b.RangeRatio = rangeRatio
				}
				for _, c := range ints {
					if fl.Changed(c.flag) {
						*c.dst(b) = c.v
					}
				}
				if fl.Changed("max-num-seqs") {
					b.MaxNumSeqsIsConcurrency = false
				}
				if fl.Changed("max-num-batched-tokens") {
					b.MaxNumBatchedTokens, b.BatchedTokensPerISL, b.BatchedTokensAboveBatch = batched, 0, 0
				}
				if fl.Changed("kv-cache-dtype") {
					b.KVCacheDtype = kvDtype
				}
				if fl.Changed("api-tokenize-batching") {
					b.APIServerTokenizeBatching = tokenizeBatching
				}
				if fl.Changed("memory-budget") {
					b.MemoryBudget = budget
				}
				if fl.Changed("float32-matmul-precision") {
					b.Float32MatmulPrecision = fp32
				}
				if fl.Changed("async-scheduling") {
					b.AsyncScheduling = async
				}
				if fl.Changed("prefix-caching") {
					b.PrefixCaching = prefix
				}
				if fl.Changed("mtp-first-acceptance") && b.Speculative.On() {
					b.Speculative.First = mtpFirst
				}
				if fl.Changed("mtp-later-acceptance") && b.Speculative.On() {
					b.Speculative.Later = mtpLater
				}
				if fl.Changed("fuse-allreduce-rms") {
					b.FuseAllReduceRMS = &fuseARRMS
				}
				if fl.Changed("expert-parallel") {
					b.ExpertParallel = &expertParallel
				}
			}
			fh, err := os.Open(path)
			if err != nil {
				return err
			}
			defer fh.Close()
			rows, err := silicon.Parse(fh, path)
			if err != nil {
				return err
			}
			rep, err := silicon.Validate(cmd.Context(), rows, silicon.Options{Benchmark: b, Override: override})
			if err != nil {
				return err
			}
			switch format {
			case "json":
				err = rep.WriteJSON(cmd.OutOrStdout())
			case "csv":
				err = writeValidationCSV(cmd.OutOrStdout(), rep)
			default:
				err = rep.WriteTable(cmd.OutOrStdout())
			}
			if err != nil {
				return err
			}
			if rep.Validated == 0 {
				return &exitError{code: 2, err: fmt.Errorf("model validate: no row could be validated")}
			}
			if (maxTTFT > 0 && rep.TTFTMAPE > maxTTFT) || (maxTPOT > 0 && rep.TPOTMAPE > maxTPOT) {
				return &exitError{code: 2, err: fmt.Errorf("model validate: TTFT MAPE %.1f%% (max %g), TPOT MAPE %.1f%% (max %g)",
					rep.TTFTMAPE, maxTTFT, rep.TPOTMAPE, maxTPOT)}
			}
			return nil
		},
	}
	var names []string
	for _, b := range silicon.Benchmarks() {
		names = append(names, b.Name)
	}
	fs := cmd.Flags()
	fs.StringVar(&path, "silicon", "", "measured rows (CSV)")
	fs.StringVar(&format, "format", "table", "output format: table, json, or csv (one row per measured row: its shape, measured and predicted TTFT and TPOT, errors)")
	fs.StringVar(&profile, "benchmark", "inferencex", "benchmark the rows were measured with: "+strings.Join(names, " or "))
	// Each of these overrides one setting of the chosen benchmark only when given, so none
	// shows a default of its own: the benchmark's (inferencex or ideal) is the default.
	fs.IntVar(&perSlot, "requests-per-slot", 0, "timed requests per concurrency slot (default: the benchmark's, 10)")
	fs.IntVar(&warmup, "warmup-per-slot", 0, "warm-up requests per concurrency slot, not measured (default: the benchmark's)")
	fs.IntVar(&entries, "dataset-entries-per-slot", 0, "aiperf's synthetic dataset: this many distinct prompts per concurrency slot, every request drawing one with replacement as aiperf up to db4f6397 does; 0: every timed request a prompt of its own (default: the benchmark's, 0)")
	fs.StringVar(&ref, "timing-reference", model.ReferenceSilicon, "price the replays as silicon (vLLM's kernels, one pass per step) or dynosim (Dynamo's mocker with AIConfigurator's pricing)")
	fs.IntVar(&capture, "max-cudagraph-capture-size", 0, "vLLM's max_cudagraph_capture_size: larger steps run without CUDA graphs, paying eager all-reduces; 0: vLLM's default, min(2 × max_num_seqs, 512) (default: the benchmark's; InferenceX 2048, as its script passes)")
	fs.StringVar(&graphMode, "cudagraph-mode", "", "vLLM's compilation_config.cudagraph_mode of every row: PIECEWISE (graphs every step up to the capture size, as vLLM's default FULL_AND_PIECEWISE does) or FULL_DECODE_ONLY (steps holding a prefill run without CUDA graphs) (default: the run's script's; FULL_DECODE_ONLY in the 2025 Llama 70B B200 runs)")
	fs.IntVar(&tokenizeNS, "api-tokenize-ns", 0, fmt.Sprintf("the API server's tokenisation cost per prompt token, ns; 0: prompts sent as token ids (default: the benchmark's, InferenceX %d: vllm#19012's rate times the measured cost of its random prompts)", silicon.InferenceXTokenizeNS))
	fs.IntVar(&requestPath, "request-path-us", 0, fmt.Sprintf("the client's HTTP request path from its send to the API server's handler, µs, in TTFT; 0: none (default: the benchmark's, InferenceX %d, measured on this project's host with InferenceX's client and a stub server: silicon/requestpath)", silicon.InferenceXRequestPathUS))
	fs.IntVar(&streamEnd, "stream-end-us", 0, fmt.Sprintf("in the closed loop, from a stream's last token leaving the server to the client's next send, µs; 0: at once (default: the benchmark's, InferenceX %d, measured as --request-path-us is)", silicon.InferenceXStreamEndUS))
	fs.StringVar(&tokenizeBatching, "api-tokenize-batching", "", "how the API server tokenises the prompts of one 2 ms window: serial (one after another, vLLM 0.16 on) or parallel (one batched call, vLLM 0.10–0.15); each: no window, every prompt as it arrives (SGLang) (default: the run's release's)")
	fs.Float64Var(&rangeRatio, "range-ratio", 0, fmt.Sprintf("draw input and output lengths uniformly from [ratio × len, len]; 1: fixed (default: the benchmark's, InferenceX %g)", silicon.InferenceXRangeRatio))
	fs.IntVar(&batched, "max-num-batched-tokens", 0, "token budget of one step (default: the benchmark's; InferenceX 2 × ISL)")
	fs.IntVar(&seqs, "max-num-seqs", 0, "running requests at most (default: the benchmark's, 1024)")
	fs.IntVar(&block, "block-size", 0, "KV block size in tokens (default: the benchmark's)")
	fs.StringVar(&kvDtype, "kv-cache-dtype", "", "KV cache dtype: fp8 or bf16 (default: the benchmark's, fp8)")
	fs.StringVar(&budget, "memory-budget", "", memoryBudgetUsage+" (default: the run's; each engine's own for its servers)")
	fs.StringVar(&fp32, "float32-matmul-precision", "", "VLLM_FLOAT32_MATMUL_PRECISION of every row: highest or high (default: the benchmark's; InferenceX: high in runs from 2026-04-22, when its script set it)")
	fs.BoolVar(&async, "async-scheduling", false, "vLLM's async scheduling: a request arriving during a step joins the step after next (default: the benchmark's)")
	fs.BoolVar(&prefix, "prefix-caching", false, "vLLM's prefix caching (default: the benchmark's)")
	fs.IntVar(&sharedStream, "shared-experts-stream-tokens", 0, "VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD: steps of at most this many tokens overlap a MoE layer's shared experts with its routed experts; -1: no second stream (default: the benchmark's, vLLM's 256)")
	allowMinusOne(fs, "shared-experts-stream-tokens")
	fs.BoolVar(&expertParallel, "expert-parallel", false, "--enable-expert-parallel for every row: true replays each row's moe_ep label, false shards every expert over the worker's GPUs (default: the run's script's; InferenceX's Kimi-K2.5 scripts never pass it)")
	fs.BoolVar(&fuseARRMS, "fuse-allreduce-rms", false, "compilation_config.pass_config.fuse_allreduce_rms for every row: FlashInfer's fused all-reduce + add + RMSNorm in small steps (default: the run's script's, else its vLLM release's default: on from 0.18 at TP > 1 on H100/H200/B200, B300 from 0.19)")
	fs.Float64Var(&mtpFirst, "mtp-first-acceptance", 0, fmt.Sprintf("MTP runs (TensorRT-LLM's dsr1-*-trt-mtp): probability the first draft token is accepted (default: %g, DeepSeek-V3's report)", specdec.DefaultFirst))
	fs.Float64Var(&mtpLater, "mtp-later-acceptance", 0, fmt.Sprintf("MTP runs: probability a later draft is accepted given the one before it was (default: %g, from the original MTP module's published acceptance length)", specdec.DefaultLater))
	fs.Float64Var(&maxTTFT, "max-ttft-mape", 0, "exit 2 when the TTFT MAPE exceeds this percentage (0: no check)")
	fs.Float64Var(&maxTPOT, "max-tpot-mape", 0, "exit 2 when the TPOT MAPE exceeds this percentage (0: no check)")
	return cmd
}

// writeValidationCSV writes model validate's rows as CSV: each measured row's shape, its
// measured and predicted TTFT and TPOT, the errors, and why it was skipped if it was.
func writeValidationCSV(w io.Writer, rep *silicon.Report) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"line", "config_id", "concurrency", "isl", "osl", "tp", "attention_dp", "moe_tp", "moe_ep",
		"silicon_ttft_ms", "pred_ttft_ms", "ttft_err_pct", "silicon_tpot_ms", "pred_tpot_ms", "tpot_err_pct", "skipped"})
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, r := range rep.Rows {
		_ = cw.Write([]string{strconv.Itoa(r.Line), r.ConfigID, strconv.Itoa(r.Concurrency), strconv.Itoa(r.ISL), strconv.Itoa(r.OSL),
			strconv.Itoa(r.TP), strconv.Itoa(r.AttentionDP), strconv.Itoa(r.MoETP), strconv.Itoa(r.MoEEP),
			num(r.TTFTMS), num(r.PredTTFTMS), num(r.TTFTErrPct), num(r.TPOTMS), num(r.PredTPOTMS), num(r.TPOTErrPct), r.Skipped})
	}
	cw.Flush()
	return cw.Error()
}
