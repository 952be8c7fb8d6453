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
	// dsr1H200NM and dsr1B200NM are what the scripts set that the replay does not price.
	dsr1H200NM = "--attention-backend flashinfer: MLA priced from SGLang's collected flash_attention rows; --stream-interval 10 and --decode-log-interval 1 (per-step logging) not priced; the KV pool sized as SGLang sizes it from --mem-fraction-static 0.82, less the CUDA context"
	dsr1B200NM = "--attention-backend trtllm_mla: MLA priced from SGLang's collected flash_attention rows; --enable-flashinfer-allreduce-fusion, SGLANG_ENABLE_FLASHINFER_GEMM and --stream-interval 30 not priced; the KV pool sized as SGLang sizes it from --mem-fraction-static, less the CUDA context"
)

// dsr1SGLang is the InferenceX client with an SGLang script's flags: no radix cache, the
// overlap scheduler, the script's --chunked-prefill-size (the step's prefill budget) and
// --max-prefill-tokens, --max-running-requests and --cuda-graph-max-bs (equal in every
// branch), --mem-fraction-static, --kv-cache-dtype, --scheduler-recv-interval.
func dsr1SGLang(chunk, running int, mem float64, kv string, recv int) Benchmark {
	return ix("2026-03-25", func(b *Benchmark) {
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
// the same image: they are not told apart and not replayed. Earlier B200 rows ran the v0.5.6
// image and earlier scripts, not read.
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
		early := skip
		early.From, early.To, early.Shape = "", "2026-03-24", RunShape{}
		early.Skip, early.Image = "measured before InferenceX's #943 (v0.5.6 image, earlier script): not read", "lmsysorg/sglang:v0.5.6-cu129-amd64"
		runs = append(runs,
			run("h200_sxm", h200, dsr1H200NM, RunShape{ISL: 1024, OSL: 1024}, dsr1SGLang(32768, 512, 0.82, model.KVBF16, 0)),
			run("h200_sxm", h200, dsr1H200NM, RunShape{ISL: 1024, OSL: 8192}, dsr1SGLang(32768, 256, 0.82, model.KVBF16, 0)),
			run("h200_sxm", h200, dsr1H200NM, RunShape{ISL: 8192, OSL: 1024}, dsr1SGLang(32768, 256, 0.82, model.KVBF16, 0)),
			skip, early,
			run("b200_sxm", b200, dsr1B200NM, RunShape{TP: 8, MaxConcurrency: 15, HasConfigID: true}, dsr1SGLang(32768, 128, 0.82, model.KVFP8, 10)),
			run("b200_sxm", b200, dsr1B200NM, RunShape{TP: 8, MinConcurrency: 16, HasConfigID: true}, dsr1SGLang(32768, 128, 0.82, model.KVFP8, 30)),
			run("b200_sxm", b200, dsr1B200NM, RunShape{TP: 4, HasConfigID: true}, dsr1SGLang(8192, 32, 0.95, model.KVFP8, 10)))
	}
	return runs
}
