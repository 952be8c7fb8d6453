package silicon

import (
	"slices"

	"github.com/routerlab/routerlab/model"
)

// The runs behind the sample's SGLang and TensorRT-LLM aggregated rows whose model the
// simulator has tables for (model.backendImports). Each replays with the settings of the run
// that measured it, as InferenceXRuns does for vLLM, on its backend's scheduler and tables.

// Model ids the SGLang and TRT-LLM rows use where the vLLM rows use another checkpoint's.
const llama8Meta = "meta-llama/Llama-3.1-8B-Instruct"

// trtllmInferenceX is an InferenceX trtllm-serve run of 2025 (benchmarks/70b_*_trt_slurm.sh):
// FP8 KV cache without block reuse (kv_cache_config dtype fp8, enable_block_reuse false), CUDA
// graphs of generation batches up to 1,024 (cuda_graph_config max_batch_size 1024, padded),
// TRT-LLM's 32-token KV blocks (tokens_per_block's default), max_batch_size's default 2,048,
// its overlap scheduler (on by default: a step is scheduled while the previous one runs, as
// vLLM's async scheduling), the KV cache at free_gpu_memory_fraction's default 0.9 of the
// memory left free (model.MemoryBudgetTRTLLM); client as every 2025 InferenceX run: benchmark_serving.py's random
// dataset at range ratio 0.8, 10 × CONC prompts, no warm-up, text prompts tokenised by the
// server. set applies the script's own max_num_tokens.
func trtllmInferenceX(set func(*Benchmark)) Benchmark {
	return ix("2025-10-29", func(b *Benchmark) {
		b.KVCacheDtype, b.BlockSize, b.PrefixCaching, b.AsyncScheduling = model.KVFP8, 32, false, true
		b.MaxNumSeqs, b.MaxCUDAGraphCaptureSize, b.MemoryBudget = 2048, 1024, model.MemoryBudgetTRTLLM
		set(b)
	})
}

// trtllmNM is what the InferenceX TRT-LLM scripts set that the replay does not price.
const trtllmNM = "stream_interval 10 (tokens streamed in tens)"

// trtllm70B is an InferenceX Llama-3.1-70B trtllm-serve script (benchmarks/70b_*_trt_slurm.sh
// at 73ef92251 and a267b4bd5) as a run per shape: at 1k/1k below TP 8 it sets
// batch_wait_max_tokens_ratio 0.9 and batch_wait_timeout_iters 20 (TensorRT-LLM's batch
// waiting, engine/sched_trtllm.go), elsewhere neither. Its --max_seq_len (and the H200 FP8
// and B200 FP4 scripts' --max_num_tokens) is the workflow's MAX_MODEL_LEN: 2,048 at 1k/1k,
// 9,216 at 1k/8k and 8k/1k (.github/workflows/full-sweep-tmpl.yml, max-model-len, at
// 73ef92251 and still at ad4f6a4a1, the rows' 2025-10-29).
func trtllm70B(sku, precision, script string, set func(*Benchmark)) []Run {
	run := Run{Backend: model.BackendTRTLLM, Model: llama70, System: sku, Precision: precision, Script: script,
		Image: "TensorRT-LLM (InferenceX's 2025 trtllm-serve image)", NotModelled: trtllmNM, Benchmark: trtllmInferenceX(set)}
	runs := batchWaitRuns(run, 20, 0.9,
		[]RunShape{{ISL: 1024, OSL: 1024, TP: 1}, {ISL: 1024, OSL: 1024, TP: 2}, {ISL: 1024, OSL: 1024, TP: 4}},
		[]RunShape{{ISL: 1024, OSL: 1024, TP: 8}, {ISL: 1024, OSL: 8192}, {ISL: 8192, OSL: 1024}})
	for i := range runs {
		runs[i].Benchmark.MaxModelLen = 9216
		if runs[i].Shape.OSL == 1024 && runs[i].Shape.ISL == 1024 {
			runs[i].Benchmark.MaxModelLen = 2048
		}
	}
	return runs
}

