package silicon

import (
	"cmp"
	"regexp"

	"github.com/routerlab/routerlab/model"
)

// Run is one measuring benchmark's configuration: which rows it produced (model, GPU,
// precision and the dates they were measured on, inclusive) and the server and client
// settings it ran with, read from its script. Every row of the inferencex profile is replayed
// with the settings of the run that measured it.
type Run struct {
	// Backend is the engine that served the rows ("": vLLM).
	Backend                  model.Backend `json:"backend,omitempty"`
	Model, System, Precision string
	From, To                 string // measured dates, YYYY-MM-DD, inclusive ("": unbounded)
	// Undated runs claim only the rows without a measured date (a collection's undated copies
	// of a dated run's rows).
	Undated bool `json:"undated,omitempty"`
	// Shape narrows the run to the rows of one branch of its script (zero fields: any).
	Shape RunShape `json:"shape,omitzero"`
	// Skip, when set, is why the run's rows are not replayed.
	Skip string `json:"skip,omitempty"`
	// Script is the benchmark script at the commit the rows ran (SemiAnalysisAI/InferenceX),
	// or the collection that measured them.
	Script string `json:"script"`
	Image  string `json:"image"` // the vLLM release it served
	// NotModelled names settings of the run the simulator does not price.
	NotModelled string    `json:"not_modelled,omitempty"`
	Benchmark   Benchmark `json:"benchmark"`
}

// inferenceXWarmupSince is when InferenceX's client gained its warm-up (commit d053ae24e,
// 2026-01-21, #480, --num-warmups 2 × CONC): earlier runs measured from a cold server.
const inferenceXWarmupSince = "2026-01-21"

// ix is an InferenceX run's settings: its client (benchmark_serving.py's random dataset,
// --random-range-ratio 0.8 from the workflow, --num-prompts 10 × CONC, --request-rate inf
// --max-concurrency CONC --ignore-eos, 2 × CONC warm-ups from inferenceXWarmupSince; text
// prompts posted to /v1/completions, which the API server tokenises, InferenceXTokenizeNS,
// batched as the run's release does — InferenceXRuns sets that from the image) and
// vLLM's defaults for what the script does not set (BF16 KV cache, block 16, 8,192 batched
// tokens and 1,024 sequences on GPUs of ≥ 70 GiB, prefix caching on, async scheduling —
// explicit in the 2025 scripts, the default since 0.14 — and FP32 matmuls at "highest").
// set applies the script's flags.
func ix(from string, set func(*Benchmark)) Benchmark {
	b := Benchmark{
		Name: "inferencex", KVCacheDtype: model.KVBF16, BlockSize: 16, GPUMemoryUtilization: 0.9,
		MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024, AsyncScheduling: true, PrefixCaching: true,
		ExtraModelLen: 200, Float32MatmulPrecision: model.PrecisionHighest,
		RangeRatio: InferenceXRangeRatio, RequestsPerSlot: 10, APIServerTokenizeNS: InferenceXTokenizeNS,
		RequestPathUS: InferenceXRequestPathUS, StreamEndUS: InferenceXStreamEndUS,
	}
	if from >= inferenceXWarmupSince {
		b.WarmupPerSlot = 2
	}
	set(&b)
	return b
}

// Models of the sample as AIConfigurator names them.
const (
	minimax  = "MiniMaxAI/MiniMax-M2.5"
	llama70  = "meta-llama/Llama-3.1-70B"
	gptOSS   = "openai/gpt-oss-120b"
	llama8   = "nvidia/Llama-3.1-8B-Instruct-FP8"
	qwen32   = "Qwen/Qwen3-32B"
	qwen235  = "Qwen/Qwen3-235B-A22B-FP8"
	kimi     = "moonshotai/Kimi-K2.5"
	marlinNM = "VLLM_MXFP4_USE_MARLIN=1: vLLM's Marlin MXFP4 experts, which no table measures at gpt-oss's shape (H100/H200 0.24 Marlin MXFP4 rows are hidden 3,584 only); priced as OpenAI's Triton MXFP4 experts"
	// The 2025 Hopper images ran Marlin too: OpenAI's triton_kernels, which vLLM needs for its
	// Triton MXFP4 experts, was not a dependency of vLLM (vllm#27672: "users will have to
	// install triton_kernels manually") until vllm#28788 vendored it for 0.12, and without it
	// Hopper falls back to Marlin. When the 0.13 upgrade ran Triton, InferenceX restored
	// Marlin (4e52ed4c6: "Fix H100/H200 perf regression").
	marlin2025NM = "no triton_kernels in the vLLM 0.10.2/0.11.2 image (vllm#27672; vendored by vllm#28788 for 0.12): vLLM's Marlin MXFP4 experts, which no table measures at gpt-oss's shape; priced as OpenAI's Triton MXFP4 experts"
	// nightlyMNNVLNM is what #996's early script sets that the replay does not price.
	nightlyMNNVLNM = "VLLM_FLASHINFER_ALLREDUCE_BACKEND=mnnvl: FlashInfer's MNNVL kernels for the fused all-reduce + RMSNorm, priced as every fused all-reduce is, as vLLM's custom all-reduce (no table measures an MNNVL all-reduce)"
	mxfp8NM        = "VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1: FlashInfer's MXFP4 × MXFP8 experts, which no table measures at gpt-oss's shape; priced as its MXFP4 × BF16 experts"
)

