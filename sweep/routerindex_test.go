package sweep

import (
	"context"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/router"
)

// examples/router-index-sweep.yaml runs end to end: its 32 points canonicalise to 18
// configurations (a TTL is moot with events on, sync with one router), every one is
// evaluated and the validation replays the full trace (with -short, the search only).
func TestRouterIndexSweepExample(t *testing.T) {
	f, err := config.Load("../examples/router-index-sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() { // the search only, on fewer requests
		f.Workload.SearchRequests, f.Validate.Enabled = 50, false
	}
	res, err := Run(context.Background(), f, exp, Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Search.Evaluations); n != 18 {
		t.Errorf("%d evaluations, want 18", n)
	}
	if f.Validate.Enabled && len(res.Validation.Runs) != 3 {
		t.Errorf("%d validation runs, want 3", len(res.Validation.Runs))
	}
}

// The validation's baselines run Dynamo's default index (events on, one router), not the
// winner's: default_kv is Dynamo's default router whatever the sweep found.
func TestValidationBaselinesUseDefaultIndex(t *testing.T) {
	f, err := config.Load("../examples/router-index-sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Apply([]string{"use_kv_events=[false]", "router_replicas=[4]", "router_replica_sync=[false]", "overlap_score_credit_decay=[0.5]", "router_ttl_secs=[10]"}); err != nil {
		t.Fatal(err)
	}
	f.Workload.SearchRequests = 50
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := RunSearch(context.Background(), f, exp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, jobs, err := validationPlan(s, s.BestEvaluation(), exp)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false} { // round_robin, default_kv at the default; best at its own
		if got := jobs[i].cfg.Router.IndexConfig == router.DefaultIndexConfig(); got != want {
			t.Errorf("validation run %d: index %+v, default %v, want %v", i, jobs[i].cfg.Router.IndexConfig, got, want)
		}
	}
}
