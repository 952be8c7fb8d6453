package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/internal/walltime"
	"github.com/routerlab/routerlab/router"
)

// The sweep's part of the simulator digest (config.SimulatorDigest): what a sweep decides
// beyond each replay — the candidates the search proposes and the best it picks, the
// saturation table, the validation's runs and bootstrap intervals, a load curve's Pareto
// front — from small sweeps of every algorithm and goal. config cannot import this package,
// so the digest of every binary that links it covers it.
func init() { config.AddSimulatorPart("sweep", canonicalSweeps) }

// canonicalSweepBase applies to every canonical sweep: two workers on the conversation
// trace (canonicalTrace, unless the sweep names another) with a small KV cache, few
// requests, two evaluations at once.
var canonicalSweepBase = []string{"replicas=2", "num_gpu_blocks=3000",
	"workload.replay_concurrency=12", "workload.search_requests=80", "validate.requests=120", "sweep.parallel_evals=2"}

// canonicalSweepSets are the sweeps, as --set assignments after canonicalSweepBase.
var canonicalSweepSets = [][]string{
	{"router_mode=[kv_router, round_robin]", "overlap_score_credit=[0, 1]", "prefill_load_scale=[0.5, 1, 4]",
		"router_temperature=[0, 0.5]", "sweep.max_rounds=3", "sweep.candidates_per_round=3"},
	{"sweep.algorithm=random", "goal.target=throughput", "goal.max_ttft_ms=5000", "goal.sla.ttft_ms=1500",
		"batched_tokens=[2048, 8192]", "prefill_load_scale=[0.25, 2]", "sweep.max_rounds=2", "sweep.candidates_per_round=2", "sweep.seed=5"},
	{"sweep.algorithm=grid", "goal.target=ttft", "kv_cache_dtype=[fp8, bf16]", "router_mode=[kv_router, least_loaded]",
		"goal.max_tpot_ms=200", "goal.max_e2e_latency_ms=60000", "validate.enabled=false",
		"workload.trace_path=builtin:conversation:x2"}, // a built-in trace's copies (trace.Repeat)
}

// canonicalSweeps writes each canonical sweep's search and validation, then a load curve,
// without wall times; a sweep that fails writes its error and the next one runs.
func canonicalSweeps(w io.Writer) error {
	ctx := context.Background()
	for i, sets := range canonicalSweepSets {
		fmt.Fprintln(w, "sweep", i)
		out, err := canonicalSweep(ctx, append(canonicalSweepBase[:len(canonicalSweepBase):len(canonicalSweepBase)], sets...))
		if err != nil {
			fmt.Fprintln(w, "error:", err)
			continue
		}
		w.Write(out)
	}
	fmt.Fprintln(w, "curve")
	out, err := canonicalCurve(ctx)
	if err != nil {
		fmt.Fprintln(w, "error:", err)
		return nil
	}
	_, err = w.Write(out)
	return err
}

// canonicalSweep runs one sweep in memory and returns its results as JSON lines.
func canonicalSweep(ctx context.Context, sets []string) ([]byte, error) {
	f, exp, err := canonicalExperiment(sets)
	if err != nil {
		return nil, err
	}
	// The trace as a user names it (built-in, copies): its name and digest go into reports,
	// its copies' timestamps and ids into no sweep of a few requests.
	last := exp.Trace.Requests[len(exp.Trace.Requests)-1]
	head := fmt.Sprintln(exp.Trace.Name, exp.Trace.Digest, len(exp.Trace.Requests), last.TimestampMS, last.IDOffset, last.InputLength)
	// A fingerprint of its own: the file's would ask for the digest being computed.
	opt := Options{Experiment: config.Fingerprint{{Key: "canonical sweep"}}}
	s, err := RunSearch(ctx, f, exp, opt)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(struct {
		Evaluations  []Evaluation
		Best         int
		Stop, Reason string
	}{s.Evaluations, s.Best, s.Stop, s.Reason}); err != nil {
		return nil, err
	}
	if f.Validate.Enabled {
		v, err := Validate(ctx, s, exp, opt)
		if err != nil {
			return nil, err
		}
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
	}
	out, err := walltime.Strip(b.Bytes())
	return append([]byte(head), out...), err
}

// canonicalCurve is a load curve of two routers over three concurrencies on the seed
// deployment, as JSON lines.
func canonicalCurve(ctx context.Context) ([]byte, error) {
	_, exp, err := canonicalExperiment(canonicalSweepBase)
	if err != nil {
		return nil, err
	}
	base, err := exp.EngineConfig(nil)
	if err != nil {
		return nil, err
	}
	rr := router.DefaultConfig()
	rr.Mode = router.ModeRoundRobin
	points, err := Curve(ctx, exp, base, []CurveRouter{{"kv", router.DefaultConfig()}, {"rr", rr}}, []int{2, 8, 24}, 90, nil)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(points)
	if err != nil {
		return nil, err
	}
	return walltime.Strip(b)
}

// canonicalTrace is the canonical sweeps' trace when a sweep names none.
const canonicalTrace = "workload.trace_path=builtin:conversation"

// canonicalExperiment is the seed experiment with sets applied, its trace loaded.
func canonicalExperiment(sets []string) (*config.File, *config.Experiment, error) {
	if !slices.ContainsFunc(sets, func(s string) bool { return strings.HasPrefix(s, "workload.trace_path=") }) {
		sets = append(sets[:len(sets):len(sets)], canonicalTrace)
	}
	f := config.Default()
	if err := f.Apply(sets); err != nil {
		return nil, nil, err
	}
	exp, err := config.NewExperiment(f)
	return f, exp, err
}