// InferenceXRuns lists the runs behind the sample's vLLM rows, from SemiAnalysisAI/InferenceX's
// history: each script as of the rows' date, and its workflow's client. InferenceX sweeps a
// config when a change to its script is merged, and a row's measured date is that merge's
// (where the sample keeps the time it is the merge's to the second: 2026-03-11T18:39:31Z for
// f342df18e, 2026-02-25T19:02:12Z for d2c2acb19), so rows dated the day of a merge ran the
// merged script. Unlisted rows (the seed's shared file among them: MiniMax-M2.5 FP8 on B200 from
// 2026-04-03) take InferenceX().
func InferenceXRuns() []Run {
	h100ModelLen := func(b *Benchmark) { b.MaxModelLen = 10240 }
	runs := []Run{
		// MiniMax-M2.5 FP8, B200: vLLM 0.17 before the 0.19 upgrade of 2026-04-03 (bddbf403).
		{Model: minimax, System: "b200_sxm", Precision: "fp8", From: "2026-03-11", To: "2026-03-27",
			Script: "benchmarks/single_node/minimaxm2.5_fp8_b200.sh@64c20b6b5", Image: "vllm/vllm-openai:v0.17.0-cu130",
			NotModelled: "VLLM_USE_FLASHINFER_MOE_FP8=0, VLLM_MOE_USE_DEEP_GEMM=0: Triton block-FP8 experts, priced as FlashInfer's TRT-LLM experts (the embedded MiniMax B200 tables)",
			Benchmark:   ix("2026-03-11", func(b *Benchmark) { b.GPUMemoryUtilization, b.BlockSize = 0.95, 32 })},
		{Model: minimax, System: "b200_sxm", Precision: "fp8", From: "2026-03-28", To: "2026-04-02",
			Script: "benchmarks/single_node/minimaxm2.5_fp8_b200.sh@626932a11", Image: "vllm/vllm-openai:v0.17.0-cu130",
			NotModelled: "VLLM_USE_FLASHINFER_MOE_FP8=0, VLLM_MOE_USE_DEEP_GEMM=0: Triton block-FP8 experts, priced as FlashInfer's TRT-LLM experts (the embedded MiniMax B200 tables)",
			Benchmark:   ix("2026-03-28", func(b *Benchmark) { b.GPUMemoryUtilization, b.BlockSize, b.PrefixCaching = 0.95, 32, false })},
		// MiniMax-M2.5 NVFP4 on B200: the 2026-04-03 rows name the nightly image that #996's
		// branch ran from 08bcde8f1 (2026-04-02) until a9c199207 (2026-04-07) rewrote the
		// script's flags: vLLM's default token budget and CUDA-graph capture size, block 32,
		// memory 0.95.
		{Model: minimax, System: "b200_sxm", Precision: "fp4", From: "2026-04-03", To: "2026-04-06",
			Script: "benchmarks/single_node/minimaxm2.5_fp4_b200.sh@08bcde8f1 (#996's branch)", Image: "vllm/vllm-openai:nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306",
			NotModelled: nightlyMNNVLNM,
			Benchmark: ix("2026-04-03", func(b *Benchmark) {
				b.GPUMemoryUtilization, b.BlockSize, b.KVCacheDtype, b.PrefixCaching = 0.95, 32, model.KVFP8, false
			})},
		// MiniMax-M2.5 NVFP4 on B200 from a9c199207 (merged as #996 on 2026-04-08) and on B300
		// (#1055, 2026-04-17; its 2026-04-03 nightly rows ran the config before the merge).
		{Model: minimax, System: "b200_sxm", Precision: "fp4", From: "2026-04-07",
			Script: "benchmarks/single_node/minimaxm2.5_fp4_b200.sh@79bd988e9 (VLLM_FLOAT32_MATMUL_PRECISION=high from 13962fcfa)", Image: "vllm/vllm-openai:v0.19.0-cu130",
			Benchmark: ix("2026-04-03", blackwellFP4)},
		{Model: minimax, System: "b300_sxm", Precision: "fp4", From: "2026-04-03",
			Script: "benchmarks/single_node/minimaxm2.5_fp4_b300.sh@22d0f12f7 (VLLM_FLOAT32_MATMUL_PRECISION=high from 633fd2377, merged 2026-04-21: that day's rows)", Image: "vllm/vllm-openai:v0.19.0-cu130",
			Benchmark: ix("2026-04-03", func(b *Benchmark) { blackwellFP4(b); b.HighPrecisionSince = "2026-04-21" })},
		{Model: minimax, System: "b300_sxm", Precision: "fp8", From: "2026-04-03",
			Script: "benchmarks/single_node/minimaxm2.5_fp8_b300.sh@340d7854c (VLLM_FLOAT32_MATMUL_PRECISION=high from 0c2467c15, merged 2026-04-21: that day's rows)", Image: "vllm/vllm-openai:v0.19.0-cu130",
			Benchmark: ix("2026-04-03", func(b *Benchmark) { blackwellFP4(b); b.BlockSize, b.HighPrecisionSince = 32, "2026-04-21" })},
		// MiniMax-M2.5 FP8 on Hopper: vLLM's defaults but for the memory and, on H100, the
		// sequence limit; prefix caching off from 0f78cf4eb (2026-03-28 02:17 UTC).
		{Model: minimax, System: "h200_sxm", Precision: "fp8", From: "2026-03-01", To: "2026-03-27",
			Script: "benchmarks/single_node/minimaxm2.5_fp8_h200.sh@a36346339 (v0.18.0 from 1d5cae141)", Image: "vllm/vllm-openai:v0.16.0, v0.18.0",
			Benchmark: ix("2026-03-01", func(b *Benchmark) { b.GPUMemoryUtilization = 0.95 })},
		{Model: minimax, System: "h200_sxm", Precision: "fp8", From: "2026-03-28",
			Script: "benchmarks/single_node/minimaxm2.5_fp8_h200.sh@626932a11", Image: "vllm/vllm-openai:v0.18.0",
			Benchmark: ix("2026-03-28", func(b *Benchmark) { b.GPUMemoryUtilization, b.PrefixCaching = 0.95, false })},
		{Model: minimax, System: "h100_sxm", Precision: "fp8", To: "2026-03-27",
			Script: "benchmarks/single_node/minimaxm2.5_fp8_h100.sh@1d5cae141", Image: "vllm/vllm-openai:v0.18.0",
			Benchmark: ix("2026-03-27", func(b *Benchmark) { b.MaxNumSeqs = 256 })},
		{Model: minimax, System: "h100_sxm", Precision: "fp8", From: "2026-03-28",
			Script: "benchmarks/single_node/minimaxm2.5_fp8_h100.sh@626932a11", Image: "vllm/vllm-openai:v0.18.0",
			Benchmark: ix("2026-03-28", func(b *Benchmark) { b.MaxNumSeqs, b.PrefixCaching = 256, false })},
		// Llama 3.3 70B (the architecture of 3.1 70B): the full sweep of 2025-10-29 (9596d23d),
		// vLLM 0.10.2, client kimbochen/bench_serving without warm-up.
		{Model: llama70, System: "h100_sxm", Precision: "fp8", To: "2025-12-31",
			Script: "benchmarks/70b_fp8_h100_slurm.sh@9596d23d7", Image: "vllm/vllm-openai:v0.10.2",
			Benchmark: ix("2025-10-29", func(b *Benchmark) { hopper2025(b); b.KVCacheDtype = model.KVFP8; h100ModelLen(b) })},
		{Model: llama70, System: "h200_sxm", Precision: "fp8", To: "2025-12-31",
			Script: "benchmarks/70b_fp8_h200_slurm.sh@9596d23d7", Image: "vllm/vllm-openai:v0.10.2",
			Benchmark: ix("2025-10-29", func(b *Benchmark) { hopper2025(b); b.KVCacheDtype = model.KVFP8 })},
		{Model: llama70, System: "b200_sxm", Precision: "fp8", To: "2025-12-31",
			Script: "benchmarks/70b_fp8_b200_docker.sh@9596d23d7", Image: "vllm/vllm-openai:v0.10.2",
			NotModelled: llamaB200NM,
			Benchmark:   ix("2025-10-29", llamaB2002025)},
		{Model: llama70, System: "b200_sxm", Precision: "fp4", To: "2025-12-31",
			Script: "benchmarks/70b_fp4_b200_docker.sh@9596d23d7", Image: "vllm/vllm-openai:v0.10.2",
			NotModelled: llamaB200NM,
			Benchmark:   ix("2025-10-29", llamaB2002025)},
		// gpt-oss-120b: three generations of scripts.
		{Model: gptOSS, System: "h100_sxm", Precision: "fp4", To: "2025-11-30",
			Script: "benchmarks/gptoss_fp4_h100_slurm.sh@af4ccd03f", Image: "vllm/vllm-openai:v0.10.2", NotModelled: marlin2025NM,
			Benchmark: ix("2025-11-02", func(b *Benchmark) { hopper2025(b); h100ModelLen(b) })},
		{Model: gptOSS, System: "h100_sxm", Precision: "fp4", From: "2025-12-01", To: "2025-12-31",
			Script: "benchmarks/gptoss_fp4_h100_slurm.sh@25506e87c", Image: "vllm/vllm-openai:v0.11.2", NotModelled: marlin2025NM,
			Benchmark: ix("2025-12-05", func(b *Benchmark) { hopper2025(b); h100ModelLen(b); b.MaxCUDAGraphCaptureSize = 2048 })},
		{Model: gptOSS, System: "h100_sxm", Precision: "fp4", From: "2026-01-01",
			Script: "benchmarks/single_node/gptoss_fp4_h100.sh@cec542a9a", Image: "vllm/vllm-openai:v0.18.0", NotModelled: marlinNM,
			Benchmark: ix("2026-03-27", func(b *Benchmark) { hopper2026(b); h100ModelLen(b) })},
		{Model: gptOSS, System: "h200_sxm", Precision: "fp4", To: "2025-12-31",
			Script: "benchmarks/gptoss_fp4_h200_slurm.sh@9596d23d7", Image: "vllm/vllm-openai:v0.10.2", NotModelled: marlin2025NM,
			Benchmark: ix("2025-11-02", hopper2025)},
		{Model: gptOSS, System: "h200_sxm", Precision: "fp4", From: "2026-01-01",
			Script: "benchmarks/single_node/gptoss_fp4_h200.sh@cec542a9a", Image: "vllm/vllm-openai:v0.18.0", NotModelled: marlinNM,
			Benchmark: ix("2026-03-27", hopper2026)},
		{Model: gptOSS, System: "b200_sxm", Precision: "fp4", To: "2025-12-31",
			Script: "benchmarks/gptoss_fp4_b200_docker.sh@4b860b78e", Image: "vllm/vllm-openai:v0.10.2",
			NotModelled: mxfp8NM,
			Benchmark:   ix("2025-11-02", func(b *Benchmark) { b.PrefixCaching, b.MaxNumSeqs = false, 512; fused2025(b) })},
		{Model: gptOSS, System: "b200_sxm", Precision: "fp4", From: "2026-01-01",
			Script: "benchmarks/single_node/gptoss_fp4_b200.sh@d2c2acb19", Image: "vllm/vllm-openai:v0.15.1",
			NotModelled: mxfp8NM,
			Benchmark: ix("2026-02-25", func(b *Benchmark) {
				b.KVCacheDtype, b.PrefixCaching, b.MaxNumSeqs, b.MaxCUDAGraphCaptureSize = model.KVFP8, false, 512, 2048
				b.FuseAllReduceRMS = scriptSets(true) // config.yaml: pass_config fuse_allreduce_rms
			})},
		// Kimi-K2.5: --max-num-seqs $CONC, FlashInfer all-reduce + RMSNorm fusion, prefix caching off from 79a42e20a (2026-03-27 22:21 UTC, the day's sweep).
		{Model: kimi, System: "b200_sxm", Precision: "fp4", From: "2026-03-11", To: "2026-03-26",
			Script: "benchmarks/single_node/kimik2.5_fp4_b200.sh@a58dedd5a", Image: "vllm/vllm-openai:v0.17.0",
			Benchmark: ix("2026-03-11", func(b *Benchmark) { kimiFlags(b); kimiNVFP4(b) })},
		{Model: kimi, System: "b200_sxm", Precision: "fp4", From: "2026-03-27", To: "2026-04-19",
			Script: "benchmarks/single_node/kimik2.5_fp4_b200.sh@79a42e20a", Image: "vllm/vllm-openai:v0.17.0",
			Benchmark: ix("2026-03-27", func(b *Benchmark) { kimiFlags(b); kimiNVFP4(b); b.PrefixCaching = false })},
		{Model: kimi, System: "b200_sxm", Precision: "fp4", From: "2026-04-20",
			Script: "benchmarks/single_node/kimik2.5_fp4_b200.sh@6c3acebfa", Image: "vllm/vllm-openai:v0.17.0",
			Benchmark: ix("2026-04-20", func(b *Benchmark) {
				kimiFlags(b)
				b.KVCacheDtype, b.MaxCUDAGraphCaptureSize, b.PrefixCaching = model.KVFP8, 2048, false
				b.MaxNumBatchedTokens, b.BatchedTokensPerISL = 0, 2
			})},
		{Model: kimi, System: "b200_sxm", Precision: "int4", From: "2026-02-23",
			Script: "benchmarks/single_node/kimik2.5_int4_b200.sh@79ea3651a (VLLM_USE_FLASHINFER_MOE_INT4=1)", Image: "vllm/vllm-openai:v0.15.1",
			Benchmark: ix("2026-03-24", func(b *Benchmark) { kimiFlags(b); b.GPUMemoryUtilization = 0.95 })},
		{Model: kimi, System: "h200_sxm", Precision: "int4", From: "2026-03-02", To: "2026-03-26",
			Script: "benchmarks/single_node/kimik2.5_int4_h200.sh@749096c4c", Image: "vllm/vllm-openai:v0.16.0",
			Benchmark: ix("2026-03-02", func(b *Benchmark) { kimiFlags(b); b.GPUMemoryUtilization = 0.95 })},
		{Model: kimi, System: "h200_sxm", Precision: "int4", From: "2026-03-27",
			Script: "benchmarks/single_node/kimik2.5_int4_h200.sh@79a42e20a", Image: "vllm/vllm-openai:v0.16.0",
			Benchmark: ix("2026-03-27", func(b *Benchmark) { kimiFlags(b); b.GPUMemoryUtilization, b.PrefixCaching = 0.95, false })},
		// B300: the 2026-04-03 nightly rows ran the config before it was merged (#1056, #1100).
		{Model: kimi, System: "b300_sxm", Precision: "fp4", From: "2026-04-03",
			Script: "benchmarks/single_node/kimik2.5_fp4_b300.sh@f34a83b25", Image: "vllm/vllm-openai:v0.17.0-cu130, v0.19.0-cu130",
			Benchmark: ix("2026-04-03", func(b *Benchmark) { kimiFlags(b); kimiNVFP4(b); b.PrefixCaching = false })},
		// AIConfigurator's own gap-analysis collection (vLLM 0.12.0): see gapAnalysis for what
		// is known of its settings and where it comes from.
		gapAnalysis(qwen32, "h100_sxm", ""), gapAnalysis(qwen32, "h100_sxm", "fp8"),
		gapAnalysis(qwen235, "h200_sxm", "fp8"), gapAnalysis(llama8, "h200_sxm", "fp8"),
		// and its two disaggregated Qwen3-235B rows on H100 (data/h100_sxm/vllm/0.12.0/qwen3_235b_a22b.csv).
		gapAnalysis(qwen235, "h100_sxm", "fp8"),
	}
	runs = append(runs, backendRuns()...)
	for i, r := range runs {
		if r.Benchmark.APIServerTokenizeNS > 0 {
			runs[i].Benchmark.APIServerTokenizeBatching = tokenizeBatchingOf(r)
		}
	}
	return append(runs, kimiGapAnalysis(runs)...)
}

