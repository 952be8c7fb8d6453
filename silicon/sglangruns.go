package silicon

import "github.com/routerlab/routerlab/model"

// The sample's SGLang DeepSeek-R1 FP8 rows on H200 and B200 (labelled DeepSeek-V3 or -R1, one
// architecture) are InferenceX's dsr1-fp8-{h200,b200}-sglang configs, not AIConfigurator's
// gap-analysis collection: their ids name InferenceX's config (dsr1_h200_sglang_fp8_agg_…,
// config_id 81, 87, 271), their image is the configs' lmsysorg/sglang:v0.5.9-cu130 from
// 12ba0ae07 (#943, 2026-03-25, the rows' date), and their shapes are the configs' search
// space (1k/1k, 1k/8k, 8k/1k, c 4–64). Each replays with its script at that commit
// (SemiAnalysisAI/InferenceX benchmarks/single_node/dsr1_fp8_{h200,b200}.sh) and InferenceX's
// client (ix: lengths uniform in [0.8 L, L], 2 × c warm-ups, 10 × c prompts as text). The
// scripts' common flags: --disable-radix-cache, SGLang's overlap scheduler (not disabled).

const (
	dsr1Image = "lmsysorg/sglang:v0.5.9-cu130 (InferenceX 12ba0ae07, #943)"
	// dsr1H200NM and dsr1B200NM are what the scripts set that the replay does not price. The
	// B200 and B300 scripts' --attention-backend trtllm_mla is priced: SGLang's B200 and B300
	// MLA rows are trtllm_mla's (their kernel_source).
	dsr1H200NM = "--attention-backend flashinfer: MLA priced from SGLang's collected flash_attention rows (every H200 SGLang collection, 0.5.6.post2 to 0.5.14, measures MLA only with flash_attention); --stream-interval 10 and --decode-log-interval 1 (per-step logging) not priced; the KV pool sized as SGLang sizes it from --mem-fraction-static 0.82, less the CUDA context"
	dsr1B200NM = "--enable-flashinfer-allreduce-fusion, SGLANG_ENABLE_FLASHINFER_GEMM and --stream-interval 30 not priced; the KV pool sized as SGLang sizes it from --mem-fraction-static, less the CUDA context"
)

// dsr1SGLang is the InferenceX client with an SGLang script's flags: no radix cache, the
// overlap scheduler, the script's --chunked-prefill-size (the step's prefill budget) and
// --max-prefill-tokens, --max-running-requests and --cuda-graph-max-bs (equal in every
// branch), --mem-fraction-static, --kv-cache-dtype, --scheduler-recv-interval.
func dsr1SGLang(chunk, running int, mem float64, kv string, recv int) Benchmark {
	return dsr1SGLangOn("2026-03-25", chunk, running, mem, kv, recv)
}

// dsr1SGLangOn is dsr1SGLang with the client of a run measured on from (no warm-up before
// inferenceXWarmupSince).
func dsr1SGLangOn(from string, chunk, running int, mem float64, kv string, recv int) Benchmark {
	return ix(from, func(b *Benchmark) {
		b.PrefixCaching, b.AsyncScheduling = false, true
		b.MaxNumBatchedTokens, b.SGLangMaxPrefillTokens = chunk, chunk
		b.MaxNumSeqs, b.MaxCUDAGraphCaptureSize = running, running
		b.GPUMemoryUtilization, b.KVCacheDtype, b.SGLangRecvInterval = mem, kv, recv
		b.MemoryBudget = model.MemoryBudgetSGLang
	})
}

