package cli

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/sweep"
)

// setUp is everything a sweep does before its first simulation: read the experiment (a file
// or --set), load the trace, build the worker models, enumerate the search space and check
// the requests.
func setUp(ctx context.Context, text string, sets []string) error {
	f := config.Default()
	if text != "" {
		var err error
		if f, err = config.Parse([]byte(text), "x.yaml"); err != nil {
			return err
		}
	}
	if err := f.Apply(sets); err != nil {
		return err
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		return err
	}
	if _, err := sweep.NewSpace(ctx, f); err != nil {
		return err
	}
	return exp.CheckRequests(f.Workload.SearchRequests, f.Validate.Requests)
}

// Hostile experiments — YAML nested deep (in a file and through --set), numbers at and past
// every bound, long search lists — end in a clear error or a ready sweep, allocating at most
// 512 MB. The slowest case's time is logged (docs/benchmarks.md records it; no wall-clock
// assertion here).
func TestHostileExperimentsStayBounded(t *testing.T) {
	const budget = 512 << 20
	numericKeys := []string{"workload.replay_concurrency", "workload.search_requests", "validate.requests", "gpu_budget",
		"num_gpu_blocks", "context_length", "block_size", "sweep.max_rounds", "sweep.candidates_per_round",
		"sweep.parallel_evals", "agg_max_num_batched_tokens", "agg_max_num_seqs", "replicas", "workload.trace_block_size"}
	numbers := []string{"0", "1", "-1", "7", "4096", "65536", "1048576", "1000000000", "9223372036854775807", "1e308", ".nan", ".inf", "1e-300"}
	var slowest time.Duration
	var slowestCase string
	rapid.Check(t, func(rt *rapid.T) {
		var text string
		var sets []string
		switch rapid.IntRange(0, 3).Draw(rt, "kind") {
		case 0: // nesting, in the file
			depth := rapid.IntRange(1, 100_000).Draw(rt, "depth")
			open := rapid.SampledFrom([]string{"[", "{a: ", "- ", "\n" + strings.Repeat(" ", 1)}).Draw(rt, "open")
			text = "search_space:\n  router_temperature: " + strings.Repeat(open, depth) + "0.5\n"
		case 1: // nesting, through --set
			depth := rapid.IntRange(1, 100_000).Draw(rt, "depth")
			sets = []string{"router_temperature=" + strings.Repeat("[", depth) + "0.5" + strings.Repeat("]", depth)}
		case 2: // large numbers
			for range rapid.IntRange(1, 3).Draw(rt, "keys") {
				sets = append(sets, rapid.SampledFrom(numericKeys).Draw(rt, "key")+"="+rapid.SampledFrom(numbers).Draw(rt, "value"))
			}
			if rapid.Bool().Draw(rt, "copies") {
				sets = append(sets, fmt.Sprintf("workload.trace_path=builtin:toolagent:x%d", rapid.IntRange(1, 10_000).Draw(rt, "n")))
			}
		case 3: // long lists
			n := rapid.IntRange(2, 100_000).Draw(rt, "length")
			key := rapid.SampledFrom([]string{"router_temperature", "prefill_load_scale", "overlap_score_credit"}).Draw(rt, "list")
			vals := make([]string, n)
			for i := range vals {
				vals[i] = fmt.Sprint(float64(i) / float64(n))
			}
			sets = []string{key + "=[" + strings.Join(vals, ", ") + "]"}
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		err := setUp(context.Background(), text, sets)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		desc := fmt.Sprintf("%d bytes of YAML, --set %.80q", len(text), sets)
		if testing.Verbose() {
			rt.Logf("%v %d MB: %s", took, (after.TotalAlloc-before.TotalAlloc)>>20, desc)
		}
		if took > slowest {
			slowest, slowestCase = took, desc
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > budget {
			rt.Fatalf("%s: allocated %d MB, over the 512 MB budget (err %.300v)", desc, alloc>>20, err)
		}
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "panic") || strings.Contains(msg, "got Nan") || strings.Contains(msg, "got Alias") || len(msg) > 2000 {
				rt.Fatalf("%s: unclear error: %.300s", desc, msg)
			}
		}
	})
	t.Logf("slowest case %v: %s", slowest, slowestCase)
}