// kimiGapAnalysis gives AIConfigurator's undated kimi-k2.5-gap-analysis rows their runs'
// settings: each of its 47 rows is within 0.1 % (TTFT and TPOT) of one of the InferenceX
// rows of the same GPU and precision, so they are those runs' measurements; each group's
// earliest run stands for them.
func kimiGapAnalysis(runs []Run) []Run {
	var out []Run
	seen := map[[2]string]bool{}
	for _, r := range runs {
		k := [2]string{r.System, r.Precision}
		if r.Model != kimi || seen[k] {
			continue
		}
		seen[k] = true
		r.From, r.To, r.Undated = "", "", true
		r.Script = "AIConfigurator's kimi-k2.5-gap-analysis.csv: undated copies of the rows of " + r.Script
		out = append(out, r)
	}
	return out
}

// llamaB200NM is what the Llama 3.3 70B B200 runs' compilation config sets beyond the fused
// all-reduce + RMSNorm and cudagraph_mode FULL_DECODE_ONLY (llamaB2002025).
const llamaB200NM = "compilation-config splitting_ops [] with the attention + FP8-quant fusion and custom_ops +quant_fp8, +rms_norm: priced as the tables' unfused kernels; the eager steps' kernel launches (FULL_DECODE_ONLY runs every step holding a prefill without CUDA graphs) are priced only as eager all-reduces"

