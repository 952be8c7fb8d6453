package silicon

import (
	"strings"
	"testing"

	"github.com/routerlab/routerlab/model"
)

// Each Qwen3.5 row finds its run: the dated ones InferenceX's script branch (the receive
// interval by concurrency on B200, no expert parallelism on H200), the undated copies the
// run of the dated row they copy.
func TestQwen35Runs(t *testing.T) {
	row := func(sku, precision, measured string, c int) Row {
		return Row{Backend: "sglang", Model: qwen35, System: sku, Precision: precision, Measured: measured, Concurrency: c}
	}
	layout := func(r Row, tp, ep int) Row {
		r.TP, r.MoEEP = tp, ep
		return r
	}
	for _, c := range []struct {
		r                Row
		script           string
		recv, running    int
		kv               string
		prefix, conc     bool
		requestsPerSlot  int
		expertParallelOn bool
	}{
		{row("b200_sxm", "fp8", "2026-03-03", 8), "qwen3.5_fp8_b200.sh", 10, 128, model.KVFP8, false, false, 10, true},
		{row("b200_sxm", "fp8", "2026-03-24", 8), "qwen3.5_fp8_b200.sh", 10, 128, model.KVFP8, false, false, 10, true},
		{row("b200_sxm", "fp8", "2026-03-24", 16), "qwen3.5_fp8_b200.sh", 30, 128, model.KVFP8, false, false, 10, true},
		{row("b200_sxm", "bf16", "2026-02-20", 64), "qwen3.5_bf16_b200.sh", 30, 128, model.KVBF16, false, false, 10, true},
		{row("h200_sxm", "fp8", "2026-03-04", 4), "qwen3.5_fp8_h200.sh", 0, 128, model.KVFP8, false, false, 10, false},
		// B300: the scripts at the commits whose workflows measured the rows send 10 × CONC
		// prompts; the rows of 2026-04-03, older than any B300 script, keep the 8k256
		// branch's CONC.
		{row("b300_sxm", "fp8", "2026-04-17", 32), "qwen3.5_fp8_b300.sh@c0f62a2ef", 10, 0, model.KVFP8, false, true, 10, true},
		{row("b300_sxm", "fp8", "2026-04-03", 32), "qwen3.5_fp8_b300.sh@56324839", 10, 0, model.KVFP8, false, true, 1, true},
		{row("b300_sxm", "bf16", "2026-04-18", 4), "qwen3.5_bf16_b300.sh@32274d6c1", 10, 128, model.KVBF16, false, false, 10, true},
		{row("b300_sxm", "bf16", "2026-04-18", 16), "qwen3.5_bf16_b300.sh@32274d6c1", 30, 128, model.KVBF16, false, false, 10, true},
		// The undated copies take their dated rows' runs.
		{layout(row("b200_sxm", "fp8", "", 8), 8, 1), "qwen3.5_fp8_b200.sh@01fa35cf", 10, 128, model.KVFP8, false, false, 10, true},
		{layout(row("b200_sxm", "fp8", "", 32), 4, 4), "qwen3.5_fp8_b200.sh@01fa35cf", 30, 128, model.KVFP8, false, false, 10, true},
		{layout(row("b200_sxm", "bf16", "", 8), 8, 1), "qwen3.5_bf16_b200.sh", 10, 128, model.KVBF16, false, false, 10, true},
		{layout(row("h200_sxm", "fp8", "", 8), 8, 8), "qwen3.5_fp8_h200.sh", 0, 128, model.KVFP8, false, false, 10, false},
	} {
		run, listed := listedRun(c.r)
		b := run.Benchmark
		switch {
		case run.Skip != "":
			t.Errorf("%+v: skipped (%s)", c.r, run.Skip)
		case !listed || !strings.Contains(run.Script, c.script):
			t.Errorf("%+v: run %q, want %s", c.r, run.Script, c.script)
		case b.SGLangRecvInterval != c.recv || b.KVCacheDtype != c.kv || b.PrefixCaching != c.prefix || b.MaxNumSeqsIsConcurrency != c.conc ||
			(!c.conc && b.MaxNumSeqs != c.running) || b.RequestsPerSlot != c.requestsPerSlot:
			t.Errorf("%s at c %d: recv %d, kv %s, prefix caching %v, running %d (= concurrency %v), %d requests per slot",
				run.Script, c.r.Concurrency, b.SGLangRecvInterval, b.KVCacheDtype, b.PrefixCaching, b.MaxNumSeqs, b.MaxNumSeqsIsConcurrency, b.RequestsPerSlot)
		case (b.ExpertParallel == nil || *b.ExpertParallel) != c.expertParallelOn:
			t.Errorf("%s: expert parallelism %v", run.Script, b.ExpertParallel)
		case b.ServerTokensPerClientToken != 0 || b.WarmupPerSlot != 2:
			// Qwen3.5's tokenizer is not the class transformers 5 rebuilds, and every run is
			// after the client's warm-up.
			t.Errorf("%s: %v server tokens per client token, %d warm-ups per slot", run.Script, b.ServerTokensPerClientToken, b.WarmupPerSlot)
		}
	}
}

// The B200 FP8 rows of 2026-03-20 are the MTP config's (EAGLE speculative decoding under
// SGLang, not modelled): skipped with that reason, at every concurrency the config swept, and
// the plain script's rows either side of that day replay.
func TestQwen35B200MTPRowsSkipped(t *testing.T) {
	for _, c := range []int{4, 16, 128, 256} {
		r := Row{Backend: "sglang", Model: qwen35, System: "b200_sxm", Precision: "fp8", Measured: "2026-03-20", Concurrency: c, TP: 4, MoETP: 4, MoEEP: 1}
		run, listed := listedRun(r)
		if !listed || !strings.Contains(run.Script, "qwen3.5_fp8_b200_mtp.sh@35d4bb367") || !strings.Contains(run.Skip, "speculative decoding is not modelled") {
			t.Errorf("c %d: run %q, skip %q; want the MTP script's, skipped", c, run.Script, run.Skip)
		}
	}
	// Their undated copies too (the gap-analysis file's rounded copies).
	undated := Row{Backend: "sglang", Model: qwen35, System: "b200_sxm", Precision: "fp8", Concurrency: 64, TP: 4, MoETP: 4, MoEEP: 1}
	if run, _ := listedRun(undated); !strings.Contains(run.Skip, "speculative decoding is not modelled") {
		t.Errorf("undated TP 4 EP 1 copy: run %q, skip %q; want skipped as the MTP config's", run.Script, run.Skip)
	}
	for _, day := range []string{"2026-03-19", "2026-03-21"} {
		run, _ := listedRun(Row{Backend: "sglang", Model: qwen35, System: "b200_sxm", Precision: "fp8", Measured: day, Concurrency: 8})
		if run.Skip != "" || !strings.Contains(run.Script, "qwen3.5_fp8_b200.sh@01fa35cf") {
			t.Errorf("%s: run %q, skip %q; want the plain script's", day, run.Script, run.Skip)
		}
	}
}
