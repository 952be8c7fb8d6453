package silicon

import (
	"context"
	"os"
	"slices"
	"testing"
)

// AIConfigurator's whole vLLM aggregated sample: the counts and per-group accuracy docs/validation.md
// reports, held as regression bounds (nothing is fitted to these rows).
func TestValidateAIConfiguratorVLLMSample(t *testing.T) {
	rows := sampleRows(t, "replays ~1,000 closed-loop benchmarks; skipped in -short", func(r Row) bool { return r.Backend == "vllm" })
	rep, err := Validate(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 1,270 with attention data parallelism (model/attentiondp.go): the 19 Qwen3-235B H200
	// rows whose labels read as vLLM's --data-parallel-size (impliedDP), 1,251 before.
	if len(rows) != 1345 || rep.Validated < 1270 {
		t.Fatalf("%d vLLM rows, %d validated; want 1,345 and at least 1,270", len(rows), rep.Validated)
	}
	groups, ttftMedian, tpotMedian := groupMedians(rep, 10)
	// Every row replayed with its own run's settings (InferenceXRuns), on the nearest embedded
	// vLLM version, H200 attention from physical rows, Kimi-K2.5's four groups (MLA) among
	// them, their shared experts overlapping the routed experts in steps of up to 256 tokens,
	// FlashInfer's fused all-reduce + RMSNorm where the run's script enables it (Kimi-K2.5,
	// gpt-oss and Llama 3.3 70B on B200) or its vLLM release's default does (0.18 and later at
	// TP > 1: the MiniMax-M2.5 groups, gpt-oss on Hopper), and every InferenceX run's text
	// prompts tokenised as its vLLM release did and its client's request path as measured
	// (silicon/requestpath), MiniMax's per-layer QK-norm priced as the three kernels vLLM runs,
	// B200's MLA modules from AIConfigurator's fused-norm collection and the Kimi-K2.5 runs'
	// experts sharded over the TP group as their scripts left them, MiniMax-M2.5 NVFP4
	// B200's nightly rows with their branch script's flags (vLLM's default capture size, 512),
	// and each row's KV cache sized as its vLLM's profiler sized it (memory_budget vllm):
	// median TTFT 19.1 %, TPOT 8.9 % over 20 groups (24.8 / 9.1 % under AIConfigurator's budget,
	// which also takes NCCL and 3.5 GiB of runtime off; 26.5 / 9.1 % without the request path
	// as well, 26.0 / 9.1 % with those rows under the merged script's flags too, 26.0 / 11.5 %
	// with the MLA module rows of the 0.19.0 collection as well, 25.3 / 12.3 % with
	// AIConfigurator's QK-norm op list as well, 24.4 / 12.9 % without the release default
	// either; README, "AIConfigurator's whole vLLM sample").
	if groups < 20 || ttftMedian > 19.3 || tpotMedian > 9.1 {
		t.Fatalf("%d groups with >= 10 validated rows, median TTFT MAPE %.1f %%, TPOT MAPE %.1f %%; want >= 20, <= 19.3 %%, <= 9.1 %%",
			groups, ttftMedian, tpotMedian)
	}
	t.Logf("%d of %d vLLM rows validated; %d groups; median TTFT MAPE %.1f %%, TPOT MAPE %.1f %%", rep.Validated, len(rows), groups, ttftMedian, tpotMedian)
}

// groupMedians is how many groups hold at least minRows validated rows, and the medians of
// their TTFT and TPOT MAPEs.
func groupMedians(rep *Report, minRows int) (groups int, ttft, tpot float64) {
	var ts, ps []float64
	for _, g := range rep.Groups {
		if g.Validated >= minRows {
			ts, ps = append(ts, g.TTFTMAPE), append(ps, g.TPOTMAPE)
		}
	}
	median := func(v []float64) float64 {
		if len(v) == 0 {
			return 0
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return len(ts), median(ts), median(ps)
}

// sampleRows is the rows of AIConfigurator's silicon sample that keep takes; the test skips
// without ../shared or, giving why, in -short.
func sampleRows(t *testing.T, why string, keep func(Row) bool) []Row {
	t.Helper()
	const path = "../../shared/aic/silicon_sample.csv"
	f, err := os.Open(path)
	if err != nil {
		t.Skip("../shared/aic/silicon_sample.csv not present: ", err)
	}
	defer f.Close()
	if testing.Short() {
		t.Skip(why)
	}
	all, err := Parse(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	for _, r := range all {
		if keep(r) {
			rows = append(rows, r)
		}
	}
	return rows
}