// llamaB2002025 is the 2025 Llama 3.3 70B B200 scripts' config.yaml (9596d23d7): FP8 KV cache,
// async scheduling, no prefix caching, 8,192 batched tokens, --max-num-seqs 512,
// cudagraph_mode FULL_DECODE_ONLY and the FlashInfer all-reduce fusion.
func llamaB2002025(b *Benchmark) {
	b.KVCacheDtype, b.PrefixCaching, b.MaxNumSeqs, b.CUDAGraphMode = model.KVFP8, false, 512, model.CUDAGraphFullDecodeOnly
	fused2025(b)
}

// fused2025 is the 2025 B200 scripts' FlashInfer all-reduce fusion: compilation-config
// pass_config enable_fi_allreduce_fusion true, VLLM_FLASHINFER_ALLREDUCE_FUSION_THRESHOLDS_MB
// '{"2":32,"4":32,"8":8}'.
func fused2025(b *Benchmark) {
	b.FuseAllReduceRMS, b.AllReduceFusionMaxMB = scriptSets(true), FusionThresholds{TP2: 32, TP4: 32, TP8: 8}
}

// kimiFlags is what InferenceX's Kimi-K2.5 scripts set on top of vLLM's defaults:
// --max-num-seqs $CONC (--gpu-memory-utilization 0.90 unless raised) and
// --compilation_config.pass_config.fuse_allreduce_rms true. None of them passes
// --enable-expert-parallel (only --tensor-parallel-size=$TP): the configs' "ep: 4" search
// points (nvidia-master.yaml, kimik2.5-fp4-b200-vllm from a58dedd5a) ran with every expert
// sharded over the four GPUs.
func kimiFlags(b *Benchmark) {
	b.MaxNumSeqsIsConcurrency, b.FuseAllReduceRMS, b.ExpertParallel = true, scriptSets(true), scriptSets(false)
}

