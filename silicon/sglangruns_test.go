package silicon

import (
	"strings"
	"testing"

	"github.com/routerlab/routerlab/model"
)

// The SGLang DeepSeek rows replay with the branch of InferenceX's script they ran: on H200
// 512 running requests at 1k/1k and 256 otherwise; on B200 at TP 8 a receive interval of
// 10 below c 16 and 30 from it, at TP 4 8,192-token chunks and memory 0.95; always without
// the radix cache, 32,768 (TP 4: 8,192) prefill tokens and SGLang's memory budget. A B200
// row a collection copied without its config id is skipped, as is one measured before the
// v0.5.9 image.
func TestDeepSeekSGLangRunsByBranch(t *testing.T) {
	row := func(sku string, tp, isl, osl, c int, id string) Row {
		return Row{Backend: "sglang", Model: "deepseek-ai/DeepSeek-R1", System: sku, Precision: "fp8", Measured: "2026-03-25",
			ConfigID: id, TP: tp, AttentionDP: 1, MoETP: tp, MoEEP: 1, ISL: isl, OSL: osl, Concurrency: c}
	}
	for _, c := range []struct {
		r                    Row
		running, chunk, recv int
		mem                  float64
		kv                   string
	}{
		{row("h200_sxm", 8, 1024, 1024, 64, "81"), 512, 32768, 0, 0.82, model.KVBF16},
		{row("h200_sxm", 8, 8192, 1024, 64, "81"), 256, 32768, 0, 0.82, model.KVBF16},
		{row("h200_sxm", 8, 8192, 1024, 64, ""), 256, 32768, 0, 0.82, model.KVBF16},
		{row("b200_sxm", 8, 1024, 1024, 8, "87"), 128, 32768, 10, 0.82, model.KVFP8},
		{row("b200_sxm", 8, 1024, 1024, 16, "87"), 128, 32768, 30, 0.82, model.KVFP8},
		{row("b200_sxm", 4, 8192, 1024, 16, "271"), 32, 8192, 10, 0.95, model.KVFP8},
	} {
		run := runOf(c.r)
		b := run.Benchmark
		if run.Skip != "" || !strings.Contains(run.Script, "dsr1_fp8_") || b.MaxNumSeqs != c.running || b.MaxCUDAGraphCaptureSize != c.running ||
			b.MaxNumBatchedTokens != c.chunk || b.SGLangMaxPrefillTokens != c.chunk || b.SGLangRecvInterval != c.recv ||
			b.GPUMemoryUtilization != c.mem || b.KVCacheDtype != c.kv || b.PrefixCaching || !b.AsyncScheduling ||
			b.MemoryBudget != model.MemoryBudgetSGLang || b.RangeRatio != InferenceXRangeRatio || b.WarmupPerSlot != 2 {
			t.Errorf("%s TP %d %d/%d c %d: run %s (skip %q), benchmark %+v", c.r.System, c.r.TP, c.r.ISL, c.r.OSL, c.r.Concurrency, run.Script, run.Skip, b)
		}
		if got := b.scheduler(); got.SGLangRecvInterval != c.recv || got.SGLangMaxPrefillTokens != c.chunk {
			t.Errorf("%s c %d: scheduler %+v", c.r.System, c.r.Concurrency, got)
		}
	}
	if run := runOf(row("b200_sxm", 8, 1024, 1024, 8, "")); !strings.Contains(run.Skip, "MTP") {
		t.Errorf("a B200 row without its config id: skip %q, want the MTP reason", run.Skip)
	}
	early := row("b200_sxm", 8, 8192, 1024, 64, "")
	early.Measured = "2025-12-31"
	if run := runOf(early); !strings.Contains(run.Skip, "v0.5.6") {
		t.Errorf("a B200 row of 2025-12-31: skip %q, want the earlier image's", run.Skip)
	}
}

// The SGLang DeepSeek NVFP4 rows replay dsr1_fp4_{b200,b300}.sh: 256 running requests,
// 16,384-token chunks, memory 0.85, FP8 KV cache, a receive interval of 10 below c 16 and 30
// from it, and the flashinfer_trtllm MoE runner, at TP 4 and 8; B300's FP8 rows its FP8
// script's branches. The B200 NVFP4 rows of 2025-11 are skipped (the v0.5.5 image).
func TestDeepSeekSGLangNVFP4Runs(t *testing.T) {
	row := func(m, sku, precision, measured string, tp, c int) Row {
		return Row{Backend: "sglang", Model: m, System: sku, Precision: precision, Measured: measured,
			TP: tp, AttentionDP: 1, MoETP: 1, MoEEP: tp, ISL: 8192, OSL: 1024, Concurrency: c}
	}
	const v3, r1 = "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1"
	for _, c := range []struct {
		r                    Row
		script, moe          string
		running, chunk, recv int
		mem                  float64
	}{
		{row(r1, "b200_sxm", "fp4", "2026-03-25", 4, 8), "dsr1_fp4_b200.sh@12ba0ae07", model.MoERunnerFlashInferTRTLLM, 256, 16384, 10, 0.85},
		{row(v3, "b200_sxm", "fp4", "2026-03-25", 8, 16), "dsr1_fp4_b200.sh@12ba0ae07", model.MoERunnerFlashInferTRTLLM, 256, 16384, 30, 0.85},
		{row(v3, "b300_sxm", "fp4", "2026-04-17", 4, 128), "dsr1_fp4_b300.sh@9ebeafb4e", model.MoERunnerFlashInferTRTLLM, 256, 16384, 30, 0.85},
		{row(v3, "b300_sxm", "fp8", "2026-04-17", 8, 4), "dsr1_fp8_b300.sh@5b302f147", "", 128, 32768, 10, 0.82},
		{row(v3, "b300_sxm", "fp8", "2026-04-17", 4, 32), "dsr1_fp8_b300.sh@5b302f147", "", 32, 8192, 10, 0.95},
	} {
		run := runOf(c.r)
		b := run.Benchmark
		if run.Skip != "" || !strings.HasSuffix(run.Script, c.script) || b.MoEBackend != c.moe || b.MaxNumSeqs != c.running ||
			b.MaxCUDAGraphCaptureSize != c.running || b.MaxNumBatchedTokens != c.chunk || b.SGLangMaxPrefillTokens != c.chunk ||
			b.SGLangRecvInterval != c.recv || b.GPUMemoryUtilization != c.mem || b.KVCacheDtype != model.KVFP8 || b.PrefixCaching {
			t.Errorf("%s %s %s TP %d c %d: run %s (skip %q), benchmark %+v", c.r.Model, c.r.System, c.r.Precision, c.r.TP, c.r.Concurrency, run.Script, run.Skip, b)
		}
	}
	if run := runOf(row(r1, "b200_sxm", "fp4", "2025-11-10", 8, 8)); !strings.Contains(run.Skip, "v0.5.5") {
		t.Errorf("a B200 NVFP4 row of 2025-11-10: skip %q, want the v0.5.5 image's", run.Skip)
	}
}