// batchWaitRuns is run once per shape: with TensorRT-LLM's batch waiting (iters,
// ratio) on the rows of waited, as its script sets it there, and without on those of rest.
func batchWaitRuns(run Run, iters int, ratio float64, waited, rest []RunShape) []Run {
	var out []Run
	for i, sh := range slices.Concat(waited, rest) {
		r := run
		r.Shape = sh
		if i < len(waited) {
			r.Benchmark.TRTLLMBatchWaitIters, r.Benchmark.TRTLLMBatchWaitRatio = iters, ratio
		}
		out = append(out, r)
	}
	return out
}

// backendGapAnalysis is AIConfigurator's aic-auto-gap-analysis collection for SGLang and
// TRT-LLM (data/<gpu>/<backend>/<version>/…, the source files the sample names), whose client
// is AIConfigurator's aiperf runner as aiperf.go describes it from the source (exact lengths,
// 10 × c timed and 2 × c warm-up requests issued at once behind a semaphore of c, text
// prompts through the chat endpoint, tokenised with the chat template by Dynamo's frontend)
// and whose server flags are not published.
// SGLang: the engine's defaults (python/sglang/srt/server_args.py at 469c63e5): chunked_prefill_size 8,192 on H100
// and H200 (the step's token budget), page size 1 (priced as 16-token blocks: capacity
// rounding only, the random prompts share no prefix), the radix cache on, the overlap
// scheduler on, KV cache in the model's dtype, mem_fraction_static from the GPU's memory less
// its reserve (about 0.84 on H100, 0.90 on H200) and the KV pool sized from it as SGLang does, CUDA graphs of decode batches up to
// cuda_graph_max_bs (model: 256 below TP 4 on Hopper, 512 from it).
//
// TRT-LLM: the engine configuration AIConfigurator generates for a benchmark of an
// aggregated worker (ai-dynamo/aiconfigurator src/aiconfigurator/generator/rule_plugin/
// benchmark/trtllm.rule at 581e4591, rendered by backend_templates/trtllm/
// extra_engine_args.1.2.0rc5.yaml.j2 at f90534bc): max_batch_size the run's batch (its
// concurrency), max_num_tokens max_batch_size + ISL + 1,500, CUDA graphs of every batch size
// up to max_batch_size, the overlap scheduler on, chunked prefill off, 32-token blocks
// (tokens_per_block's default) without block reuse, free_gpu_memory_fraction 0.80 of the
// memory left free (model.MemoryBudgetTRTLLM), the KV cache dtype AIConfigurator's quantisation
// of the checkpoint gives (generatedKVFP8). An engine default would
// not serve the runs: at ISL 8,192 TensorRT-LLM's default max_num_tokens (8,192) admits a
// prompt only into an empty batch, which the measured TTFTs rule out.
func backendGapAnalysis(b model.Backend, m, sku, precision string) Run {
	bench := Benchmark{Name: "aic-gap-analysis-" + string(b), KVCacheDtype: model.KVBF16, BlockSize: 16, GPUMemoryUtilization: 0.9,
		MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024, AsyncScheduling: true, PrefixCaching: true, ExtraModelLen: 200,
		Float32MatmulPrecision: model.PrecisionHighest, RangeRatio: 1, RequestsPerSlot: 10, WarmupPerSlot: 2}
	image, nm := "SGLang under Dynamo's sglang runtime (the collection's version directory)", "the server's flags are not published: the engine's defaults assumed"
	// What the replay leaves out of the client (aiperf.go).
	const client = "; the chat template's tokens Dynamo's frontend adds to each prompt, aiperf's dataset draws (replayed only with --dataset-entries-per-slot) and its client-side output token count"
	if b == model.BackendTRTLLM {
		bench.BlockSize, bench.GPUMemoryUtilization, bench.MemoryBudget, bench.PrefixCaching = 32, 0.8, model.MemoryBudgetTRTLLM, false
		bench.MaxNumBatchedTokens, bench.BatchedTokensAboveBatch, bench.MaxNumSeqsIsConcurrency, bench.MaxCUDAGraphCaptureSize = 0, 1500, true, 2048
		image = "TensorRT-LLM under Dynamo's trtllm runtime (the collection's version directory)"
		nm = "the server's flags are not published: AIConfigurator's generated benchmark configuration assumed"
	} else {
		// SGLang's KV pool: mem_fraction_static of the memory free at start, less the weights
		// (model.MemoryBudgetSGLang).
		bench.MemoryBudget = model.MemoryBudgetSGLang
		if sku == "h100_sxm" {
			bench.GPUMemoryUtilization = 0.84
		}
	}
	return Run{Backend: b, Model: m, System: sku, Precision: precision,
		Script:      "aic-auto-gap-analysis (AIConfigurator's internal collection; client: AIConfigurator's aiperf runner, eval/benchmarks/genai_perf_runner.py)",
		Image:       image,
		NotModelled: nm + client,
		Benchmark:   bench}
}

