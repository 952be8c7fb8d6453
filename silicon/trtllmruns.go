package silicon

import (
	"cmp"
	"slices"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/specdec"
)

// The sample's TensorRT-LLM DeepSeek-R1 rows (labelled DeepSeek-V3 or -R1, one architecture)
// are InferenceX's dsr1-fp4-b200-trt, dsr1-fp8-b200-trt and dsr1-fp8-h200-trt configs, not
// AIConfigurator's gap-analysis collection: their ids name InferenceX's config
// (dsr1_b200_trtllm_fp4_agg_…, config ids 75, 82, 91, 177, …), their images are the configs'
// nvcr.io/nvidia/tensorrt-llm/release tags (1.1.0rc2.post2, 1.2.0rc6.post2) and their shapes
// the configs' search spaces. Each replays with the script its date ran
// (SemiAnalysisAI/InferenceX benchmarks/dsr1_{fp4,fp8}_{b200,h200}_trt[_slurm].sh) and
// InferenceX's client (ix).
//
// Two days' rows are the configs' speculative-decoding twins (dsr1-*-trt-mtp: MTP, DeepSeek's
// multi-token prediction, in TensorRT-LLM's one-model speculative decoding), which the
// collections copied without a config id: a row of an MTP run measures a TPOT that is the
// step time divided by the tokens accepted per step (1.7 to 2 times fewer milliseconds per
// token than the plain config at the same shape and image). They replay as MTP runs (package
// specdec, docs/speculative-decoding.md) with the -mtp scripts of their days:
//   - 2026-01-14: #392 ("Add MTP Benchmark Support for DeepSeek-R1 TRT", merged 2026-01-15,
//     bf3456727) swept the new -mtp configs (same 1.1.0rc2.post2 image as the plain ones) with
//     benchmarks/dsr1_{fp4,fp8}_{b200,h200}_trt_mtp_slurm.sh: at 1k/1k c 4 TEP 8 on B200 FP8
//     7.8 ms TPOT against the plain config's 14.6, on H200 8.6 against 13.8;
//   - 2026-02-05 (FP8, dsr1_fp8_b200_trt_mtp.sh at 5d517074c, #632) and 2026-02-06 (FP4,
//     dsr1_fp4_b200_trt_mtp.sh at 0aae52d4c, #642): the 1.2.0rc6.post3 image, which only the
//     -mtp configs ran (the plain configs kept 1.2.0rc6.post2): 5.4 ms TPOT at 1k/1k c 4 TP 8
//     FP8 against the plain config's 10.3.
//
// Every one of those scripts sets num_nextn_predict_layers 3 without attention data
// parallelism and 1 with it (whose rows stay skipped), max_batch_size CONC and max_num_tokens
// (MTP + 1) × CONC + ISL + 64 rounded up to 64, and no relaxed acceptance (strict, greedy).
const (
	dsr1TRTImage2025 = "nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2"
	dsr1TRTImage2026 = "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post2"
	dsr1TRTImageMTP  = "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3"
	dsr1TRTMTPDPSkip = "speculative decoding (MTP, 1 draft) with attention data parallelism: the MTP step on attention ranks is not modelled"
	// dsr1TRTMTPNM is what the -mtp scripts set that the replay does not price.
	dsr1TRTMTPNM = dsr1TRTNM + "; the MTP layer's own KV cache; --use-chat-template's template tokens"
	// dsr1TRTNM is what the scripts set that the replay does not price.
	dsr1TRTNM = "stream_interval 10 (tokens streamed in tens); prompt lengths' max_num_tokens rounded up to 64"
)

