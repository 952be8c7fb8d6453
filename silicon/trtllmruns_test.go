package silicon

import (
	"context"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/model"
)

// The TensorRT-LLM DeepSeek rows replay with the InferenceX run their date ran: on B200 the
// TRTLLM-Gen experts (moe_config.backend TRTLLM) for NVFP4 always and for FP8 from the
// 2026-01-29 script, DeepGEMM's default-table rows for FP8 before it, CUTLASS on H200; the
// 2025-11-02 scripts' own --ep_size and attention data parallelism; the copies of the MTP
// configs' days with their -mtp scripts (speculative decoding, 3 drafts).
func TestDeepSeekTRTLLMRunsByDate(t *testing.T) {
	row := func(sku, precision, measured string, tp, moeTP, moeEP, isl, osl, c int) Row {
		return Row{Backend: "trtllm", Model: "deepseek-ai/DeepSeek-R1", System: sku, Precision: precision, Measured: measured,
			TP: tp, AttentionDP: 1, MoETP: moeTP, MoEEP: moeEP, ISL: isl, OSL: osl, Concurrency: c}
	}
	dep := func(r Row) Row { r.AttentionDP = r.MoEEP; return r }
	for _, c := range []struct {
		r              Row
		script, moe    string
		mem            float64
		graphs, tokens int
		moeTP, moeEP   int
	}{
		{row("b200_sxm", "fp4", "2026-02-03", 8, 8, 1, 1024, 1024, 4), "dsr1_fp4_b200_trt.sh@6eecc0e66", model.MoEBackendTRTLLM, 0.8, 2048, 8192, 8, 1},
		{row("b200_sxm", "fp4", "2025-12-15", 4, 4, 1, 1024, 1024, 32), "dsr1_fp4_b200_trt_slurm.sh", model.MoEBackendTRTLLM, 0.8, 512, 1024 + 32 + 64, 4, 1},
		// 2025-11-02: the script spreads the experts above c 8 at TP 8 1k/1k, not below.
		{row("b200_sxm", "fp4", "2025-11-02", 8, 8, 1, 1024, 1024, 32), "dsr1_fp4_b200_trt_slurm.sh", model.MoEBackendTRTLLM, 0.8, 512, 1024 + 32 + 64, 1, 8},
		{row("b200_sxm", "fp4", "2025-11-02", 8, 8, 1, 1024, 1024, 8), "dsr1_fp4_b200_trt_slurm.sh", model.MoEBackendTRTLLM, 0.8, 512, 1024 + 8 + 64, 8, 1},
		// 2026 NVFP4 with attention DP (the TP 1 rows): the script's CUTLASS experts.
		{dep(row("b200_sxm", "fp4", "2026-02-03", 1, 1, 8, 1024, 1024, 256)), "dsr1_fp4_b200_trt.sh@6eecc0e66", "", 0.8, 2048, 8192, 1, 8},
		{dep(row("b200_sxm", "fp4", "2026-02-03", 1, 1, 4, 8192, 1024, 256)), "dsr1_fp4_b200_trt.sh@6eecc0e66", "", 0.8, 2048, 8192 + 256 + 64, 1, 4},
		{row("b200_sxm", "fp8", "2026-01-29", 8, 8, 1, 8192, 1024, 64), "dsr1_fp8_b200_trt.sh@ec7bafaae", model.MoEBackendTRTLLM, 0.8, 2048, 8192 + 64 + 64, 8, 1},
		{row("b200_sxm", "fp8", "2026-01-29", 4, 4, 1, 8192, 1024, 8), "dsr1_fp8_b200_trt.sh@ec7bafaae", model.MoEBackendTRTLLM, 0.75, 2048, 8192 + 8 + 64, 4, 1},
		{row("b200_sxm", "fp8", "2025-12-15", 8, 1, 8, 1024, 1024, 4), "dsr1_fp8_b200_trt_slurm.sh", "", 0.8, 256, 1024 + 4 + 64, 1, 8},
		{row("b200_sxm", "fp8", "2025-11-02", 8, 8, 1, 1024, 1024, 4), "dsr1_fp8_b200_trt_slurm.sh", "", 0.8, 256, 1024 + 4 + 64, 1, 8},
		{row("h200_sxm", "fp8", "2025-11-02", 8, 8, 1, 1024, 1024, 4), "dsr1_fp8_h200_trt_slurm.sh", "", 0.75, 128, 1024 + 4 + 64, 1, 8},
		// From 2026-01-22 (64af5a771): the same flags with max_num_tokens at least 8,192.
		{row("h200_sxm", "fp8", "2026-01-28", 8, 1, 8, 1024, 8192, 64), "dsr1_fp8_h200_trt.sh@b30c3398a", "", 0.75, 128, 8192, 1, 8},
	} {
		run, b := runOf(c.r), runOf(c.r).Benchmark
		sim := c.r
		if s, _, ok := noExpertParallel(c.r, b); ok {
			sim = s
		}
		d := b.deployment(sim)
		if run.Skip != "" || !strings.Contains(run.Script, c.script) || d.MoEBackend != c.moe || d.GPUMemoryUtilization != c.mem ||
			d.MaxCUDAGraphCaptureSize != c.graphs || d.MaxNumBatchedTokens != c.tokens || d.KVCacheDtype != model.KVFP8 || !d.NoPrefixCaching ||
			d.BlockSize != 32 || d.Budget() != model.MemoryBudgetTRTLLM || b.RangeRatio != InferenceXRangeRatio || d.MoETP != c.moeTP || d.MoEEP != c.moeEP {
			t.Errorf("%s %s %s TP %d c %d: run %s (skip %q): moe backend %q, memory %g, graphs %d, tokens %d, KV %s, moe_tp %d moe_ep %d",
				c.r.System, c.r.Precision, c.r.Measured, c.r.TP, c.r.Concurrency, run.Script, run.Skip, d.MoEBackend, d.GPUMemoryUtilization,
				d.MaxCUDAGraphCaptureSize, d.MaxNumBatchedTokens, d.KVCacheDtype, d.MoETP, d.MoEEP)
		}
	}
	// dsr1_fp8_b200_trt.sh's batch waiting (40 iterations, ratio 0.8): at 1k/1k from c 64
	// only, and not under attention data parallelism, which TensorRT-LLM skips it for.
	for _, c := range []struct {
		r     Row
		iters int
	}{
		{row("b200_sxm", "fp8", "2026-01-29", 8, 8, 1, 1024, 1024, 64), 40}, {row("b200_sxm", "fp8", "2026-01-29", 4, 4, 1, 1024, 1024, 128), 40},
		{row("b200_sxm", "fp8", "2026-01-29", 8, 8, 1, 1024, 1024, 32), 0}, {row("b200_sxm", "fp8", "2026-01-29", 8, 8, 1, 1024, 8192, 128), 0},
		{row("b200_sxm", "fp4", "2026-02-03", 8, 8, 1, 1024, 1024, 64), 0},
	} {
		b := runOf(c.r).Benchmark
		sc := b.scheduler(b.deployment(c.r))
		if sc.TRTLLMBatchWaitTimeoutIters != c.iters || c.iters > 0 && sc.TRTLLMBatchWaitMaxTokensRatio != 0.8 {
			t.Errorf("%s %s %d/%d TP %d c %d: batch wait %d iterations, ratio %v; want %d", c.r.System, c.r.Precision, c.r.ISL, c.r.OSL, c.r.TP, c.r.Concurrency,
				sc.TRTLLMBatchWaitTimeoutIters, sc.TRTLLMBatchWaitMaxTokensRatio, c.iters)
		}
	}
	dp := runOf(row("b200_sxm", "fp8", "2026-01-29", 8, 8, 1, 1024, 1024, 64)).Benchmark
	// Under attention DP the scripts' attention_dp_config balances the ranks' contexts instead.
	if sc := dp.scheduler(model.Deployment{AttentionDP: 8}); sc.TRTLLMBatchWaitTimeoutIters != 0 || sc.TRTLLMBatchWaitMaxTokensRatio != 0 ||
		!sc.TRTLLMADPBalance || sc.TRTLLMADPTimeoutIters != 60 || sc.TRTLLMADPBatchingWaitIters != 0 {
		t.Errorf("attention DP: %+v; want batch waiting off, balance on with timeout_iters 60 and batching_wait_iters 0", sc)
	}
	if sc := dp.scheduler(model.Deployment{AttentionDP: 1}); sc.TRTLLMADPBalance {
		t.Errorf("without attention DP: %+v; want no balancing", sc)
	}
	// The MTP configs' days: the -mtp scripts of their day, 3 drafts, max_batch_size CONC and
	// max_num_tokens (3 + 1) × CONC + ISL + 64 (bf3456727, 5d517074c, 0aae52d4c).
	for _, c := range []struct {
		r           Row
		script, moe string
		mem         float64
		graphs      int
	}{
		{row("b200_sxm", "fp4", "2026-01-14", 8, 8, 1, 1024, 1024, 16), "dsr1_fp4_b200_trt_mtp_slurm.sh@bf3456727", model.MoEBackendTRTLLM, 0.8, 512},
		{row("b200_sxm", "fp4", "2026-02-06", 8, 8, 1, 1024, 1024, 16), "dsr1_fp4_b200_trt_mtp.sh@0aae52d4c", model.MoEBackendTRTLLM, 0.8, 2048},
		{row("b200_sxm", "fp8", "2026-01-14", 8, 8, 1, 1024, 1024, 16), "dsr1_fp8_b200_trt_mtp_slurm.sh@bf3456727", "", 0.8, 256},
		{row("b200_sxm", "fp8", "2026-02-05", 8, 8, 1, 1024, 1024, 16), "dsr1_fp8_b200_trt_mtp.sh@5d517074c", model.MoEBackendTRTLLM, 0.8, 2048},
		{row("h200_sxm", "fp8", "2026-01-14", 8, 8, 1, 1024, 1024, 16), "dsr1_fp8_h200_trt_mtp_slurm.sh@bf3456727", "", 0.75, 128},
	} {
		run := runOf(c.r)
		d := run.Benchmark.deployment(c.r)
		if run.Skip != "" || !strings.Contains(run.Script, c.script) || d.Speculative.DraftLen != 3 || d.MoEBackend != c.moe || d.GPUMemoryUtilization != c.mem ||
			d.MaxCUDAGraphCaptureSize != c.graphs || d.MaxNumSeqs != 16 || d.MaxNumBatchedTokens != 4*16+1024+64 || d.Validate() != nil {
			t.Errorf("%s %s %s: run %s (skip %q): drafts %d, moe backend %q, memory %g, graphs %d, seqs %d, tokens %d (%v)", c.r.System, c.r.Precision,
				c.r.Measured, run.Script, run.Skip, d.Speculative.DraftLen, d.MoEBackend, d.GPUMemoryUtilization, d.MaxCUDAGraphCaptureSize,
				d.MaxNumSeqs, d.MaxNumBatchedTokens, d.Validate())
		}
	}
	// H200's MTP rows, labelled moe_ep 8 (and tp 64 = 8 × 8), ran the layout of the plain
	// config's moe_ep 1 rows above: the -mtp script passes the config's ep 8 and CUTLASS, the
	// 2025 script --ep_size TP and CUTLASS (bf3456727, 9596d23d7). One worker prices both.
	for _, r := range []Row{row("h200_sxm", "fp8", "2026-01-14", 8, 1, 8, 1024, 1024, 16), row("h200_sxm", "fp8", "2026-01-14", 64, 8, 8, 1024, 1024, 16)} {
		sim, _, _ := productTEP(r)
		run := runOf(r)
		if s, _, ok := noExpertParallel(sim, run.Benchmark); ok {
			sim = s
		}
		if d := run.Benchmark.deployment(sim); run.Skip != "" || d.TP != 8 || d.MoETP != 1 || d.MoEEP != 8 || d.MoEBackend != "" || d.Speculative.DraftLen != 3 {
			t.Errorf("H200 MTP labelled tp %d, moe_tp %d, moe_ep %d: skip %q, replayed as tp %d, moe_tp %d, moe_ep %d, MoE backend %q, drafts %d; want TEP 8, CUTLASS, 3 drafts",
				r.TP, r.MoETP, r.MoEEP, run.Skip, d.TP, d.MoETP, d.MoEEP, d.MoEBackend, d.Speculative.DraftLen)
		}
	}
	// The 2025-11-02 scripts' own attention data parallelism, labelled adp 1: replayed on one-GPU
	// ranks with CUTLASS experts spread over the label's GPUs (scriptAttentionDP).
	for _, r := range []Row{
		row("b200_sxm", "fp4", "2025-11-02", 4, 4, 1, 1024, 8192, 256),
		row("b200_sxm", "fp8", "2025-11-02", 8, 8, 1, 1024, 1024, 64),
		row("h200_sxm", "fp8", "2025-11-02", 8, 8, 1, 8192, 1024, 64),
	} {
		run := runOf(r)
		sim, _, ok := scriptAttentionDP(r, run.Benchmark)
		if d := run.Benchmark.deployment(sim); run.Skip != "" || !ok || d.TP != 1 || d.AttentionDP != r.TP || d.MoEEP != r.TP || d.MoETP != 1 || d.MoEBackend != "" {
			t.Errorf("%s %s %s %d/%d c %d: skip %q, replayed as tp %d, attention_dp %d, moe_tp %d, moe_ep %d, MoE backend %q; want tp 1, attention_dp = moe_ep = %d, CUTLASS",
				r.System, r.Precision, r.Measured, r.ISL, r.OSL, r.Concurrency, run.Skip, d.TP, d.AttentionDP, d.MoETP, d.MoEEP, d.MoEBackend, r.TP)
		}
	}
}

// An MTP run's rows with attention data parallelism (1 draft, on attention ranks) are skipped
// with their reason, not replayed as a plain run.
func TestMTPAttentionDPSkipped(t *testing.T) {
	r := Row{Line: 2, Backend: "trtllm", Model: "deepseek-ai/DeepSeek-R1", System: "b200_sxm", Precision: "fp8", Measured: "2026-02-05",
		TP: 1, AttentionDP: 8, MoETP: 1, MoEEP: 8, ISL: 1024, OSL: 1024, Concurrency: 64, TTFTMS: 1, TPOTMS: 1}
	rep, err := Validate(context.Background(), []Row{r}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows[0].Skipped != dsr1TRTMTPDPSkip {
		t.Fatalf("skipped %q, want %q", rep.Rows[0].Skipped, dsr1TRTMTPDPSkip)
	}
}
