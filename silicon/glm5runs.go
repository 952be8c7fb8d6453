package silicon

import "github.com/routerlab/routerlab/model"

// The sample's SGLang GLM-5 rows (DeepSeek sparse attention: model/sparse.go), labelled
// zhipuai/GLM-5, are InferenceX's glm5-{fp8,fp4}-{b200,h200,b300}-sglang configs: their
// images are the lmsysorg/sglang nightlies and glm5-hopper tag the configs name, their shapes
// the configs' 1k/1k, 1k/8k and 8k/1k at c 4–128, TP 8 without expert or attention data
// parallelism. The scripts were read at the one revision the index holds, not at the rows'
// dates (SemiAnalysisAI/InferenceX benchmarks/single_node/glm5_fp8_b200.sh at 4eca3fe0,
// glm5_fp4_b200.sh at 405c601e, glm5_fp8_h200.sh at 0c82808d). SGLang pages a DSA model's
// cache in 64-token pages whatever --page-size says (server_args.py,
// _handle_model_specific_adjustments: "Setting page size to 64 for DeepSeek DSA").

const glm5 = "zhipuai/GLM-5"

// glm5B200FP8 is the B200 FP8 script's server: --kv-cache-dtype fp8_e4m3, the NSA prefill and
// decode backends trtllm, --moe-runner-backend flashinfer_trtllm, --cuda-graph-max-bs and
// --max-running-requests CONC (the capture size here the largest CONC, 128: every decode
// batch of every run is captured, as with CONC), --mem-fraction-static 0.85,
// --chunked-prefill-size and --max-prefill-tokens 32,768, --disable-radix-cache; the
// InferenceX client (10 × CONC prompts).
func glm5B200FP8() Benchmark {
	return ix("2026-03-17", func(b *Benchmark) {
		b.PrefixCaching, b.AsyncScheduling, b.BlockSize = false, true, 64
		b.MaxNumBatchedTokens, b.SGLangMaxPrefillTokens = 32768, 32768
		b.MaxNumSeqsIsConcurrency, b.MaxCUDAGraphCaptureSize = true, 128
		b.GPUMemoryUtilization, b.KVCacheDtype, b.MemoryBudget = 0.85, model.KVFP8, model.MemoryBudgetSGLang
	})
}

// glm5B200FP4 is the B200 NVFP4 script's server: the same backends and FP8 cache with
// --quantization modelopt_fp4, --mem-fraction-static 0.9, --scheduler-recv-interval 10,
// --cuda-graph-max-bs CONC and SGLang's own --max-running-requests.
func glm5B200FP4() Benchmark {
	return ix("2026-03-17", func(b *Benchmark) {
		b.PrefixCaching, b.AsyncScheduling, b.BlockSize = false, true, 64
		b.MaxNumBatchedTokens, b.SGLangMaxPrefillTokens = 32768, 32768
		b.MaxCUDAGraphCaptureSize, b.SGLangRecvInterval = 128, 10
		b.GPUMemoryUtilization, b.KVCacheDtype, b.MemoryBudget = 0.9, model.KVFP8, model.MemoryBudgetSGLang
	})
}

// glm5H200 is the H200 script's server: --tp-size and --mem-fraction-static 0.85, SGLang's
// defaults otherwise — the radix cache on, the KV cache BF16 (the DSA default below SM 10,
// server_args.py _set_default_nsa_kv_cache_dtype), the NSA backends flashmla_sparse (prefill)
// and fa3 (decode) (_set_default_nsa_backends), 8,192-token chunks on H200; its client
// benchmark_serving.py with 5 × CONC prompts.
func glm5H200() Benchmark {
	return ix("2026-03-17", func(b *Benchmark) {
		b.BlockSize, b.GPUMemoryUtilization, b.MemoryBudget = 64, 0.85, model.MemoryBudgetSGLang
		b.RequestsPerSlot = 5
	})
}

// Not priced from the scripts (named per row).
const (
	glm5B200NM = "the NSA backends trtllm: the 0.5.10 DSA modules' backend is not named (kernel_source dsa_nsa); --enable-flashinfer-allreduce-fusion, SGL_ENABLE_JIT_DEEPGEMM, --stream-interval 30; the script read at a later revision than the rows'; the KV pool sized as SGLang sizes it"
	glm5H200NM = "the NSA backends flashmla_sparse and fa3: the 0.5.10 DSA modules' backend is not named (kernel_source dsa_nsa); --tool-call-parser and --reasoning-parser, the chat endpoint's template; the KV pool sized as SGLang sizes it"
)

// glm5Runs lists the GLM-5 runs.
func glm5Runs() []Run {
	run := func(sku, precision, script, image, nm string, b Benchmark) Run {
		return Run{Backend: model.BackendSGLang, Model: glm5, System: sku, Precision: precision, From: "2026-03-01",
			Script: script, Image: image, NotModelled: nm, Benchmark: b}
	}
	b300 := run("b300_sxm", "fp8", "benchmarks/single_node/glm5_fp8_b300.sh (not read)", "lmsysorg/sglang:nightly-dev-cu13-20260401-b6fe0cca", "", glm5B200FP8())
	b300.Skip = "GLM-5's DSA modules are not measured with block-FP8 projections on B300 (sparse_attention/sglang 0.5.9 and 0.5.10 hold GLM-5 with BF16 projections only): not priced"
	return []Run{
		run("b200_sxm", "fp8", "benchmarks/single_node/glm5_fp8_b200.sh@4eca3fe0", "lmsysorg/sglang:nightly-dev-cu13-20260317-1eea7448 (priced on the 0.5.9 tables, attention on 0.5.10's)", glm5B200NM, glm5B200FP8()),
		run("b200_sxm", "fp4", "benchmarks/single_node/glm5_fp4_b200.sh@405c601e", "lmsysorg/sglang:nightly-dev-cu13-20260328-a27651d5 (priced on the 0.5.9 tables, attention on 0.5.10's)", glm5B200NM+"; --tokenizer-worker-num 6", glm5B200FP4()),
		run("h200_sxm", "fp8", "benchmarks/single_node/glm5_fp8_h200.sh@0c82808d", "lmsysorg/sglang:glm5-hopper (priced on the 0.5.9 tables, attention on 0.5.10's)", glm5H200NM, glm5H200()),
		b300,
	}
}