// dsr1TRT is an InferenceX DeepSeek-R1 trtllm-serve run: FP8 KV cache without block reuse
// (kv_cache_config dtype fp8, enable_block_reuse false), 32-token blocks (tokens_per_block's
// default), max_batch_size's default 2,048, the overlap scheduler (not disabled), the KV cache
// at free_gpu_memory_fraction mem of the memory left free (model.MemoryBudgetTRTLLM),
// max_num_tokens ISL + CONC + 64 (the scripts round it up to 64), CUDA graphs of generation
// batches up to graphs (padded), and where it runs attention data parallelism
// attention_dp_config enable_balance true, timeout_iters 60, batching_wait_iters 0 (every
// version of the scripts read). moe is moe_config.backend when not the release's default
// CUTLASS ("DEEPGEMM" runs the rows of the default tables on Blackwell: TensorRT-LLM's CUTLASS
// backend takes DeepGEMM's block-FP8 path there, and AIConfigurator measures both as deepgemm).
func dsr1TRT(from string, mem float64, graphs int, moe string, set func(*Benchmark)) Benchmark {
	return ix(from, func(b *Benchmark) {
		b.KVCacheDtype, b.BlockSize, b.PrefixCaching, b.AsyncScheduling = model.KVFP8, 32, false, true
		b.MaxNumSeqs, b.MaxCUDAGraphCaptureSize, b.MemoryBudget, b.GPUMemoryUtilization = 2048, graphs, model.MemoryBudgetTRTLLM, mem
		b.MaxNumBatchedTokens, b.BatchedTokensAboveBatch, b.MoEBackend = 0, 64, moe
		b.TRTLLMADPBalance, b.TRTLLMADPTimeoutIters = true, 60
		set(b)
	})
}

