package sweep

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/router"
)

// gridLedger is a grid sweep of the seed experiment on the first 2,000 requests of
// builtin:toolagent, made with the real simulator (see testdata/README.md).
const gridLedger = "testdata/grid-toolagent-2000.jsonl"

// tableSim answers runs from a grid ledger: the real objective without the simulator.
type tableSim struct {
	fake   *fakeSim // for EngineConfig
	table  map[string]engine.Summary
	values []float64 // every configuration's mean e2e latency
	best   float64   // the grid optimum
}

func runKeyOf(rc router.Config, seed uint64) string {
	return fmt.Sprintf("%s/%g/%g/%g/%d", rc.Mode, rc.OverlapScoreCredit, rc.PrefillLoadScale, rc.Temperature, seed)
}

func loadTableSim(tb testing.TB, f *config.File) *tableSim {
	tb.Helper()
	file, err := os.Open(gridLedger)
	if err != nil {
		tb.Skipf("%s not present: %v", gridLedger, err)
	}
	defer file.Close()
	space, err := NewSpace(context.Background(), f)
	if err != nil {
		tb.Fatal(err)
	}
	ts := &tableSim{fake: newFakeSim(f), table: map[string]engine.Summary{}, best: math.Inf(1)}
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for line := 0; sc.Scan(); line++ {
		if line == 0 {
			continue // header
		}
		var e Evaluation
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			tb.Fatalf("%s:%d: %v", gridLedger, line+1, err)
		}
		c, ok := space.Index(e.Key)
		if !ok {
			tb.Fatalf("%s:%d: %s is not in the seed space", gridLedger, line+1, e.Key)
		}
		cfg, _ := ts.fake.EngineConfig(space.Candidates[c].Point)
		for i, seed := range e.Seeds {
			ts.table[runKeyOf(cfg.Router, seed)] = e.Runs[i]
		}
		ts.values = append(ts.values, e.Value)
		ts.best = math.Min(ts.best, e.Value)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if n := len(ts.table); n != 28+81*StochasticSeeds {
		tb.Fatalf("%s holds %d runs, want the seed grid's %d", gridLedger, n, 28+81*StochasticSeeds)
	}
	return ts
}

func (t *tableSim) EngineConfig(p config.Point) (engine.Config, error) { return t.fake.EngineConfig(p) }

func (t *tableSim) CheckRequests(...int) error { return nil }

func (t *tableSim) Run(_ context.Context, cfg engine.Config, _ int) (*engine.Report, error) {
	s, ok := t.table[runKeyOf(cfg.Router, cfg.Seed)]
	if !ok {
		return nil, fmt.Errorf("no cached run for %s", runKeyOf(cfg.Router, cfg.Seed))
	}
	return &engine.Report{Summary: s}, nil
}

// searchRun is how one search went against the grid: after how many evaluations (in
// evaluation order) it first held a configuration within tol of the grid optimum and the
// optimum itself (0: never), how many it made in all, and its final gap to the optimum.
type searchRun struct {
	reach, exact, total int
	gap                 float64
}

func searchAgainstGrid(tb testing.TB, algorithm string, seed uint64, tol float64) searchRun {
	f := seedFile(tb, "sweep.algorithm="+algorithm, fmt.Sprintf("sweep.seed=%d", seed), "sweep.max_rounds=11")
	ts := loadTableSim(tb, f)
	s, err := RunSearch(context.Background(), f, ts, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	r := searchRun{total: len(s.Evaluations), gap: s.BestEvaluation().Value/ts.best - 1}
	for i, e := range s.Evaluations {
		if r.reach == 0 && e.Value <= ts.best*(1+tol) {
			r.reach = i + 1
		}
		if r.exact == 0 && e.Value == ts.best {
			r.exact = i + 1
		}
	}
	return r
}

func median(xs []int) float64 {
	s := slices.Clone(xs)
	for i, x := range s {
		if x == 0 {
			s[i] = math.MaxInt32 // never reached: worse than any count
		}
	}
	slices.Sort(s)
	n := len(s)
	return float64(s[(n-1)/2]+s[n/2]) / 2
}

// TestSearchEfficiency is the benchmark: over 10 sweep seeds, how many evaluations
// gp_bandit and random need to come within 0.5 % of the grid optimum of mean e2e latency.
//
//	go test ./sweep -run TestSearchEfficiency -v
func TestSearchEfficiency(t *testing.T) {
	if testing.Short() {
		t.Skip("fits a few hundred Gaussian processes")
	}
	const tol = 0.005
	need := map[string][]int{}
	for _, alg := range []string{GPBandit, Random} {
		var exact, total []int
		var worstGap float64
		for seed := uint64(1); seed <= 10; seed++ {
			r := searchAgainstGrid(t, alg, seed, tol)
			need[alg] = append(need[alg], r.reach)
			exact, total = append(exact, r.exact), append(total, r.total)
			worstGap = math.Max(worstGap, r.gap)
		}
		t.Logf("%-9s to within 0.5 %%: %v median %.1f; to the optimum: %v median %.1f; evaluations made: %v; worst final gap %.2f %%",
			alg, need[alg], median(need[alg]), exact, median(exact), total, 100*worstGap)
	}
	gp, rnd := median(need[GPBandit]), median(need[Random])
	expected := randomMedian(loadTableSim(t, seedFile(t)), tol)
	t.Logf("random search's expected median (first hit in a uniform permutation of the grid): %d", expected)
	if gp > 16 {
		t.Errorf("gp_bandit median %.1f evaluations, want ≤ 16", gp)
	}
	// Ten random permutations are a small sample: compare with random search's exact median.
	if gp > float64(expected) {
		t.Errorf("gp_bandit median %.1f is worse than random search's expected median %d (its 10-seed sample: %.1f)", gp, expected, rnd)
	}
}

// randomMedian is the median position of the first configuration within tol of the optimum
// in a uniformly random order of the grid: the smallest k with P(a hit among the first k) ≥ ½,
// where P(no hit among k) = Π_{i<k} (N−K−i)/(N−i) for K hits among N configurations.
func randomMedian(ts *tableSim, tol float64) int {
	n, hits := len(ts.values), 0
	for _, v := range ts.values {
		if v <= ts.best*(1+tol) {
			hits++
		}
	}
	miss := 1.0
	for k := 1; k <= n; k++ {
		miss *= float64(n-hits-(k-1)) / float64(n-(k-1))
		if 1-miss >= 0.5 {
			return k
		}
	}
	return n
}

func BenchmarkGPBanditSearch(b *testing.B) {
	f := seedFile(b)
	ts := loadTableSim(b, f)
	for b.Loop() {
		if _, err := RunSearch(context.Background(), f, ts, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
