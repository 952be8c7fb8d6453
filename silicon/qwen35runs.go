package silicon

import "github.com/routerlab/routerlab/model"

// The sample's SGLang Qwen3.5-397B-A17B rows (hybrid linear attention: model/hybrid.go). The
// dated ones are InferenceX's qwen3.5-{fp8,bf16}-{b200,h200}-sglang configs (their images are
// InferenceX's lmsysorg/sglang:v0.5.9-cu130 and nightly-dev-20260216 tags, their shapes the
// configs' 1k/1k, 1k/8k, 8k/1k at c 4–64 or 128); the undated rows from
// qwen3.5-397b-gap-analysis.csv are copies of dated ones (qwen35UndatedNM), replayed with the
// settings of the run that measured them. The
// B200 and H200 scripts were read at the one revision the index holds (SemiAnalysisAI/InferenceX
// benchmarks/single_node/qwen3.5_fp8_b200.sh at 01fa35cf, qwen3.5_bf16_b200.sh at 29d69fa5,
// qwen3.5_fp8_h200.sh at 2116fc43), not at the rows' dates; the B300 ones at the commits
// whose workflow measured the rows (qwen35Runs).

const qwen35 = "Qwen/Qwen3.5-397B-A17B"

// qwen35B200 is the B200 scripts' server: --disable-radix-cache, --chunked-prefill-size and
// --max-prefill-tokens 32,768, --max-running-requests 128, --cuda-graph-max-bs CONC (every
// decode batch of the run: at most CONC requests decode), --mem-fraction-static 0.82,
// --scheduler-recv-interval 10 below c 16 and 30 from it, --ep-size EP_SIZE, the FP8 KV cache
// (fp8_e4m3) for the FP8 checkpoint and the model's BF16 otherwise; InferenceX's client.
func qwen35B200(kv string, recv int) Benchmark {
	return ix("2026-02-20", func(b *Benchmark) {
		b.PrefixCaching, b.AsyncScheduling = false, true
		b.MaxNumBatchedTokens, b.SGLangMaxPrefillTokens = 32768, 32768
		b.MaxNumSeqs, b.MaxCUDAGraphCaptureSize = 128, 128
		b.GPUMemoryUtilization, b.KVCacheDtype, b.SGLangRecvInterval = 0.82, kv, recv
		b.MemoryBudget = model.MemoryBudgetSGLang
	})
}

// qwen35H200 is the H200 script's server: the same without a receive interval or --ep-size
// (its experts tensor-parallel over the 8 GPUs whatever the rows' labels), 16,384-token
// chunks, --mem-fraction-static 0.8, FP8 KV cache.
func qwen35H200() Benchmark {
	return ix("2026-03-04", func(b *Benchmark) {
		b.PrefixCaching, b.AsyncScheduling = false, true
		b.MaxNumBatchedTokens, b.SGLangMaxPrefillTokens = 16384, 16384
		b.MaxNumSeqs, b.MaxCUDAGraphCaptureSize = 128, 128
		b.GPUMemoryUtilization, b.KVCacheDtype = 0.8, model.KVFP8
		b.MemoryBudget, b.ExpertParallel = model.MemoryBudgetSGLang, scriptSets(false)
	})
}

// qwen35B300FP8 is the B300 FP8 script's server as InferenceX's history holds it
// (qwen3.5_fp8_b300.sh from c0f62a2ef, #1048, 2026-04-17, unchanged until 2026-05-21):
// --max-running-requests and --cuda-graph-max-bs CONC, 16,384-token chunks,
// --mem-fraction-static 0.8, --scheduler-recv-interval 10, FP8 KV cache, the radix cache off,
// --expert-parallel-size EP_SIZE, with a client of prompts prompts per slot: 10 × CONC at
// c0f62a2ef, the run of 2026-04-17 (from and onward); CONC (--num-prompts CONC) on the
// unmerged 8k256 branch's 56324839 (2026-05-08), the revision the rows of 2026-04-03 are
// replayed with (qwen35Runs).
func qwen35B300FP8(from string, prompts int) Benchmark {
	return ix(from, func(b *Benchmark) {
		b.PrefixCaching, b.AsyncScheduling = false, true
		b.MaxNumBatchedTokens, b.SGLangMaxPrefillTokens = 16384, 16384
		b.MaxNumSeqsIsConcurrency, b.MaxCUDAGraphCaptureSize = true, 512
		b.GPUMemoryUtilization, b.KVCacheDtype, b.SGLangRecvInterval = 0.8, model.KVFP8, 10
		b.MemoryBudget, b.RequestsPerSlot = model.MemoryBudgetSGLang, prompts
	})
}

