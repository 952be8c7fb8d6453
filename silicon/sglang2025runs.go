package silicon

import "github.com/routerlab/routerlab/model"

// The sample's SGLang DeepSeek rows on B200 of 2025 are InferenceX's scheduled sweeps: from
// 700f3054b (#166) the full-sweep-{1k1k,1k8k,8k1k}-scheduler workflows ran every config at
// 00:00 UTC, one workflow run per sequence-length pair (the rows' workflow_run_id 122–124 on
// 2025-11-10, 146–148 on 2025-11-18), with the config and scripts of main at that hour. The
// runner (launch_b200-nvd.sh) served the script's flags and ran benchmark_serving.py's random
// dataset at the workflow's --random-range-ratio 0.8, no warm-up, --num-prompts 50 × CONC
// (20 × CONC at 1k/8k) when MODEL is nvidia/DeepSeek-R1-0528-FP4 or deepseek-ai/DeepSeek-R1-0528
// and 10 × CONC otherwise. A row's tp and ep labels are the config's (utils/process_result.py
// records the workflow's TP and EP_SIZE; generate_sweep_configs.py gives ep 1 to a
// search-space entry without one), not what the server ran. Neither script passes
// --enable-dp-attention or --moe-a2a-backend (and --data-parallel-size=1): attention is
// tensor-parallel over the TP GPUs, and the experts are split as the MoE flags say.

// dsr1FP4B200Early is what dsr1_fp4_b200_docker.sh of 2025-11 set that the replay does not
// price, and what prices its experts and checkpoint.
const dsr1FP4B200Early = "--enable-ep-moe and --enable-flashinfer-trtllm-moe, SGLang's deprecated spellings of --ep-size = TP and --moe-runner-backend flashinfer_trtllm (ServerArgs' deprecated-argument handling, python/sglang/srt/server_args.py; InferenceX d8fe8f73e #204 replaced them so): experts priced from SGLang 0.5.14's sglang_flashinfer_trtllm_moe rows; the v0.5.3rc1 image priced on the 0.5.9 tables; --enable-flashinfer-allreduce-fusion, --enable-symm-mem and --stream-interval 10 not priced; the checkpoint priced from nvidia/DeepSeek-V3.1-NVFP4's config (MLA's down- and up-projections BF16, o_proj and the rest NVFP4); the KV pool sized as SGLang sizes it from --mem-fraction-static 0.85, less the CUDA context"

// dsr1FP4B200SGLang2025Runs are model m's B200 NVFP4 rows of 2025-11 (labelled tp 4 or 8
// with moe_tp = tp, moe_ep 1). Before d8fe8f73e (#204, 2025-11-10 19:55 UTC) the
// dsr1-fp4-b200-sglang config served lmsysorg/sglang:v0.5.3rc1-cu129-b200 (not v0.5.5) with
// no ep in its search space, and benchmarks/dsr1_fp4_b200_docker.sh passed --enable-ep-moe
// (expert parallelism over the TP group: the label's tensor-parallel experts are the
// config's default ep 1, not the server's layout) and --enable-flashinfer-trtllm-moe, with
// the flags of 12ba0ae07's script: --chunked-prefill-size 16,384 (--max-prefill-tokens
// unset: ServerArgs' 16,384 at 469c63e5; the v0.5.3rc1 tag not read), --max-running-requests and --cuda-graph-max-bs 256,
// --mem-fraction-static 0.85, FP8 KV cache, no radix cache, --scheduler-recv-interval 10
// below c 16 and 30 from it. The 2025-11-10 rows are that day's 00:00 UTC sweep (main at
// 79abd6cb4: nvidia/DeepSeek-R1-0528-FP4-V2, 10 × CONC prompts); those of 2025-11-02 ran the
// same script (unchanged from e06929c70) from .github/workflows/dsr1-tmpl.yml, which served
// nvidia/DeepSeek-R1-0528-FP4 (the attention's output projection BF16, which V2 quantises),
// so the client posted 50 × CONC prompts (20 × at 1k/8k).
func dsr1FP4B200SGLang2025Runs(m string) []Run {
	run := func(day, script string, shape RunShape, recv, prompts int) Run {
		nm := dsr1FP4B200Early
		if day == "2025-11-02" {
			nm += "; nvidia/DeepSeek-R1-0528-FP4's o_proj, BF16 in that checkpoint, priced in NVFP4 as V2 and V3.1-NVFP4 quantise it"
		}
		b := dsr1SGLangOn(day, 16384, 256, 0.85, model.KVFP8, recv)
		b.MoEBackend, b.ExpertParallel, b.RequestsPerSlot = model.MoERunnerFlashInferTRTLLM, scriptSets(true), prompts
		return Run{Backend: model.BackendSGLang, Model: m, System: "b200_sxm", Precision: "fp4", From: day, To: day, Shape: shape,
			Script: script, Image: "lmsysorg/sglang:v0.5.3rc1-cu129-b200 (InferenceX before d8fe8f73e #204; priced on the 0.5.9 tables)",
			NotModelled: nm, Benchmark: b}
	}
	const nov2, nov10 = "benchmarks/dsr1_fp4_b200_docker.sh@e06929c70 (nvidia/DeepSeek-R1-0528-FP4)", "benchmarks/dsr1_fp4_b200_docker.sh@79abd6cb4"
	return []Run{
		run("2025-11-02", nov2, RunShape{OSL: 8192, MaxConcurrency: 15}, 10, 20),
		run("2025-11-02", nov2, RunShape{OSL: 8192, MinConcurrency: 16}, 30, 20),
		run("2025-11-02", nov2, RunShape{OSL: 1024, MaxConcurrency: 15}, 10, 50),
		run("2025-11-02", nov2, RunShape{OSL: 1024, MinConcurrency: 16}, 30, 50),
		run("2025-11-10", nov10, RunShape{MaxConcurrency: 15}, 10, 10),
		run("2025-11-10", nov10, RunShape{MinConcurrency: 16}, 30, 10),
	}
}

