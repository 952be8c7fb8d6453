package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/internal/walltime"
	"github.com/routerlab/routerlab/router"
)

func seedFile(t testing.TB, sets ...string) *config.File {
	t.Helper()
	f := config.Default()
	for _, s := range append([]string{"sweep.parallel_evals=3"}, sets...) {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestSeedSpaceHas109CanonicalConfigurations(t *testing.T) {
	s, err := NewSpace(context.Background(), seedFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Candidates) != 109 {
		t.Fatalf("%d candidates, want 109 (kv_router 3×9×4 + round_robin)", len(s.Candidates))
	}
	rr, ok := s.Index("router_mode=round_robin")
	if !ok {
		t.Fatal("no round_robin candidate")
	}
	if v := s.Candidates[rr].Variants; v != 108 {
		t.Errorf("round_robin stands for %d raw points, want 108", v)
	}
	stochastic, variants := 0, 0
	for _, c := range s.Candidates {
		variants += c.Variants
		if c.Stochastic {
			stochastic++
		}
		for _, x := range c.X {
			if x < 0 || x > 1 {
				t.Fatalf("%s: encoding %v leaves [0,1]", c.Key, c.X)
			}
		}
	}
	if variants != 2*3*9*4 {
		t.Errorf("variants sum to %d, want the raw space's 216", variants)
	}
	if stochastic != 3*9*3 {
		t.Errorf("%d stochastic candidates, want the 81 with temperature > 0", stochastic)
	}
	// prefill_load_scale 0, 0.25, …, 32 spans decades: on its log axis (0 one doubling below
	// 0.25) the nine values are evenly spaced.
	k := "router_mode=kv_router overlap_score_credit=0.0 prefill_load_scale=%s router_temperature=0.0"
	var pos []float64
	for _, v := range []string{"0.0", "0.25", "0.5", "1.0", "2.0", "4.0", "8.0", "16.0", "32.0"} {
		i, ok := s.Index(strings.Replace(k, "%s", v, 1))
		if !ok {
			t.Fatalf("missing candidate with prefill_load_scale %s", v)
		}
		pos = append(pos, s.Candidates[i].X[3]) // x: kv one-hot, rr one-hot, credit, scale, T
	}
	for i, p := range pos {
		if math.Abs(p-float64(i)/8) > 1e-12 {
			t.Errorf("prefill_load_scale position %d = %.4f, want %.4f", i, p, float64(i)/8)
		}
	}
}

// Every raw point canonicalises to a candidate that runs the same simulation, and points
// differing only in knobs their mode ignores share one candidate.
func TestCanonicalisationProperty(t *testing.T) {
	f := seedFile(t, "router_mode=[kv_router, round_robin, random, least_loaded]")
	s, err := NewSpace(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if want := 108 + 3; len(s.Candidates) != want {
		t.Fatalf("%d candidates, want %d", len(s.Candidates), want)
	}
	sim := newFakeSim(f)
	rapid.Check(t, func(t *rapid.T) {
		p := make(config.Point, len(s.Dims))
		q := make(config.Point, len(s.Dims))
		for i, d := range s.Dims {
			p[i] = rapid.IntRange(0, len(d.Values)-1).Draw(t, d.Key)
			q[i] = rapid.IntRange(0, len(d.Values)-1).Draw(t, d.Key+"'")
		}
		ci, err := s.Lookup(f, p)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := sim.EngineConfig(p)
		b, _ := sim.EngineConfig(s.Candidates[ci].Point)
		if a.Router.Mode != b.Router.Mode || (a.Router.Mode == router.ModeKV && a.Router != b.Router) {
			t.Fatalf("point %v runs %+v, its candidate %s runs %+v", p, a.Router, s.Candidates[ci].Key, b.Router)
		}
		cq, _ := s.Lookup(f, q)
		c, _ := sim.EngineConfig(q)
		same := a.Router.Mode == c.Router.Mode && (a.Router.Mode != router.ModeKV || a.Router == c.Router)
		if same != (ci == cq) {
			t.Fatalf("points %v and %v: same simulation %v but candidates %d and %d", p, q, same, ci, cq)
		}
	})
}

func TestGridEvaluatesEveryCandidateOnce(t *testing.T) {
	f := seedFile(t, "sweep.algorithm=grid")
	sim := newFakeSim(f)
	res, err := Run(context.Background(), f, sim, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Search
	if len(s.Evaluations) != 109 || s.Stop != "every canonical configuration evaluated" {
		t.Fatalf("%d evaluations, stop %q; want all 109", len(s.Evaluations), s.Stop)
	}
	keys := map[string]bool{}
	for _, e := range s.Evaluations {
		if keys[e.Key] {
			t.Fatalf("%s evaluated twice", e.Key)
		}
		keys[e.Key] = true
	}
	// 28 deterministic candidates once, 81 stochastic ones over 3 seeds, then validation
	// (3 runs; every saturation value was searched).
	if got, want := sim.runCount(), 28+81*StochasticSeeds+3; got != want {
		t.Errorf("%d simulator runs, want %d", got, want)
	}
	b := s.BestEvaluation()
	if b.Key != "router_mode=kv_router overlap_score_credit=1.0 prefill_load_scale=4.0 router_temperature=0.0" {
		t.Errorf("best %s, want the synthetic optimum", b.Key)
	}
	v := res.Validation
	names := []string{v.Runs[0].Name, v.Runs[1].Name, v.Runs[2].Name}
	if !slices.Equal(names, []string{RoundRobin, DefaultKV, Best}) {
		t.Errorf("validation names %v", names)
	}
	rr, def, best := v.Runs[0].Metrics.MeanE2EMS, v.Runs[1].Metrics.MeanE2EMS, v.Runs[2].Metrics.MeanE2EMS
	if !(best < def && def < rr) {
		t.Errorf("validation e2e best %.1f, default_kv %.1f, round_robin %.1f: want increasing", best, def, rr)
	}
	if len(v.Saturation) != 9 {
		t.Fatalf("%d saturation rows, want 9", len(v.Saturation))
	}
	for _, row := range v.Saturation {
		if !row.Searched || row.Runs != 1 {
			t.Errorf("saturation row %+v: want taken from the search, n=1", row)
		}
	}
	// The fake's per-request e2e noise is identical in both runs, so the paired difference
	// is exact.
	d := v.Paired
	if want := best - def; math.Abs(d.MeanMS-want) > 1e-9 || d.LowMS > d.MeanMS || d.HighMS < d.MeanMS {
		t.Errorf("paired difference %+v, want mean %.3f inside its interval", d, want)
	}
}

func TestGPBanditFindsSyntheticOptimumWithinBudget(t *testing.T) {
	f := seedFile(t)
	res, err := RunSearch(context.Background(), f, newFakeSim(f), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Evaluations); n > 48 {
		t.Errorf("%d evaluations, want ≤ 48", n)
	}
	if b := res.BestEvaluation(); b.Key != "router_mode=kv_router overlap_score_credit=1.0 prefill_load_scale=4.0 router_temperature=0.0" {
		t.Errorf("best %s (%.1f ms), want the synthetic optimum", b.Key, b.Value)
	}
}

func readOut(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{LedgerName, "summary.json", "report.md", "evaluations.csv", "report.html"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "json") || strings.HasSuffix(name, "jsonl") {
			b, err := walltime.Strip(data)
			if err != nil {
				t.Fatal(err)
			}
			out[name] = string(b)
		} else {
			out[name] = string(data)
		}
	}
	return out
}

func TestSameSeedSameLedgerAndReport(t *testing.T) {
	var outs []map[string]string
	for _, parallel := range []string{"1", "4"} {
		f := seedFile(t, "sweep.parallel_evals="+parallel, "sweep.seed=5")
		dir := t.TempDir()
		if _, err := Run(context.Background(), f, newFakeSim(f), Options{Out: dir}); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, readOut(t, dir))
	}
	for name, a := range outs[0] {
		if b := outs[1][name]; a != b {
			t.Errorf("%s differs between identical sweeps (parallel 1 vs 4):\n%s\n---\n%s", name, a, b)
		}
	}
	f := seedFile(t, "sweep.seed=6")
	dir := t.TempDir()
	if _, err := Run(context.Background(), f, newFakeSim(f), Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	if readOut(t, dir)[LedgerName] == outs[0][LedgerName] {
		t.Error("another sweep seed gave the same ledger: the seed is not used")
	}
}

func TestResumeAfterInterruption(t *testing.T) {
	f := seedFile(t)
	ref := t.TempDir()
	if _, err := Run(context.Background(), f, newFakeSim(f), Options{Out: ref}); err != nil {
		t.Fatal(err)
	}
	want := readOut(t, ref)

	dir := t.TempDir()
	broken := newFakeSim(f)
	broken.failAfter = 25
	if _, err := Run(context.Background(), f, broken, Options{Out: dir}); !errors.Is(err, errInterrupted) {
		t.Fatalf("interrupted sweep: error %v", err)
	}
	// Tear the last line as a kill -9 in the middle of a write would.
	path := filepath.Join(dir, LedgerName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("interrupted ledger has %d lines, want a few evaluations", len(lines))
	}
	last := lines[len(lines)-1]
	torn := strings.Join(lines[:len(lines)-1], "") + last[:len(last)/2]
	if err := os.WriteFile(path, []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	finished := map[string]bool{}
	for _, l := range lines[1 : len(lines)-1] {
		var e Evaluation
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		finished[e.Key] = true
	}

	if _, err := Run(context.Background(), f, newFakeSim(f), Options{Out: dir}); err == nil {
		t.Error("a second sweep into the same directory without --resume: want an error")
	}
	resumed := newFakeSim(f)
	res, err := Run(context.Background(), f, resumed, Options{Out: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Search.Resumed != len(finished) {
		t.Errorf("resumed %d evaluations, want the %d complete ledger lines", res.Search.Resumed, len(finished))
	}
	sp := res.Search.Space
	for _, r := range resumed.runs {
		if r.requests == f.Validate.Requests {
			continue // a validation run: they replay the whole trace
		}
		for _, c := range sp.Candidates {
			cfg, _ := resumed.EngineConfig(c.Point)
			if cfg.Router == r.rc && finished[c.Key] {
				t.Errorf("%s was simulated again after resume", c.Key)
			}
		}
	}
	got := readOut(t, dir)
	for name := range want {
		if got[name] != want[name] {
			t.Errorf("%s after interruption and resume differs from an uninterrupted sweep", name)
		}
	}

	other := seedFile(t, "sweep.seed=9", "workload.replay_concurrency=8")
	if _, err := Run(context.Background(), other, newFakeSim(other), Options{Out: dir, Resume: true}); err == nil ||
		!strings.Contains(err.Error(), "different experiment") || !strings.Contains(err.Error(), "sweep.seed: 1 → 9") ||
		!strings.Contains(err.Error(), "workload.replay_concurrency: 32 → 8") {
		t.Errorf("resume with another seed and concurrency: error %v, want a refusal listing both", err)
	}
}

func TestSLARanking(t *testing.T) {
	o := Objective{Target: "throughput", MaxTTFTMS: 100}
	feasibleSlow := Metrics{TTFTMS: 90, OutputTokS: 1000}
	feasibleFast := Metrics{TTFTMS: 99, OutputTokS: 1500}
	slightlyOver := Metrics{TTFTMS: 110, OutputTokS: 5000}
	farOver := Metrics{TTFTMS: 300, OutputTokS: 9000}
	order := []Metrics{farOver, feasibleSlow, slightlyOver, feasibleFast}
	slices.SortStableFunc(order, func(a, b Metrics) int {
		if o.Better(a, b) {
			return -1
		}
		if o.Better(b, a) {
			return 1
		}
		return 0
	})
	want := []Metrics{feasibleFast, feasibleSlow, slightlyOver, farOver}
	if !slices.Equal(order, want) {
		t.Errorf("SLA ranking %v, want %v", order, want)
	}
	if v := o.Violation(slightlyOver); math.Abs(v-0.1) > 1e-12 {
		t.Errorf("violation %.4f, want 0.1", v)
	}
	// The score the GP minimises must agree on these points.
	for i := 1; i < len(want); i++ {
		if !(o.Score(want[i-1]) < o.Score(want[i])) {
			t.Errorf("score of rank %d (%.1f) not below rank %d (%.1f)", i, o.Score(want[i-1]), i+1, o.Score(want[i]))
		}
	}
	if s := o.String(); s != "maximise output throughput s.t. mean TTFT ≤ 100 ms" {
		t.Errorf("goal text %q", s)
	}
}

func TestSLASweepPrefersFeasible(t *testing.T) {
	// Maximise throughput (1e6/e2e in the fake) subject to mean TTFT (e2e/4) ≤ 255 ms, i.e.
	// e2e ≤ 1020: the best feasible configuration is the fastest, the optimum.
	f := seedFile(t, "goal.target=throughput", "goal.max_ttft_ms=255", "sweep.algorithm=grid")
	res, err := RunSearch(context.Background(), f, newFakeSim(f), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := res.BestEvaluation()
	if b.Key != "router_mode=kv_router overlap_score_credit=1.0 prefill_load_scale=4.0 router_temperature=0.0" ||
		res.Objective.Violation(b.Metrics) != 0 {
		t.Errorf("best %s (violation %.3f)", b.Key, res.Objective.Violation(b.Metrics))
	}
	ranked := res.Ranked()
	lastFeasible := true
	for _, i := range ranked {
		feasible := res.Objective.Violation(res.Evaluations[i].Metrics) == 0
		if feasible && !lastFeasible {
			t.Fatal("a feasible configuration ranks after an infeasible one")
		}
		lastFeasible = feasible
	}
}

func TestPairedBootstrap(t *testing.T) {
	n := 4000
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		b[i] = 100 + float64(i%17)
		a[i] = b[i] - 5 + float64(i%5) - 2 // differences −7…−3, mean −5, sd √2
	}
	d, err := PairedBootstrap(a, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d.MeanMS+5) > 1e-9 {
		t.Errorf("mean %.4f, want −5", d.MeanMS)
	}
	// 95 % interval ≈ mean ± 1.96 √2/√n = ± 0.044.
	if half := (d.HighMS - d.LowMS) / 2; half < 0.035 || half > 0.053 || d.LowMS > -5 || d.HighMS < -5 {
		t.Errorf("interval [%.4f, %.4f], want about −5 ± 0.044", d.LowMS, d.HighMS)
	}
	if _, err := PairedBootstrap(a, b[:10], 1); err == nil {
		t.Error("unpaired lengths: want an error")
	}
}

func FuzzReadLedger(f *testing.F) {
	h := ledgerHeader{Ledger: ledgerMagic, Experiment: config.Default().Fingerprint()}
	head, _ := json.Marshal(h)
	f.Add(append(head, '\n'))
	f.Add(append(append(head, '\n'), []byte(`{"round":1,"candidate":0,"key":"k","config":{},"seeds":[1],"runs":[{}],"metrics":{},"value":1,"wall_time_ms":2}`+"\n")...))
	f.Add([]byte("garbage\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		exp, evals, err := readLedger("ledger.jsonl", data)
		if err != nil {
			return
		}
		if len(exp) == 0 {
			t.Fatal("accepted a ledger without an experiment")
		}
		for _, e := range evals {
			if e.Key == "" || len(e.Runs) != len(e.Seeds) || len(e.Runs) == 0 {
				t.Fatalf("accepted an invalid evaluation %+v", e)
			}
		}
	})
}

// Whatever the algorithm, seed and round shape, a search never evaluates a configuration
// twice, keeps to its budget (a grid: the whole space) and to the round size.
func TestSearchInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := rapid.SampledFrom([]string{GPBandit, Random, Grid}).Draw(t, "algorithm")
		rounds := rapid.IntRange(1, 5).Draw(t, "rounds")
		per := rapid.IntRange(1, 12).Draw(t, "per")
		seed := rapid.IntRange(0, 1000).Draw(t, "seed")
		f := config.Default()
		for _, s := range []string{"sweep.algorithm=" + alg, "sweep.max_rounds=" + itoa(rounds),
			"sweep.candidates_per_round=" + itoa(per), "sweep.seed=" + itoa(seed), "prefill_load_scale=[0.0, 1.0, 8.0]"} {
			if err := f.Set(s); err != nil {
				t.Fatal(err)
			}
		}
		s, err := RunSearch(context.Background(), f, newFakeSim(f), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if alg == Grid {
			rounds = (len(s.Space.Candidates) + per - 1) / per // a grid covers the whole space
			if len(s.Evaluations) != len(s.Space.Candidates) {
				t.Fatalf("grid: %d evaluations of %d candidates", len(s.Evaluations), len(s.Space.Candidates))
			}
		}
		if len(s.Evaluations) > rounds*per || len(s.Evaluations) > len(s.Space.Candidates) {
			t.Fatalf("%d evaluations, budget %d×%d, %d candidates", len(s.Evaluations), rounds, per, len(s.Space.Candidates))
		}
		seen := map[string]bool{}
		perRound := map[int]int{}
		for _, e := range s.Evaluations {
			if seen[e.Key] {
				t.Fatalf("%s evaluated twice", e.Key)
			}
			seen[e.Key] = true
			perRound[e.Round]++
			if perRound[e.Round] > per {
				t.Fatalf("round %d has more than %d candidates", e.Round, per)
			}
		}
		b := s.BestEvaluation()
		for _, e := range s.Evaluations {
			if e.Value < b.Value {
				t.Fatalf("best %s (%.2f) but %s has %.2f", b.Key, b.Value, e.Key, e.Value)
			}
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestSingleConfigurationSpace(t *testing.T) {
	f := seedFile(t, "router_mode=kv_router", "overlap_score_credit=0.5", "prefill_load_scale=2.0", "router_temperature=0.0")
	res, err := Run(context.Background(), f, newFakeSim(f), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Search
	if len(s.Space.Candidates) != 1 || len(s.Evaluations) != 1 || s.Stop != "every canonical configuration evaluated" {
		t.Fatalf("%d candidates, %d evaluations, stop %q", len(s.Space.Candidates), len(s.Evaluations), s.Stop)
	}
	if s.Evaluations[0].Key != "(fixed)" || res.Validation == nil || len(res.Validation.Saturation) != 0 {
		t.Errorf("key %q, validation %+v", s.Evaluations[0].Key, res.Validation)
	}
}

// The scalar the GP minimises orders feasible configurations exactly as the ranking does,
// and never puts an infeasible one ahead of a feasible one whose target is no worse.
func TestScoreAgreesWithRanking(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := Objective{Target: rapid.SampledFrom([]string{"e2e_latency", "ttft", "tpot", "throughput"}).Draw(t, "target")}
		if rapid.Bool().Draw(t, "sla") {
			o.MaxTTFTMS = rapid.Float64Range(10, 500).Draw(t, "max_ttft")
		}
		draw := func(name string) Metrics {
			return Metrics{
				E2EMS: rapid.Float64Range(100, 5000).Draw(t, name+".e2e"), TTFTMS: rapid.Float64Range(5, 1000).Draw(t, name+".ttft"),
				TPOTMS: rapid.Float64Range(1, 50).Draw(t, name+".tpot"), OutputTokS: rapid.Float64Range(100, 10000).Draw(t, name+".tok"),
			}
		}
		a, b := draw("a"), draw("b")
		if o.Violation(a) == 0 && o.Violation(b) == 0 && o.Better(a, b) != (o.Score(a) < o.Score(b)) {
			t.Fatalf("feasible %+v vs %+v: Better %v but scores %.3f, %.3f", a, b, o.Better(a, b), o.Score(a), o.Score(b))
		}
		if o.Violation(a) == 0 && o.Violation(b) > 0 {
			worse := o.Value(b) >= o.Value(a)
			if o.Maximise() {
				worse = o.Value(b) <= o.Value(a)
			}
			if worse && o.Score(b) < o.Score(a) {
				t.Fatalf("infeasible %+v scores %.3f below feasible %+v's %.3f", b, o.Score(b), a, o.Score(a))
			}
		}
	})
}

// A ledger written by another routerlab version resumes, with a note saying so.
func TestResumeNotesAnotherVersion(t *testing.T) {
	f, dir := ledgerEdited(t, `"routerlab_version":"`, `"routerlab_version":"v0.0.1-old`)
	res, err := Run(context.Background(), f, newFakeSim(f), Options{Out: dir, Resume: true})
	if err != nil {
		t.Fatalf("resume of another version's ledger: %v", err)
	}
	if len(res.Search.Notes) != 1 || !strings.Contains(res.Search.Notes[0], "written by routerlab v0.0.1-old") {
		t.Errorf("notes %q, want one naming the ledger's version", res.Search.Notes)
	}
}

// A ledger of another simulator digest (a build from other code) is refused by name.
func TestResumeRefusesAnotherSimulator(t *testing.T) {
	mine := config.SimulatorDigest()
	f, dir := ledgerEdited(t, `"simulator":"`+mine, `"simulator":"sim-0000000000000000`)
	_, err := Run(context.Background(), f, newFakeSim(f), Options{Out: dir, Resume: true})
	want := "simulator: sim-0000000000000000 → " + mine + " (a build from other code: its results differ)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("resume with another simulator: %v, want %q", err, want)
	}
}

// A sweep started in a directory that holds an old sweep's outputs (its ledger gone) removes
// them once its ledger is open: until it finishes, no summary describes another run.
func TestNewSweepRemovesStaleOutputs(t *testing.T) {
	f := seedFile(t, "sweep.max_rounds=1")
	dir := t.TempDir()
	for _, name := range OutputNames {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("stale"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan Event)
	go func() {
		for ev := range events {
			if ev.Key != "" {
				cancel() // after the first evaluation: the ledger is open
			}
		}
	}()
	_, err := Run(ctx, f, newFakeSim(f), Options{Out: dir, Progress: events})
	close(events)
	var stopped *Interrupted
	if !errors.As(err, &stopped) {
		t.Fatalf("cancelled sweep: %v", err)
	}
	for _, name := range OutputNames {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s of the old sweep is still beside the new ledger", name)
		}
	}
}

// BenchmarkNewSpaceLongList: setting up the seed space with one list of n router
// temperatures; linear in n (the 4,000-value list took 26 s before At stopped copying lists).
func BenchmarkNewSpaceLongList(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = strconv.FormatFloat(float64(i)/float64(n), 'g', -1, 64)
		}
		f := seedFile(b, "router_temperature=["+strings.Join(vals, ", ")+"]")
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := NewSpace(context.Background(), f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// ledgerEdited runs a one-round sweep of the seed into a new directory and replaces old by
// now in its ledger's header, as a ledger written by another build would read.
func ledgerEdited(t *testing.T, old, now string) (*config.File, string) {
	t.Helper()
	f := seedFile(t, "sweep.max_rounds=1")
	dir := t.TempDir()
	if _, err := Run(context.Background(), f, newFakeSim(f), Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, LedgerName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, now, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return f, dir
}