// Not priced from the scripts (named per row).
const (
	qwen35B200NM = "--attention-backend trtllm_mha (head_dim 256 attention priced from SGLang's collected rows), --stream-interval 30, --tokenizer-worker-num 6; SGL_ENABLE_JIT_DEEPGEMM and NCCL_NVLS_ENABLE; the KV pool and the recurrent-state pool sized as SGLang sizes them"
	// qwen35B200FP8NM adds what the FP8 script sets beside the BF16 one's server: its
	// block-FP8 linear layers run without DeepGEMM (SGL_ENABLE_JIT_DEEPGEMM=false,
	// SGLANG_ENABLE_FLASHINFER_GEMM=true), a kernel no collection measures, and are priced
	// from SGLang's DeepGEMM fp8_block rows (docs/hybrid-attention.md, "What a decode step is
	// priced from").
	qwen35B200FP8NM = qwen35B200NM + "; SGLANG_ENABLE_FLASHINFER_GEMM (block-FP8 linear layers without DeepGEMM, priced from SGLang's DeepGEMM fp8_block rows), --mamba-ssm-dtype bfloat16 (states priced at the config's float32)"
	qwen35B300NM    = "--attention-backend trtllm_mha, --enable-symm-mem, --mamba-ssm-dtype bfloat16 (states priced at the config's float32), --stream-interval 50, --use-chat-template; the KV pool and the recurrent-state pool sized as SGLang sizes them"
	// qwen35B300EarlyNM is what is not known of the B300 FP8 rows of 2026-04-03.
	qwen35B300EarlyNM = "no InferenceX branch holds a B300 Qwen3.5 script before 2026-04-15 (the MTP config's c78beefff; the rows are a collection's wip copies): replayed with the earliest script's server and the client of the 8k256 branch's revision (CONC prompts), whose flags may differ from the run's"
	qwen35H200NM      = "--attention-backend flashinfer, --enable-flashinfer-allreduce-fusion, --mamba-ssm-dtype bfloat16 (states priced at the config's float32), --stream-interval 50, --decode-log-interval 1; the KV pool and the recurrent-state pool sized as SGLang sizes them"
)

// qwen35B200MTPDay is the day InferenceX measured its B200 FP8 Qwen3.5 MTP config, the only
// B200 FP8 rows of that day: qwen3.5-fp8-b200-sglang-mtp, added in 35d4bb367 (#898, merged
// 2026-03-20), swept TP 4 with EP 1 at c 4–256 on the three shapes, the layout and
// concurrencies of every row of that day; the plain config then ran TP 4 only with EP 4, TP 8
// only at c ≤ 8 and nothing above c 64 (.github/configs/nvidia-master.yaml at 35d4bb367).
const qwen35B200MTPDay = "2026-03-20"

// qwen35B200MTP is why those rows are not replayed: the MTP script runs SGLang's EAGLE
// speculative decoding, which the replay does not model for SGLang (package specdec models
// TensorRT-LLM's MTP only).
const qwen35B200MTP = "qwen3.5-fp8-b200-sglang-mtp's rows (qwen3.5_fp8_b200_mtp.sh at 35d4bb367: --speculative-algorithm EAGLE, 3 steps, 4 draft tokens, top-k 1, --max-running-requests CONC): SGLang's speculative decoding is not modelled"

// qwen35UndatedNM says where an undated row comes from: every undated Qwen3.5 row of the
// sample (qwen3.5-397b-gap-analysis.csv: 76, replayed as AIConfigurator's collection before) has the
// shape, concurrency and layout of a dated InferenceX row and its TTFT and TPOT to within
// 0.006 ms, the file's rounding to 0.01 ms: the copies are InferenceX's measurements, not a
// collection of AIConfigurator's own, and replay as the runs that measured them; those of
// TP 4 with EP 1 copy the MTP config's rows and are skipped with them.
const qwen35UndatedNM = "an undated copy (qwen3.5-397b-gap-analysis.csv, TTFT and TPOT rounded to 0.01 ms) of this run's row at the same shape, concurrency and layout"

