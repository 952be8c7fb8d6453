package backend

import (
	"context"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/tui"
)

func TestSweeperStreamsEvaluationsThenValidation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small sweep with validation")
	}
	f := config.Default()
	for _, s := range []string{"sweep.max_rounds=2", "sweep.candidates_per_round=3", "sweep.parallel_evals=2",
		"workload.search_requests=150", "validate.requests=150"} {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := NewSweeper(exp)
	if err != nil {
		t.Fatal(err)
	}
	info, err := sw.Info()
	if err != nil || info.Objective != "e2e ms" || info.HigherIsBetter || info.Rounds != 2 || info.PerRound != 3 {
		t.Fatalf("info %+v, %v", info, err)
	}
	var evals []tui.SweepEval
	var kinds []tui.SweepEventKind
	var validation []tui.ValidationRow
	err = sw.Sweep(context.Background(), func(ev tui.SweepEvent) {
		kinds = append(kinds, ev.Kind)
		switch ev.Kind {
		case tui.SweepEvaluated:
			evals = append(evals, ev.Eval)
		case tui.SweepValidated:
			validation = ev.Validation
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(evals) == 0 || len(evals) > 6 {
		t.Fatalf("%d evaluations, want 1..6", len(evals))
	}
	for _, e := range evals {
		if e.Round < 1 || e.Round > 2 || e.Value <= 0 || e.Knobs.Concurrency != 32 {
			t.Errorf("evaluation %+v", e)
		}
		stochastic := e.Knobs.Mode == "random" || (e.Knobs.Mode == "kv_router" && e.Knobs.Temperature > 0)
		if want := map[bool]int{false: 1, true: 3}[stochastic]; e.Runs != want {
			t.Errorf("evaluation %+v: runs %d, want %d", e, e.Runs, want)
		}
	}
	if kinds[len(kinds)-1] != tui.SweepValidated || kinds[len(kinds)-2] != tui.SweepValidating {
		t.Fatalf("event kinds end %v, want validating then validated", kinds[len(kinds)-3:])
	}
	names := map[string]bool{}
	for _, v := range validation {
		names[v.Name] = true
		if v.Metrics.Completed != 150 {
			t.Errorf("%s validated %d requests", v.Name, v.Metrics.Completed)
		}
	}
	if !names["round_robin"] || !names["default_kv"] || !names["best"] {
		t.Fatalf("validation rows %v", names)
	}
}

func TestSweeperKnobs(t *testing.T) {
	exp, _ := smallExperiment(t, 10)
	sw, err := NewSweeper(exp)
	if err != nil {
		t.Fatal(err)
	}
	k := sw.Knobs(map[string]string{"router_mode": "kv_router", "overlap_score_credit": "0.5", "prefill_load_scale": "16"})
	if k != (tui.Knobs{Mode: "kv_router", Credit: 0.5, Scale: 16, Temperature: 0, Concurrency: 32}) {
		t.Fatalf("knobs %+v", k)
	}
	if k := sw.Knobs(map[string]string{"router_mode": "round_robin"}); k.Mode != "round_robin" {
		t.Fatalf("knobs %+v", k)
	}
}

func TestSweeperCancel(t *testing.T) {
	exp, _ := smallExperiment(t, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sw, err := NewSweeper(exp)
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Sweep(ctx, func(tui.SweepEvent) {}); err == nil {
		t.Fatal("cancelled sweep returned no error")
	}
}