// dsr1SGLangRuns lists the runs of both labels: on H200 --max-running-requests 512 at 1k/1k
// and 256 at 1k/8k and 8k/1k; on B200 at TP 8 128 requests, memory 0.82, 32,768-token chunks and a
// receive interval of 10 below c 16 and 30 from it, at TP 4 (8k/1k only) 32 requests, memory
// 0.95, 8,192-token chunks, interval 10. The B200 rows that the 2026-03-25 and 2026-04-06
// collections copied without a config id mix this config's measurements with those of
// dsr1-fp8-b200-sglang-mtp (EAGLE speculative decoding, c up to 512), run the same day with
// the same image: they are not told apart and not replayed. Earlier B200 rows are the 2025
// runs of dsr1FP8B200SGLang2025Runs.
func dsr1SGLangRuns() []Run {
	const h200, b200 = "benchmarks/single_node/dsr1_fp8_h200.sh@12ba0ae07", "benchmarks/single_node/dsr1_fp8_b200.sh@12ba0ae07"
	var runs []Run
	for _, m := range []string{"deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1"} {
		run := func(sku, script, nm string, shape RunShape, b Benchmark) Run {
			return Run{Backend: model.BackendSGLang, Model: m, System: sku, Precision: "fp8", From: "2026-03-25", Shape: shape,
				Script: script, Image: dsr1Image, NotModelled: nm, Benchmark: b}
		}
		skip := run("b200_sxm", b200, "", RunShape{NoConfigID: true}, dsr1SGLang(32768, 128, 0.82, model.KVFP8, 10))
		skip.Skip = "a collection's copy without its config id: dsr1-fp8-b200-sglang and its EAGLE (MTP) config ran the same day with the same image; the rows are not told apart"
		runs = append(runs, dsr1FP8B200SGLang2025Runs(m)...)
		runs = append(runs,
			run("h200_sxm", h200, dsr1H200NM, RunShape{ISL: 1024, OSL: 1024}, dsr1SGLang(32768, 512, 0.82, model.KVBF16, 0)),
			run("h200_sxm", h200, dsr1H200NM, RunShape{ISL: 1024, OSL: 8192}, dsr1SGLang(32768, 256, 0.82, model.KVBF16, 0)),
			run("h200_sxm", h200, dsr1H200NM, RunShape{ISL: 8192, OSL: 1024}, dsr1SGLang(32768, 256, 0.82, model.KVBF16, 0)),
			skip,
			run("b200_sxm", b200, dsr1B200NM, RunShape{TP: 8, MaxConcurrency: 15, HasConfigID: true}, dsr1SGLang(32768, 128, 0.82, model.KVFP8, 10)),
			run("b200_sxm", b200, dsr1B200NM, RunShape{TP: 8, MinConcurrency: 16, HasConfigID: true}, dsr1SGLang(32768, 128, 0.82, model.KVFP8, 30)),
			run("b200_sxm", b200, dsr1B200NM, RunShape{TP: 4, HasConfigID: true}, dsr1SGLang(8192, 32, 0.95, model.KVFP8, 10)))
		runs = append(runs, dsr1FP4SGLangRuns(m)...)
	}
	return append(runs, dsr1FP8B300SGLangRuns()...)
}

// dsr1FP4NM is what dsr1_fp4_{b200,b300}.sh set that the replay does not price, and what
// prices their NVFP4 experts and checkpoint.
const dsr1FP4NM = "--enable-flashinfer-allreduce-fusion, --enable-symm-mem and --stream-interval 10 not priced; --moe-runner-backend flashinfer_trtllm priced from SGLang 0.5.14's sglang_flashinfer_trtllm_moe rows (0.5.9's collection measures NVFP4 experts only under CuteDSL); nvidia/DeepSeek-R1-0528-FP4-V2 priced from nvidia/DeepSeek-V3.1-NVFP4's config (MLA's down- and up-projections BF16, o_proj and the rest NVFP4); the KV pool sized as SGLang sizes it from --mem-fraction-static 0.85, less the CUDA context"