// dsr1FP8B200Early is what dsr1_fp8_b200_docker.sh of 2025-11-18 set that the replay does not
// price, and what prices its experts.
const dsr1FP8B200Early = "--ep-size 8 with --moe-runner-backend flashinfer_trtllm: block-FP8 experts priced from vLLM 0.24.0's rows of the same FlashInfer TRT-LLM-gen kernel, as SGLang's B200 block-FP8 experts are; the v0.5.5 image priced on the 0.5.9 tables; --enable-flashinfer-allreduce-fusion, SGLANG_ENABLE_FLASHINFER_GEMM and --stream-interval 30 not priced; the KV pool sized as SGLang sizes it from --mem-fraction-static 0.82, less the CUDA context"

// dsr1FP8B200SGLang2025Runs are model m's B200 FP8 rows of 2025. Those of 2025-11-18
// (labelled tp 64 with moe_tp 8 × moe_ep 8: productTEP reads them as tp 8, moe_ep 8) are that
// day's 00:00 UTC sweep, main at 0ba7aa3ff: d8fe8f73e (#204) had set the image to
// lmsysorg/sglang:v0.5.5-cu129-amd64 and the config's search space to tp 8, ep 8, and
// 189ae51cc (#242) set ep back to 1 only at 20:03 UTC that day. benchmarks/
// dsr1_fp8_b200_docker.sh there passes --ep-size $EP_SIZE, --moe-runner-backend
// flashinfer_trtllm, --quantization fp8 and the flags of 12ba0ae07's TP 8 branch
// (--max-running-requests and --cuda-graph-max-bs 128, --mem-fraction-static 0.82, 32,768-token
// chunks and prefill budget, FP8 KV cache, no radix cache, receive interval 10 below c 16 and
// 30 from it); the model is deepseek-ai/DeepSeek-R1-0528, so the client posted 50 × CONC
// prompts (20 × at 1k/8k). The one row of 2025-12-31 (8k/1k c 64, the sweep of d27433dff,
// #276, at 15:17:57 UTC: v0.5.6 image, ep 1) ran on a runner of the b200 label, which then
// held Docker nodes (dsr1_fp8_b200_docker.sh: 50 × CONC prompts at 8k/1k) and Slurm nodes
// (dsr1_fp8_b200_slurm.sh: 10 × CONC): its client is not known, and it is not replayed.
func dsr1FP8B200SGLang2025Runs(m string) []Run {
	run := func(shape RunShape, recv, prompts int) Run {
		b := dsr1SGLangOn("2025-11-18", 32768, 128, 0.82, model.KVFP8, recv)
		b.RequestsPerSlot = prompts
		return Run{Backend: model.BackendSGLang, Model: m, System: "b200_sxm", Precision: "fp8", From: "2025-11-18", To: "2025-11-18", Shape: shape,
			Script: "benchmarks/dsr1_fp8_b200_docker.sh@0ba7aa3ff", Image: "lmsysorg/sglang:v0.5.5-cu129-amd64 (InferenceX d8fe8f73e #204; priced on the 0.5.9 tables)",
			NotModelled: dsr1FP8B200Early, Benchmark: b}
	}
	dec31 := run(RunShape{}, 30, 50)
	dec31.From, dec31.To, dec31.Script, dec31.Image, dec31.NotModelled = "2025-12-31", "2026-03-24", "benchmarks/dsr1_fp8_b200_{docker,slurm}.sh@d27433dff", "lmsysorg/sglang:v0.5.6-cu129-amd64", ""
	dec31.Skip = "the sweep of InferenceX d27433dff (#276, v0.5.6 image) ran on a Docker node (dsr1_fp8_b200_docker.sh: 50 × CONC prompts at 8k/1k) or a Slurm node (dsr1_fp8_b200_slurm.sh: 10 × CONC) of the b200 label: the client is not known"
	return []Run{
		run(RunShape{OSL: 8192, MaxConcurrency: 15}, 10, 20),
		run(RunShape{OSL: 8192, MinConcurrency: 16}, 30, 20),
		run(RunShape{OSL: 1024, MaxConcurrency: 15}, 10, 50),
		run(RunShape{OSL: 1024, MinConcurrency: 16}, 30, 50),
		dec31,
	}
}
