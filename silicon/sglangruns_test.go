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
// row a collection copied without its config id is skipped, as is the one of 2025-12-31,
// whose client is not known.
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
		if got := b.scheduler(model.Deployment{}); got.SGLangRecvInterval != c.recv || got.SGLangMaxPrefillTokens != c.chunk {
			t.Errorf("%s c %d: scheduler %+v", c.r.System, c.r.Concurrency, got)
		}
	}
	if run := runOf(row("b200_sxm", 8, 1024, 1024, 8, "")); !strings.Contains(run.Skip, "MTP") {
		t.Errorf("a B200 row without its config id: skip %q, want the MTP reason", run.Skip)
	}
	early := row("b200_sxm", 8, 8192, 1024, 64, "")
	early.Measured = "2025-12-31"
	if run := runOf(early); !strings.Contains(run.Skip, "client is not known") {
		t.Errorf("a B200 row of 2025-12-31: skip %q, want the unknown client's", run.Skip)
	}
}

// The B200 FP8 rows of 2025-11-18 replay that day's 00:00 UTC sweep: dsr1_fp8_b200_docker.sh at
// 0ba7aa3ff (the TP 8 branch's flags of 12ba0ae07) with the 2025 client: no warm-up, 50 ×
// CONC prompts (20 × at 1k/8k) for deepseek-ai/DeepSeek-R1-0528.
func TestDeepSeekSGLangFP8B200Runs2025(t *testing.T) {
	for _, c := range []struct {
		isl, osl, conc, prompts, recv int
	}{
		{1024, 1024, 8, 50, 10},
		{8192, 1024, 16, 50, 30},
		{1024, 8192, 4, 20, 10},
		{1024, 8192, 64, 20, 30},
	} {
		r := Row{Backend: "sglang", Model: "deepseek-ai/DeepSeek-V3", System: "b200_sxm", Precision: "fp8", Measured: "2025-11-18",
			ConfigID: "199", TP: 64, AttentionDP: 1, MoETP: 8, MoEEP: 8, ISL: c.isl, OSL: c.osl, Concurrency: c.conc}
		run := runOf(r)
		b := run.Benchmark
		if run.Skip != "" || !strings.HasSuffix(run.Script, "dsr1_fp8_b200_docker.sh@0ba7aa3ff") || !strings.Contains(run.Image, "v0.5.5") ||
			b.RequestsPerSlot != c.prompts || b.WarmupPerSlot != 0 || b.SGLangRecvInterval != c.recv || b.MaxNumSeqs != 128 ||
			b.MaxNumBatchedTokens != 32768 || b.GPUMemoryUtilization != 0.82 || b.KVCacheDtype != model.KVFP8 || b.PrefixCaching || b.MoEBackend != "" {
			t.Errorf("%d/%d c %d: run %s (skip %q), benchmark %+v", c.isl, c.osl, c.conc, run.Script, run.Skip, b)
		}
		// The label multiplies out the config's tp 8 × ep 8: one TEP worker on 8 GPUs.
		if sim, _, ok := productTEP(r); !ok || sim.TP != 8 || sim.MoETP != 1 || sim.MoEEP != 8 {
			t.Errorf("%d/%d c %d: replayed as %+v", c.isl, c.osl, c.conc, sim)
		}
	}
}

// The SGLang DeepSeek NVFP4 rows replay dsr1_fp4_{b200,b300}.sh: 256 running requests,
// 16,384-token chunks, memory 0.85, FP8 KV cache, a receive interval of 10 below c 16 and 30
// from it, and the flashinfer_trtllm MoE runner, at TP 4 and 8; B300's FP8 rows its FP8
// script's branches.
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
		// B300's v0.5.10.post1 client tokenised with transformers 5 and a Hub id: its prompts
		// reached the server about five times as long, up to the model's context length.
		inflation, modelLen := 0.0, 0
		if c.r.System == "b300_sxm" {
			inflation, modelLen = 35921.0/7140, 163840
		}
		if b.ServerTokensPerClientToken != inflation || b.MaxModelLen != modelLen || b.RequestsPerSlot != 10 || b.WarmupPerSlot != 2 {
			t.Errorf("%s %s: %v server tokens per client token, max model len %d, %d prompts and %d warm-ups per slot",
				c.r.System, c.r.Precision, b.ServerTokensPerClientToken, b.MaxModelLen, b.RequestsPerSlot, b.WarmupPerSlot)
		}
		if run.Skip != "" || !strings.HasSuffix(run.Script, c.script) || b.MoEBackend != c.moe || b.MaxNumSeqs != c.running ||
			b.MaxCUDAGraphCaptureSize != c.running || b.MaxNumBatchedTokens != c.chunk || b.SGLangMaxPrefillTokens != c.chunk ||
			b.SGLangRecvInterval != c.recv || b.GPUMemoryUtilization != c.mem || b.KVCacheDtype != model.KVFP8 || b.PrefixCaching {
			t.Errorf("%s %s %s TP %d c %d: run %s (skip %q), benchmark %+v", c.r.Model, c.r.System, c.r.Precision, c.r.TP, c.r.Concurrency, run.Script, run.Skip, b)
		}
	}
	// 2025-11: the v0.5.3rc1 image's script passed --enable-ep-moe and
	// --enable-flashinfer-trtllm-moe; the rows, labelled with tensor-parallel experts, replay
	// expert-parallel under the flashinfer_trtllm runner with the 2025 client (no warm-up; 10 ×
	// CONC prompts for the V2 checkpoint, 50 × for nvidia/DeepSeek-R1-0528-FP4 on 2025-11-02).
	for _, c := range []struct {
		measured, script    string
		tp, conc, recv, per int
	}{
		{"2025-11-10", "dsr1_fp4_b200_docker.sh@79abd6cb4", 4, 8, 10, 10},
		{"2025-11-10", "dsr1_fp4_b200_docker.sh@79abd6cb4", 8, 32, 30, 10},
		{"2025-11-02", "dsr1_fp4_b200_docker.sh@e06929c70 (nvidia/DeepSeek-R1-0528-FP4)", 8, 64, 30, 50},
	} {
		r := row(r1, "b200_sxm", "fp4", c.measured, c.tp, c.conc)
		r.MoETP, r.MoEEP = c.tp, 1
		run := runOf(r)
		b := run.Benchmark
		if run.Skip != "" || !strings.HasSuffix(run.Script, c.script) || !strings.Contains(run.Image, "v0.5.3rc1") ||
			b.MoEBackend != model.MoERunnerFlashInferTRTLLM || b.ExpertParallel == nil || !*b.ExpertParallel ||
			b.RequestsPerSlot != c.per || b.WarmupPerSlot != 0 || b.SGLangRecvInterval != c.recv || b.MaxNumSeqs != 256 || b.MaxNumBatchedTokens != 16384 {
			t.Errorf("%s TP %d c %d: run %s (skip %q), benchmark %+v", c.measured, c.tp, c.conc, run.Script, run.Skip, b)
		}
		if sim, note, ok := noExpertParallel(r, b); !ok || sim.MoETP != 1 || sim.MoEEP != c.tp || !strings.Contains(note, "--enable-ep-moe") {
			t.Errorf("%s TP %d: replayed as %+v (%q)", c.measured, c.tp, sim, note)
		}
	}
	// A day without a sweep of the 2025 config has no run.
	if _, ok := listedRun(row(r1, "b200_sxm", "fp4", "2025-11-05", 8, 8)); ok {
		t.Error("a B200 NVFP4 row of 2025-11-05 found a run")
	}
}