// dsr1FP4SGLangRuns are model m's rows of InferenceX's dsr1-fp4-b200-sglang config
// (nvidia/DeepSeek-R1-0528-FP4-V2, TP 4 and 8 with --ep-size = TP, c 4–128), measured
// 2026-03-25 with the v0.5.9-cu130 image of 12ba0ae07 (#943), and, labelled DeepSeek-V3 only,
// of dsr1-fp4-b300-sglang (the same search space but 1k/8k), measured 2026-04-17 with
// v0.5.10.post1-cu130 the day 9ebeafb4e (#1049) added it, priced on the 0.5.10 tables. Both
// scripts (benchmarks/single_node/dsr1_fp4_{b200,b300}.sh at those commits) set
// --chunked-prefill-size 16,384 (SGLang's default --max-prefill-tokens is the same),
// --max-running-requests and --cuda-graph-max-bs 256, --mem-fraction-static 0.85, FP8 KV
// cache, no radix cache, --moe-runner-backend flashinfer_trtllm and --scheduler-recv-interval
// 10 below c 16 and 30 from it. No EAGLE config of either ran those days, so the collections'
// copies are these configs'. The B200 rows of 2025-11 are dsr1FP4B200SGLang2025Runs'.
func dsr1FP4SGLangRuns(m string) []Run {
	run := func(sku, from, script, image string, shape RunShape, recv int) Run {
		b := dsr1SGLang(16384, 256, 0.85, model.KVFP8, recv)
		b.MoEBackend = model.MoERunnerFlashInferTRTLLM
		return Run{Backend: model.BackendSGLang, Model: m, System: sku, Precision: "fp4", From: from, Shape: shape,
			Script: script, Image: image, NotModelled: dsr1FP4NM, Benchmark: b}
	}
	const b200, b300 = "benchmarks/single_node/dsr1_fp4_b200.sh@12ba0ae07", "benchmarks/single_node/dsr1_fp4_b300.sh@9ebeafb4e"
	runs := append([]Run{
		run("b200_sxm", "2026-03-25", b200, dsr1Image, RunShape{MaxConcurrency: 15}, 10),
		run("b200_sxm", "2026-03-25", b200, dsr1Image, RunShape{MinConcurrency: 16}, 30),
	}, dsr1FP4B200SGLang2025Runs(m)...)
	if m != "deepseek-ai/DeepSeek-V3" {
		return runs
	}
	b300Run := func(shape RunShape, recv int) Run {
		r := run("b300_sxm", "2026-04-17", b300, dsr1B300Image, shape, recv)
		r.Benchmark = dsr1B300Client(r.Benchmark)
		r.NotModelled += "; " + dsr1B300ClientNM
		return r
	}
	return append(runs, b300Run(RunShape{MaxConcurrency: 15}, 10), b300Run(RunShape{MinConcurrency: 16}, 30))
}

// dsr1B300Image is the B300 configs' image, replayed on SGLang 0.5.10's tables (its release's
// collection: model.SGLangTablesVersion).
const dsr1B300Image = "lmsysorg/sglang:v0.5.10.post1-cu130 (InferenceX 9ebeafb4e #1049, 5b302f147 #1050; priced on the 0.5.10 tables)"

// The B300 DeepSeek rows are the workflows of 2026-04-17 (workflow_run_id 748 for the NVFP4
// configs 717 and 718, 749 for the FP8 configs 719 and 720), the day their scripts were
// merged; after the merges nothing that sets the server or the client changed that day (the
// scripts, benchmark_lib.sh, utils/bench_serving and launch_b300-nv.sh are untouched;
// 4f56bab72, #1064, changed only the runner list and benchmark-tmpl.yml's Slurm clean-up).
//
// dsr1ClientTokenizerV5 is how many tokens SGLang made of each token InferenceX's client
// counted in a DeepSeek-R1 prompt under transformers 5, as InferenceX#937 measured it: a
// 7,140-token prompt of the client's was 35,921 on the server (and 100 random tokens, 102 on
// the client's re-encoding, 531). DeepSeek-R1's tokenizer_config declares LlamaTokenizerFast
// over a byte-level BPE tokenizer.json; transformers 5 rebuilds that class's pre-tokenizer
// (Metaspace) and decoder, SGLang's server restores them from tokenizer.json
// (_fix_v5_tokenizer_components, python/sglang/srt/utils/hf_transformers_utils.py, as #937
// cites it at 9238bd08), and the client did not, so the text it decoded from its random ids
// re-encoded on the server to about five times as many tokens. #937's client-side repair
// (_fix_tokenizer_for_sglang, utils/bench_serving/backend_request_func.py at ef01c2205, in
// the tree since 2026-03-27) reads tokenizer.json from a local model directory only, and
// the B300 DeepSeek runs passed the Hub id (runners/launch_b300-nv.sh at 9ebeafb4e points
// MODEL at /scratch/models for Qwen3.5-397B-A17B-FP8 alone; benchmark_serving.py tokenises
// with --model): it applied to Hub ids from 5fe6d56ee (#1381, 2026-05-15), after which
// #1502 re-ran these configs. The images before v0.5.10 shipped transformers 4 (SGLang from
// 0.5.10 requires transformers 5, sglang-omni#675; #937 compares against an image on
// 4.57.1), so the B200 runs of v0.5.9 and earlier sent the prompts they counted.
const dsr1ClientTokenizerV5 = 35921.0 / 7140