// scriptSets is a switch the script sets explicitly (Benchmark.FuseAllReduceRMS).
func scriptSets(v bool) *bool { return &v }

// kimiNVFP4 is the KV cache of NVIDIA's NVFP4 Kimi-K2.5 under --kv-cache-dtype auto: its
// quantization config names an FP8 KV cache (kv_cache_quant_algo FP8, kv_cache_scheme 8-bit
// float), which vLLM serves when the dtype is left to the checkpoint. (A BF16 cache would not
// hold the measured runs' 32 and 64 requests of ISL 8192 on 4 GPUs, which they served without
// queueing.)
func kimiNVFP4(b *Benchmark) { b.KVCacheDtype = model.KVFP8 }

// blackwellFP4 is the flags of InferenceX's MiniMax-M2.5 NVFP4 (and B300 FP8) scripts:
// --gpu-memory-utilization 0.90 --kv-cache-dtype fp8 --max-cudagraph-capture-size 2048
// --max-num-batched-tokens $((ISL*2)) --no-enable-prefix-caching, max_model_len ISL+OSL+200,
// and VLLM_FLOAT32_MATMUL_PRECISION=high in runs from 2026-04-22.
func blackwellFP4(b *Benchmark) {
	b.KVCacheDtype, b.MaxCUDAGraphCaptureSize, b.PrefixCaching = model.KVFP8, 2048, false
	b.MaxNumBatchedTokens, b.BatchedTokensPerISL = 0, 2
	b.Float32MatmulPrecision, b.HighPrecisionSince = "", "2026-04-22"
}