// backendRuns lists the SGLang and TRT-LLM runs.
func backendRuns() []Run {
	runs := slices.Concat(
		trtllm70B("h200_sxm", "fp8", "benchmarks/70b_fp8_h200_trt_slurm.sh@73ef92251", func(b *Benchmark) { b.BatchedTokensIsModelLen = true }),
		trtllm70B("b200_sxm", "fp8", "benchmarks/70b_fp8_b200_trt_slurm.sh@a267b4bd5", func(b *Benchmark) { b.MaxNumBatchedTokens = 16384 }),
		trtllm70B("b200_sxm", "fp4", "benchmarks/70b_fp4_b200_trt_slurm.sh@73ef92251", func(b *Benchmark) { b.BatchedTokensIsModelLen = true }),
	)
	runs = append(runs,
		backendGapAnalysis(model.BackendSGLang, qwen32, "h100_sxm", ""),
		backendGapAnalysis(model.BackendSGLang, qwen32, "h100_sxm", "fp8"), // its disaggregated rows
		backendGapAnalysis(model.BackendSGLang, qwen235, "h200_sxm", "fp8"),
		backendGapAnalysis(model.BackendSGLang, llama8Meta, "h200_sxm", "fp8"),
		generatedKVFP8(backendGapAnalysis(model.BackendTRTLLM, qwen32, "h100_sxm", "fp8")),
		generatedKVFP8(backendGapAnalysis(model.BackendTRTLLM, qwen235, "h100_sxm", "fp8")),
		backendGapAnalysis(model.BackendTRTLLM, llama8Meta, "h100_sxm", ""),
		backendGapAnalysis(model.BackendTRTLLM, gptOSS, "h200_sxm", "fp4"),
		backendGapAnalysis(model.BackendTRTLLM, gptOSS, "b200_sxm", "fp4"),
	)
	runs = append(runs, dsr1SGLangRuns()...)
	runs = append(runs, qwen35Runs()...)
	runs = append(runs, glm5Runs()...)
	return append(runs, dsr1TRTRuns()...)
}

// generatedKVFP8 is run with the FP8 KV cache AIConfigurator's generated configuration names
// for an FP8, block-FP8 or NVFP4 checkpoint: AIConfigurator infers kvcache_quant_mode fp8 from
// such a checkpoint's quantisation (src/aiconfigurator/sdk/models/helpers.py at 28db9123,
// _infer_quant_modes_from_raw_config), its generator writes that mode as
// kv_cache_config.dtype (generator/module_bridge.py at 0586a33b,
// config/backend_config_mapping.yaml at 043c66c5), and its benchmark rule turns only float16 and bfloat16
// into "auto" (rule_plugin/benchmark/trtllm.rule at 581e4591). gpt-oss's MXFP4 and the BF16
// checkpoints keep "auto": the checkpoint names no KV quantisation, so BF16.
func generatedKVFP8(run Run) Run {
	run.Benchmark.KVCacheDtype = model.KVFP8
	return run
}