// dsr1B300ClientNM is what dsr1B300Client prices and what it does not.
const dsr1B300ClientNM = "the client's transformers-5 tokenizer: each prompt priced at 35,921 / 7,140 × the tokens the client drew (InferenceX#937's measurement), output lengths as drawn (the server counts them), the server's tokenisation at InferenceX's rate per server token (not measured on such text); SGLang's default context length, the model's 163,840 (no --context-length)"

// dsr1B300Client is a B300 DeepSeek run's benchmark b with its client as it ran: prompts
// dsr1ClientTokenizerV5 times as long on the server as the client drew them, which the
// server admits up to the model's context length (the scripts pass no --context-length).
func dsr1B300Client(b Benchmark) Benchmark {
	b.ServerTokensPerClientToken = dsr1ClientTokenizerV5
	b.MaxModelLen = model.ContextLimit("deepseek-ai/DeepSeek-V3")
	return b
}

// dsr1FP8B300NM is what dsr1_fp8_b300.sh sets that the replay does not price.
const dsr1FP8B300NM = "--enable-flashinfer-allreduce-fusion, SGLANG_ENABLE_FLASHINFER_GEMM and --stream-interval 30 not priced; --moe-runner-backend flashinfer_trtllm (SGLang's own choice for these experts on Blackwell) priced from vLLM 0.24.0's rows of the same FlashInfer kernel; the KV pool sized as SGLang sizes it from --mem-fraction-static, less the CUDA context"

// dsr1FP8B300SGLangRuns are the rows (labelled DeepSeek-V3) of InferenceX's
// dsr1-fp8-b300-sglang config, measured 2026-04-17 the day 5b302f147 (#1050) added it: its
// script (benchmarks/single_node/dsr1_fp8_b300.sh there) has the B200 FP8 script's branches
// (TP 8: 128 requests, memory 0.82, 32,768-token chunks, receive interval 10 below c 16 and 30
// from it; TP 4, 8k/1k only: 32 requests, memory 0.95, 8,192-token chunks, interval 10), FP8
// KV cache, no radix cache. The same day's dsr1-fp8-b300-sglang-mtp rows carry other config
// ids and are not in the sample.
func dsr1FP8B300SGLangRuns() []Run {
	run := func(shape RunShape, b Benchmark) Run {
		return Run{Backend: model.BackendSGLang, Model: "deepseek-ai/DeepSeek-V3", System: "b300_sxm", Precision: "fp8", From: "2026-04-17", Shape: shape,
			Script: "benchmarks/single_node/dsr1_fp8_b300.sh@5b302f147", Image: dsr1B300Image, NotModelled: dsr1FP8B300NM + "; " + dsr1B300ClientNM,
			Benchmark: dsr1B300Client(b)}
	}
	return []Run{
		run(RunShape{TP: 8, MaxConcurrency: 15}, dsr1SGLang(32768, 128, 0.82, model.KVFP8, 10)),
		run(RunShape{TP: 8, MinConcurrency: 16}, dsr1SGLang(32768, 128, 0.82, model.KVFP8, 30)),
		run(RunShape{TP: 4}, dsr1SGLang(8192, 32, 0.95, model.KVFP8, 10)),
	}
}