// hopper2025 is InferenceX's 2025 Hopper config.yaml: async-scheduling, no prefix caching,
// 8,192 batched tokens, --max-num-seqs $CONC.
func hopper2025(b *Benchmark) {
	b.PrefixCaching, b.MaxNumSeqsIsConcurrency = false, true
}

// hopper2026 is the gpt-oss Hopper scripts of 2026: as hopper2025 with
// max-cudagraph-capture-size 2048 (async scheduling now vLLM's default).
func hopper2026(b *Benchmark) {
	hopper2025(b)
	b.MaxCUDAGraphCaptureSize = 2048
}

// gapAnalysis is AIConfigurator's aic-auto-gap-analysis collection (the Qwen3-32B BF16 rows
// on H100, Qwen3-235B-A22B-FP8 and nvidia/Llama-3.1-8B-Instruct-FP8 on H200, vLLM 0.12.0). It
// is an internal NVIDIA project: every row's source_file is a path on an AIConfigurator
// developer's laptop (/Users/harrli/projects/aic-auto-gap-analysis/data/<gpu>/vllm/0.12.0/…),
// its dated rows carry internal cluster job ids, and no script, launch command or benchmark
// log of it is public (searched: ai-dynamo/aiconfigurator's whole history, its issues and PRs,
// the AIConfigurator paper). What the public record does say:
//   - the server: the collection's dated rows (qwen3_32b.csv, qwen3_235b_a22b.csv, 2026-01-23/25)
//     name nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0 — Dynamo's vLLM worker (dynamo.vllm),
//     which builds vLLM's config with the OpenAI server's usage context (main.py,
//     setup_vllm_engine: vLLM's 8,192 batched tokens and 1,024 sequences on GPUs of ≥ 70 GiB),
//     turns prefix caching on unless told otherwise (args.py) and receives token ids from
//     Dynamo's Rust frontend (ModelInput.Tokens), so no vLLM API-server tokenisation is paid;
//   - the client: AIConfigurator's own deploy-and-benchmark runner of that period
//     (src/aiconfigurator/eval/benchmarks/genai_perf_runner.py, 2025-08-22 … removed
//     2026-03-03 in #504) drives aiperf with exact lengths (input and output stddev 0,
//     min_tokens = max_tokens = OSL, ignore_eos), --request-count 10 × c and
//     --warmup-request-count 2 × c at --concurrency c.
//
// Everything else (KV cache dtype, block size, max_num_seqs, batched tokens, CUDA-graph
// sizes, memory fraction, whether AIConfigurator's generator wrote the flags) is unknown and
// left at vLLM 0.12's defaults: BF16 KV (Qwen3-235B-A22B-FP8's quantization config names no KV
// cache dtype; nvidia's Llama-3.1-8B-Instruct-FP8 config is not in ../shared), block 16,
// memory 0.90, step-synchronous scheduling (async became vLLM's default in 0.14).
func gapAnalysis(m, sku, precision string) Run {
	return Run{Model: m, System: sku, Precision: precision,
		Script: "aic-auto-gap-analysis (AIConfigurator's internal collection; client: AIConfigurator's aiperf runner, eval/benchmarks/genai_perf_runner.py)",
		Image:  "vLLM 0.12.0 under Dynamo's vllm-runtime:0.8.0 (named by the collection's dated rows)",
		NotModelled: "the server's flags are not published: vLLM 0.12's defaults assumed (BF16 KV, block 16, 8,192 tokens, 1,024 sequences, prefix caching on, step-synchronous); " +
			"Dynamo's frontend tokenisation (Rust) not priced",
		Benchmark: Benchmark{Name: "aic-gap-analysis", KVCacheDtype: model.KVBF16, BlockSize: 16, GPUMemoryUtilization: 0.9,
			MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024, PrefixCaching: true, ExtraModelLen: 200,
			Float32MatmulPrecision: model.PrecisionHighest, RangeRatio: 1, RequestsPerSlot: 10, WarmupPerSlot: 2}}
}

