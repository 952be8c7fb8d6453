package backend

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/tui"
)

// smallSweeper is the seed with a two-round sweep of three candidates, searching and
// validating on 150 requests.
func smallSweeper(t *testing.T) (*Sim, *Sweeper) {
	t.Helper()
	_, sim := smallExperiment(t, 150, "sweep.max_rounds=2", "sweep.candidates_per_round=3", "sweep.parallel_evals=2", "validate.requests=150")
	return sim, NewSweeper(sim)
}

// The explorer's sweep searches what the knobs show: a sweep started after concurrency moved
// to 64 (and the fleet to 4 replicas) evaluates there — each evaluation's figure is exactly
// the explorer's own run of that configuration at those knobs — and its events walk
// search → saturation → validation → done.
func TestSweeperSearchesAtTheKnobs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small sweep with validation")
	}
	sim, sw := smallSweeper(t)
	runs := t.TempDir()
	sw.runs = runs
	info, err := sw.Info()
	if err != nil || info.Objective != "e2e ms" || info.HigherIsBetter || info.Rounds != 2 || info.PerRound != 3 ||
		info.Requests != 150 || info.ValidationRequests != 150 ||
		!slices.Equal(info.Dims, []string{"router_mode", "overlap_score_credit", "prefill_load_scale", "router_temperature"}) {
		t.Fatalf("info %+v, %v", info, err)
	}
	at := sim.Initial()
	at.Concurrency = 64
	at.Deployment.Replicas = 4
	var evals []tui.SweepEval
	var phases []sweep.Phase
	var last tui.SweepEvent
	err = sw.Sweep(context.Background(), at, func(ev tui.SweepEvent) {
		if len(phases) == 0 || phases[len(phases)-1] != ev.Progress.Phase {
			phases = append(phases, ev.Progress.Phase)
		}
		if ev.Eval != nil {
			evals = append(evals, *ev.Eval)
		}
		last = ev
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []sweep.Phase{sweep.PhaseSearch, sweep.PhaseSaturation, sweep.PhaseValidation, sweep.PhaseDone}; !slices.Equal(phases, want) {
		t.Fatalf("phases %v, want %v", phases, want)
	}
	if last.Progress.Stop == "" || len(last.Validation) != 3 {
		t.Fatalf("last event %+v", last)
	}
	// It wrote a run directory under runs, named in its events, as a headless sweep would:
	// the ledger of its evaluations, a done progress record, the summary and the report;
	// the resume overrides rebuild its experiment.
	if filepath.Dir(last.Dir) != runs || !strings.HasPrefix(filepath.Base(last.Dir), "explorer-") {
		t.Fatalf("run directory %q, want explorer-… under %s", last.Dir, runs)
	}
	ledger, err := sweep.ReadLedger(last.Dir)
	if err != nil || len(ledger) != len(evals) {
		t.Fatalf("ledger of %d evaluations (%v), events %d", len(ledger), err, len(evals))
	}
	if rec, err := sweep.ReadProgress(last.Dir); err != nil || rec == nil || rec.Phase != sweep.PhaseDone {
		t.Fatalf("progress.json %+v, %v", rec, err)
	}
	for _, name := range []string{"summary.json", "report.md"} {
		if _, err := os.Stat(filepath.Join(last.Dir, name)); err != nil {
			t.Error(err)
		}
	}
	fp, err := sweep.ReadLedgerExperiment(last.Dir)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := sw.ResumeSets(at)
	if err != nil {
		t.Fatal(err)
	}
	f := sim.exp.File.Clone()
	if err := f.Apply(sets); err != nil {
		t.Fatal(err)
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	if d := config.Diff(fp, exp.Fingerprint()); len(d) != 0 {
		t.Fatalf("the resume overrides make another experiment: %v", d)
	}
	if len(evals) == 0 || len(evals) > 6 {
		t.Fatalf("%d evaluations, want 1..6", len(evals))
	}
	for _, e := range evals {
		if e.Round < 1 || e.Round > 2 || e.Knobs.Concurrency != 64 || e.Knobs.Deployment != at.Deployment {
			t.Errorf("evaluation %+v", e)
		}
		stochastic := e.Knobs.Mode == "random" || (e.Knobs.Mode == "kv_router" && e.Knobs.Temperature > 0)
		if want := map[bool]int{false: 1, true: 3}[stochastic]; e.Runs != want {
			t.Errorf("evaluation %+v: runs %d, want %d", e, e.Runs, want)
		}
		if stochastic {
			continue
		}
		r, err := sim.Simulate(context.Background(), tui.Run{Knobs: e.Knobs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Metrics.E2E.Mean != e.Value {
			t.Errorf("%s: the sweep measured %.3f ms, the explorer's run at the same knobs %.3f ms", e.Knobs, e.Value, r.Metrics.E2E.Mean)
		}
	}
	for _, v := range last.Validation {
		if v.Metrics.Completed != 150 || v.Knobs.Concurrency != 64 {
			t.Errorf("%s validated %d requests at c=%d", v.Name, v.Metrics.Completed, v.Knobs.Concurrency)
		}
	}
}

// The swept file fixes the deployment at the knobs, raising the GPU budget when the knobs'
// fleet needs more.
func TestSweeperFileFixesTheDeployment(t *testing.T) {
	sim, sw := smallSweeper(t)
	at := sim.Initial()
	at.Deployment = tui.Deployment{Replicas: 16, Layout: "tp4·moe_tp4", MaxBatchedTokens: 8192, MaxSeqs: 256, KVCacheDtype: "bf16", Async: true}
	f, err := sw.File(at)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := exp.EngineConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Worker
	if cfg.Workers != 16 || d.MoETP != 4 || d.MoEEP != 1 || d.MaxNumBatchedTokens != 8192 || d.MaxNumSeqs != 256 || !d.AsyncScheduling || d.KVCacheDtype != "bf16" ||
		f.GPUBudget != 64 || f.Workload.SearchRequests != 150 {
		t.Fatalf("swept file: %d workers, %+v, budget %d, %d search requests", cfg.Workers, d, f.GPUBudget, f.Workload.SearchRequests)
	}
	if sim.exp.File.GPUBudget != 32 {
		t.Fatal("sweeping changed the explorer's own experiment")
	}
	at.Deployment.Layout = "tp8·ep8"
	if _, err := sw.File(at); err == nil {
		t.Fatal("unknown layout accepted")
	}
}

func TestSweeperKnobs(t *testing.T) {
	_, s := smallExperiment(t, 10)
	at := s.Initial()
	at.Concurrency = 64
	k := knobs(map[string]string{"router_mode": "kv_router", "overlap_score_credit": "0.5", "prefill_load_scale": "16"}, at)
	want := at
	want.Credit, want.Scale = 0.5, 16
	if k != want {
		t.Fatalf("knobs %+v", k)
	}
	if k := knobs(map[string]string{"router_mode": "round_robin"}, at); k.Mode != "round_robin" {
		t.Fatalf("knobs %+v", k)
	}
}

func TestSweeperCancel(t *testing.T) {
	_, s := smallExperiment(t, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := NewSweeper(s).Sweep(ctx, s.Initial(), func(tui.SweepEvent) {}); err == nil {
		t.Fatal("cancelled sweep returned no error")
	}
}
