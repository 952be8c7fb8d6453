package sweep

import (
	"context"
	"testing"

	"github.com/routerlab/routerlab/config"
)

// TestSeedSweepEndToEnd is the headline with the real simulator: the seed experiment
// on builtin:toolagent needs at most 48 evaluations, and on the full trace the winner beats
// the default KV router, which beats round robin, on mean e2e latency.
func TestSeedSweepEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("about 8 s of simulation")
	}
	f := config.Default()
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), f, exp, Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Search.Evaluations); n > 48 {
		t.Errorf("%d evaluations, want ≤ 48", n)
	}
	v := res.Validation.Runs
	rr, def, best := v[0].Metrics.MeanE2EMS, v[1].Metrics.MeanE2EMS, v[2].Metrics.MeanE2EMS
	t.Logf("%d evaluations; best %s; full trace mean e2e: best %.1f, default_kv %.1f, round_robin %.1f ms; paired %+v",
		len(res.Search.Evaluations), res.Search.BestEvaluation().Key, best, def, rr, *res.Validation.Paired)
	if !(best < def && def < rr) {
		t.Errorf("full-trace mean e2e best %.1f, default_kv %.1f, round_robin %.1f: want best < default_kv < round_robin", best, def, rr)
	}
	if p := res.Validation.Paired; p.HighMS >= 0 {
		t.Errorf("paired interval of best − default_kv [%.1f, %.1f] ms does not exclude 0", p.LowMS, p.HighMS)
	}
}
