package backend

import (
	"context"
	"strconv"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/tui"
)

// Sweeper runs the smart sweep of an experiment for the explorer, in memory (no output
// directory, no ledger).
type Sweeper struct {
	exp   *config.Experiment
	space *sweep.Space
	base  tui.Knobs // knob values of dimensions a configuration does not name
}

// NewSweeper sweeps exp's file as `routerlab sweep` would, without writing files.
func NewSweeper(exp *config.Experiment) (*Sweeper, error) {
	f := exp.File
	space, err := sweep.NewSpace(f)
	if err != nil {
		return nil, err
	}
	base := tui.Knobs{Concurrency: f.Workload.ReplayConcurrency}
	base.Mode = f.Values(config.KeyRouterMode)[0].Text
	base.Credit = f.Values(config.KeyOverlapScoreCredit)[0].Num
	base.Scale = f.Values(config.KeyPrefillLoadScale)[0].Num
	base.Temperature = f.Values(config.KeyRouterTemperature)[0].Num
	return &Sweeper{exp: exp, space: space, base: base}, nil
}

// runs is how many simulations the sweep averages for a configuration: several seeds for a
// stochastic one (temperature > 0, the random router), else one.
func (s *Sweeper) runs(key string) int {
	if c, ok := s.space.Index(key); ok && s.space.Candidates[c].Stochastic {
		return sweep.StochasticSeeds
	}
	return 1
}

// Info describes the sweep for the explorer's sweep pane.
func (s *Sweeper) Info() (tui.SweepInfo, error) {
	f := s.exp.File
	obj, err := sweep.NewObjective(f.Goal)
	if err != nil {
		return tui.SweepInfo{}, err
	}
	name := map[string]string{"e2e_latency": "e2e ms", "ttft": "TTFT ms", "tpot": "TPOT ms"}[obj.Target]
	if name == "" {
		name = obj.Unit()
	}
	return tui.SweepInfo{
		Objective: name, HigherIsBetter: obj.Maximise(),
		Rounds: f.Sweep.MaxRounds, PerRound: f.Sweep.CandidatesPerRound,
	}, nil
}

// Knobs reads a sweep configuration (search-dimension values by key) as explorer knobs.
func (s *Sweeper) Knobs(cfg map[string]string) tui.Knobs {
	k := s.base
	num := func(key string, dst *float64) {
		if v, ok := cfg[key]; ok {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				*dst = x
			}
		}
	}
	if v, ok := cfg[config.KeyRouterMode]; ok {
		if m, err := router.ParseMode(v); err == nil {
			k.Mode = string(m)
		}
	}
	num(config.KeyOverlapScoreCredit, &k.Credit)
	num(config.KeyPrefillLoadScale, &k.Scale)
	num(config.KeyRouterTemperature, &k.Temperature)
	return k
}

// Sweep runs the search and the validation, turning the sweep's progress events into the
// explorer's.
func (s *Sweeper) Sweep(ctx context.Context, emit func(tui.SweepEvent)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	progress := make(chan sweep.Event)
	type outcome struct {
		res *sweep.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := sweep.Run(ctx, s.exp.File, s.exp, sweep.Options{Progress: progress})
		done <- outcome{res, err}
	}()
	validating := false
	for {
		select {
		case ev := <-progress:
			if ev.Phase != "search" {
				if !validating {
					validating = true
					emit(tui.SweepEvent{Kind: tui.SweepValidating})
				}
				continue
			}
			emit(tui.SweepEvent{Kind: tui.SweepEvaluated, Eval: tui.SweepEval{
				Round: ev.Round, Knobs: s.Knobs(ev.Config), Value: ev.Value, Runs: s.runs(ev.Key)}})
		case out := <-done:
			if out.err != nil {
				return out.err
			}
			if v := out.res.Validation; v != nil {
				var rows []tui.ValidationRow
				for _, r := range v.Runs {
					rows = append(rows, tui.ValidationRow{Name: r.Name, Knobs: s.Knobs(r.Config), Metrics: metrics(r.Metrics)})
				}
				emit(tui.SweepEvent{Kind: tui.SweepValidated, Validation: rows})
			}
			return nil
		}
	}
}