var versionPattern = regexp.MustCompile(`\d+\.\d+\.\d+`)

// version is the vLLM release of the run's image ("" when it names none).
func (r Run) version() string { return versionPattern.FindString(r.Image) }

// runOf is the run that measured row r: the listed one matching its model, GPU, precision
// and date, else the seed's benchmark (InferenceX()).
func runOf(r Row) Run {
	run, _ := listedRun(r)
	return run
}

// listedRun is runOf's answer, and whether it is a listed run rather than the fallback.
func listedRun(r Row) (Run, bool) {
	m, sku := cmp.Or(r.Model, model.SeedDeployment().ModelName), cmp.Or(r.System, model.SeedDeployment().HardwareSKU)
	for _, run := range InferenceXRuns() {
		if run.Backend.OrDefault() == model.Backend(r.Backend).OrDefault() &&
			run.Model == m && run.System == sku && run.Precision == r.Precision && (!run.Undated || r.Measured == "") &&
			(run.From == "" || r.Measured >= run.From) && (run.To == "" || (r.Measured != "" && r.Measured <= run.To)) && run.Shape.holds(r) {
			return run, true
		}
	}
	return Run{Model: m, System: sku, Precision: r.Precision,
		Script: "benchmarks/single_node/minimaxm2.5_fp8_b200.sh@bddbf4031 (VLLM_FLOAT32_MATMUL_PRECISION=high from 41ed82dc1)",
		Image:  "vllm/vllm-openai:v0.19.0-cu130", Benchmark: InferenceX()}, false
}