// dsr1TRTRuns lists the runs of both labels, by GPU and precision, each by date. The 2025
// scripts (benchmarks/dsr1_*_trt_slurm.sh) at 9596d23d7 ran the rows of 2025-11-02 and chose
// --ep_size and attention data parallelism themselves, whatever the row's label: --ep_size TP
// for FP8 always, for NVFP4 above a concurrency that depends on the shape (TP 8: 1k/1k c > 8,
// 1k/8k c > 16; TP 4: c > 32); attention DP (Benchmark.AttentionDP) for NVFP4 from c 256 at 1k/1k and 1k/8k
// and above c 32 at 8k/1k, for FP8 on B200 above c 32 at 1k/1k and c 64 otherwise, on H200
// above c 64 at 1k prompts and c 32 at 8k/1k. From 17d5e204f (2025-11-03) the config's ep and
// dp-attn are passed, which the rows' labels carry.
//   - B200 NVFP4 to 2026-01-13: moe_config.backend TRTLLM (CUTLASS only with attention data
//     parallelism), CUDA graphs to 512, memory 0.8;
//   - B200 NVFP4 from 2026-01-15: dsr1_fp4_b200_trt.sh at 6eecc0e66 (#620, 2026-02-03): TRTLLM
//     (CUTLASS with attention data parallelism), CUDA graphs to CONC, memory 0.8,
//     max_num_tokens at least 8,192;
//   - B200 FP8 to 2026-01-13: DEEPGEMM, CUDA graphs to 256, memory 0.8;
//   - B200 FP8 from 2026-01-15: dsr1_fp8_b200_trt.sh at ec7bafaae (#594, 2026-01-29): TRTLLM
//     (DEEPGEMM only at 1k/8k c ≥ 256, with attention data parallelism), CUDA graphs to CONC,
//     memory 0.8 (0.75 at 8k/1k TP 4), max_num_tokens at least 8,192;
//   - H200 FP8 to 2026-01-13: CUTLASS, CUDA graphs to 128, memory 0.75.
//
// CUDA graphs "to CONC" capture every decode batch of a closed loop at CONC: priced as 2,048.
func dsr1TRTRuns() []Run {
	const conc = 2048
	const script2025 = "@9596d23d7 to 2025-11-02, @d22bf9ca9 from 2025-11-03 (--ep_size from the config from 17d5e204f)"
	const fp8NM = dsr1TRTNM + "; piecewise CUDA graphs of mixed steps from c 64 (1k/8k: c 128)"
	ep := func(on bool) func(*Benchmark) { return func(b *Benchmark) { b.ExpertParallel = scriptSets(on) } }
	labels := func(*Benchmark) {}
	floor := func(b *Benchmark) { b.BatchedTokensAtLeast = 8192 }
	var runs []Run
	for _, m := range []string{"deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1"} {
		run := func(sku, precision, from, to, script, image, nm string, shape RunShape, b Benchmark) Run {
			return Run{Backend: model.BackendTRTLLM, Model: m, System: sku, Precision: precision, From: from, To: to, Shape: shape,
				Script: script, Image: image, NotModelled: nm, Benchmark: b}
		}
		mtp := func(sku, precision, day, script, image string, mem float64, graphs int, moe, nm string) Run {
			return run(sku, precision, day, day, "benchmarks/dsr1_"+precision+"_"+sku[:4]+"_trt_mtp"+script, image, dsr1TRTMTPNM+nm, RunShape{},
				dsr1TRT(day, mem, graphs, moe, func(b *Benchmark) {
					b.Speculative, b.MaxNumSeqsIsConcurrency = specdec.Config{DraftLen: 3}, true
				}))
		}
		const pw = "; piecewise CUDA graphs of mixed steps at some shapes"
		runs = append(runs,
			mtp("b200_sxm", "fp4", "2026-01-14", "_slurm.sh@bf3456727", dsr1TRTImage2025, 0.8, 512, model.MoEBackendTRTLLM, ""),
			mtp("b200_sxm", "fp4", "2026-02-06", ".sh@0aae52d4c", dsr1TRTImageMTP, 0.8, conc, model.MoEBackendTRTLLM, pw),
			mtp("b200_sxm", "fp8", "2026-01-14", "_slurm.sh@bf3456727", dsr1TRTImage2025, 0.8, 256, "", ""),
			mtp("b200_sxm", "fp8", "2026-02-05", ".sh@5d517074c", dsr1TRTImageMTP, 0.8, conc, model.MoEBackendTRTLLM, pw),
			mtp("h200_sxm", "fp8", "2026-01-14", "_slurm.sh@bf3456727", dsr1TRTImage2025, 0.75, 128, "", ""))
		// A 2025 script: on 2025-11-02 by the branches of its own --ep_size and attention DP
		// (shape, from the lowest concurrency of each branch up), then with the rows' labels.
		old := func(sku, precision string, mem float64, graphs int, moe string, branches []dsr1Branch) {
			script := "benchmarks/dsr1_" + precision + "_" + sku[:4] + "_trt_slurm.sh" + script2025
			for _, br := range branches {
				r := run(sku, precision, "", "2025-11-02", script, dsr1TRTImage2025, dsr1TRTNM, br.shape, dsr1TRT("2025-11-02", mem, graphs, moe, ep(br.ep)))
				if br.dp { // CUTLASS experts with attention data parallelism
					r.Benchmark.AttentionDP, r.Benchmark.MoEBackend = true, ""
				}
				runs = append(runs, r)
			}
			runs = append(runs, run(sku, precision, "2025-11-03", "2026-01-13", script, dsr1TRTImage2025, dsr1TRTNM, RunShape{}, dsr1TRT("2025-11-03", mem, graphs, moe, labels)))
		}
		old("b200_sxm", "fp4", 0.8, 512, model.MoEBackendTRTLLM, slices.Concat(
			dsr1Branches(8, 1024, 1024, 9, 256), dsr1Branches(8, 1024, 8192, 17, 256), dsr1Branches(8, 8192, 1024, 0, 33),
			dsr1Branches(4, 1024, 1024, 33, 256), dsr1Branches(4, 1024, 8192, 33, 256), dsr1Branches(4, 8192, 1024, 0, 33)))
		old("b200_sxm", "fp8", 0.8, 256, "", slices.Concat(
			dsr1Branches(0, 1024, 1024, 1, 33), dsr1Branches(0, 1024, 8192, 1, 65), dsr1Branches(0, 8192, 1024, 1, 65)))
		old("h200_sxm", "fp8", 0.75, 128, "", slices.Concat(
			dsr1Branches(0, 1024, 1024, 1, 65), dsr1Branches(0, 1024, 8192, 1, 65), dsr1Branches(0, 8192, 1024, 1, 33)))
		// H200 FP8 from 2026-01-22: benchmarks/dsr1_fp8_h200_trt.sh (the slurm script merged
		// into it by b0c4ed21b; read at b30c3398a, server flags unchanged to 626932a11): the
		// 2025 script's CUTLASS, graphs and memory, the config's ep 8 (the row's label), and
		// max_num_tokens at least 8,192 (64af5a771, 2026-01-21 23:05 UTC, for its evals). TP 8
		// only: the config lists no attention-DP shape that day's tp 1 row could be.
		runs = append(runs, run("h200_sxm", "fp8", "2026-01-22", "", "benchmarks/dsr1_fp8_h200_trt.sh@b30c3398a", dsr1TRTImage2025, dsr1TRTNM,
			RunShape{TP: 8}, dsr1TRT("2026-01-27", 0.75, 128, "", floor)))
		// The 2026 scripts, around the MTP configs' days.
		for _, span := range [][2]string{{"2026-01-15", "2026-02-04"}, {"2026-02-07", ""}} {
			// With DP_ATTENTION the script sets MOE_BACKEND CUTLASS (and CUDA graphs to CONC / 4,
			// which every rank's share of CONC fits at attention_dp 4 and more).
			runs = append(runs, run("b200_sxm", "fp4", span[0], span[1], "benchmarks/dsr1_fp4_b200_trt.sh@6eecc0e66", dsr1TRTImage2026,
				dsr1TRTNM+"; piecewise CUDA graphs of mixed steps at 1k/1k TP 8 EP 8", RunShape{},
				dsr1TRT("2026-02-03", 0.8, conc, model.MoEBackendTRTLLM, func(b *Benchmark) {
					floor(b)
					b.CUTLASSWithAttentionDP = true
				})))
			// At 1k/1k from c 64 the script sets batch_wait_timeout_iters 40 and
			// batch_wait_max_tokens_ratio 0.8 (TensorRT-LLM's batch waiting; ignored with the
			// TP 1 rows' attention data parallelism).
			fp8 := func(mem float64, sh RunShape) Run {
				return run("b200_sxm", "fp8", span[0], span[1], "benchmarks/dsr1_fp8_b200_trt.sh@ec7bafaae", dsr1TRTImage2026, fp8NM,
					sh, dsr1TRT("2026-01-29", mem, conc, model.MoEBackendTRTLLM, floor))
			}
			runs = append(runs, fp8(0.8, RunShape{TP: 1}), fp8(0.75, RunShape{TP: 4, ISL: 8192, OSL: 1024}))
			for _, tp := range []int{4, 8} {
				runs = append(runs, batchWaitRuns(fp8(0.8, RunShape{}), 40, 0.8,
					[]RunShape{{TP: tp, ISL: 1024, OSL: 1024, MinConcurrency: 64}},
					[]RunShape{{TP: tp, ISL: 1024, OSL: 1024, MaxConcurrency: 63}, {TP: tp, ISL: 1024, OSL: 8192}})...)
			}
			runs = append(runs, fp8(0.8, RunShape{TP: 8, ISL: 8192, OSL: 1024}))
		}
	}
	return runs
}

// dsr1Branch is one branch of a 2025-11-02 script at a shape: whether it passes --ep_size TP
// and whether it enables attention data parallelism.
type dsr1Branch struct {
	shape  RunShape
	ep, dp bool
}

// dsr1Branches splits the rows of TP size tp (0: any) at isl/osl by concurrency: below ep the
// experts are tensor-parallel, from ep expert-parallel (0: never; 1: always), from dp the
// attention is data-parallel.
func dsr1Branches(tp, isl, osl, ep, dp int) []dsr1Branch {
	at := func(lo, hi int) RunShape {
		return RunShape{TP: tp, ISL: isl, OSL: osl, MinConcurrency: lo, MaxConcurrency: hi}
	}
	var out []dsr1Branch
	if ep != 1 {
		out = append(out, dsr1Branch{shape: at(0, cmp.Or(ep, dp)-1)})
	}
	if ep != 0 {
		out = append(out, dsr1Branch{shape: at(ep, dp-1), ep: true})
	}
	return append(out, dsr1Branch{shape: at(dp, 0), dp: true})
}