// qwen35Runs lists the Qwen3.5 runs, the receive interval's two branches on B200 as
// dsr1SGLangRuns does.
func qwen35Runs() []Run {
	run := func(sku, precision, script, image, nm string, shape RunShape, b Benchmark) Run {
		return Run{Backend: model.BackendSGLang, Model: qwen35, System: sku, Precision: precision, From: "2026-02-01", Shape: shape,
			Script: script, Image: image, NotModelled: nm, Benchmark: b}
	}
	const fp8B200, bf16B200 = "benchmarks/single_node/qwen3.5_fp8_b200.sh@01fa35cf", "benchmarks/single_node/qwen3.5_bf16_b200.sh@29d69fa5"
	const v059, nightly = "lmsysorg/sglang:v0.5.9-cu130 (InferenceX)", "lmsysorg/sglang:nightly-dev-20260216-d3bae71e (InferenceX; priced on the 0.5.9 tables)"
	// The B300 BF16 rows ran qwen3.5_bf16_b300.sh at 32274d6c1 (#1081, merged 2026-04-18 01:52
	// UTC, the rows' workflow of that day): the B200 BF16 script's server and client
	// (10 × CONC prompts) on the v0.5.10.post1 image. The FP8 rows of 2026-04-17 ran
	// c0f62a2ef's script (#1048); those of 2026-04-03 (v0.5.9 images) are replayed as before.
	const bf16B300, b300Image = "benchmarks/single_node/qwen3.5_bf16_b300.sh@32274d6c1", "lmsysorg/sglang:v0.5.10.post1-cu130 (InferenceX; priced on the 0.5.10 tables)"
	early := run("b300_sxm", "fp8", "benchmarks/single_node/qwen3.5_fp8_b300.sh@56324839 (8k256 branch)", "lmsysorg/sglang:v0.5.9-cu130 and v0.5.9-cu130-amd64 (a collection's wip rows; priced on the 0.5.9 tables)",
		qwen35B300NM+"; "+qwen35B300EarlyNM, RunShape{}, qwen35B300FP8("2026-04-03", 1))
	early.To = "2026-04-16"
	fp8B300 := run("b300_sxm", "fp8", "benchmarks/single_node/qwen3.5_fp8_b300.sh@c0f62a2ef", b300Image, qwen35B300NM, RunShape{}, qwen35B300FP8("2026-04-17", 10))
	fp8B300.From = "2026-04-17"
	// copyOf is run r claiming the undated copies of its rows of the given shape.
	copyOf := func(r Run, shape RunShape) Run {
		r.From, r.To, r.Undated, r.Shape = "", "", true, shape
		if r.Skip == "" {
			r.NotModelled += "; " + qwen35UndatedNM
		}
		return r
	}
	// The B200 FP8 rows of 2026-03-20 are qwen3.5-fp8-b200-sglang-mtp's (qwen35B200MTP); the
	// plain script's branches hold the days before and after.
	fp8B200Run := func(from, to string, shape RunShape, recv int) Run {
		r := run("b200_sxm", "fp8", fp8B200, v059, qwen35B200FP8NM, shape, qwen35B200(model.KVFP8, recv))
		r.From, r.To = from, to
		return r
	}
	mtp := run("b200_sxm", "fp8", "benchmarks/single_node/qwen3.5_fp8_b200_mtp.sh@35d4bb367", "lmsysorg/sglang:v0.5.9-cu130 (InferenceX)",
		"", RunShape{}, qwen35B200(model.KVFP8, 10))
	mtp.From, mtp.To, mtp.Skip = qwen35B200MTPDay, qwen35B200MTPDay, qwen35B200MTP
	const bf16B200NM = qwen35B200NM + "; --enable-flashinfer-allreduce-fusion, SGLANG_ENABLE_FLASHINFER_GEMM"
	bf16B200Low := run("b200_sxm", "bf16", bf16B200, nightly, bf16B200NM, RunShape{MaxConcurrency: 15}, qwen35B200(model.KVBF16, 10))
	bf16B200High := run("b200_sxm", "bf16", bf16B200, nightly, bf16B200NM, RunShape{MinConcurrency: 16}, qwen35B200(model.KVBF16, 30))
	h200 := run("h200_sxm", "fp8", "benchmarks/single_node/qwen3.5_fp8_h200.sh@2116fc43", "lmsysorg/sglang:v0.5.9-cu129 (InferenceX)", qwen35H200NM, RunShape{}, qwen35H200())
	return []Run{
		fp8B200Run("2026-02-01", "2026-03-19", RunShape{MaxConcurrency: 15}, 10),
		fp8B200Run("2026-02-01", "2026-03-19", RunShape{MinConcurrency: 16}, 30),
		mtp,
		fp8B200Run("2026-03-21", "", RunShape{MaxConcurrency: 15}, 10),
		fp8B200Run("2026-03-21", "", RunShape{MinConcurrency: 16}, 30),
		bf16B200Low, bf16B200High, h200,
		early,
		fp8B300,
		run("b300_sxm", "bf16", bf16B300, b300Image, qwen35B200NM+"; --enable-flashinfer-allreduce-fusion, SGLANG_ENABLE_FLASHINFER_GEMM", RunShape{MaxConcurrency: 15}, qwen35B200(model.KVBF16, 10)),
		run("b300_sxm", "bf16", bf16B300, b300Image, qwen35B200NM+"; --enable-flashinfer-allreduce-fusion, SGLANG_ENABLE_FLASHINFER_GEMM", RunShape{MinConcurrency: 16}, qwen35B200(model.KVBF16, 30)),
		copyOf(mtp, RunShape{TP: 4, MoEEP: 1}),
		copyOf(fp8B200Run("", "", RunShape{}, 10), RunShape{TP: 4, MoEEP: 4, MaxConcurrency: 15}),
		copyOf(fp8B200Run("", "", RunShape{}, 30), RunShape{TP: 4, MoEEP: 4, MinConcurrency: 16}),
		copyOf(fp8B200Run("", "", RunShape{}, 10), RunShape{TP: 8, MaxConcurrency: 15}),
		copyOf(fp8B200Run("", "", RunShape{}, 30), RunShape{TP: 8, MinConcurrency: 16}),
		copyOf(bf16B200Low, bf16B200Low.Shape), copyOf(bf16B200High, bf16B200High.Shape), copyOf(h200, h200.Shape),
	}
}