// RunShape is the branch of a script a row took: its ISL and OSL, its TP size, a
// concurrency range, or whether the row carries its config id (zero values: any).
type RunShape struct {
	ISL            int  `json:"isl,omitempty"`
	OSL            int  `json:"osl,omitempty"`
	TP             int  `json:"tp,omitempty"`
	MoEEP          int  `json:"moe_ep,omitempty"` // the row's moe_ep_size label
	MinConcurrency int  `json:"min_concurrency,omitempty"`
	MaxConcurrency int  `json:"max_concurrency,omitempty"`
	NoConfigID     bool `json:"no_config_id,omitempty"`  // only rows whose collection left out the config id
	HasConfigID    bool `json:"has_config_id,omitempty"` // only rows that name it
}

// holds reports whether row r took this branch.
func (s RunShape) holds(r Row) bool {
	return (s.ISL == 0 || r.ISL == s.ISL) && (s.OSL == 0 || r.OSL == s.OSL) && (s.TP == 0 || r.TP == s.TP) && (s.MoEEP == 0 || r.MoEEP == s.MoEEP) &&
		(s.MinConcurrency == 0 || r.Concurrency >= s.MinConcurrency) && (s.MaxConcurrency == 0 || r.Concurrency <= s.MaxConcurrency) &&
		(!s.NoConfigID || r.ConfigID == "") && (!s.HasConfigID || r.ConfigID != "")
}

// disjoint reports whether no row can take both branches.
func (s RunShape) disjoint(o RunShape) bool {
	differ := func(a, b int) bool { return a != 0 && b != 0 && a != b }
	below := func(hi, lo int) bool { return hi != 0 && lo != 0 && hi < lo }
	return differ(s.ISL, o.ISL) || differ(s.OSL, o.OSL) || differ(s.TP, o.TP) || differ(s.MoEEP, o.MoEEP) ||
		below(s.MaxConcurrency, o.MinConcurrency) || below(o.MaxConcurrency, s.MinConcurrency) ||
		s.NoConfigID && o.HasConfigID || s.HasConfigID && o.NoConfigID
}

// tokenizeBatchingOf is how run r's server tokenises text prompts: as its vLLM release
// batches them; SGLang's TokenizerManager each as it arrives, with no batch window
// (model.TokenizeEach); TensorRT-LLM's server one request at a time (TokenizeSerial).
func tokenizeBatchingOf(r Run) string {
	switch r.Backend.OrDefault() {
	case model.BackendSGLang:
		return model.TokenizeEach
	case model.BackendTRTLLM:
		return model.TokenizeSerial
	}
	return model.TokenizeBatchingOf(r.version())
}
