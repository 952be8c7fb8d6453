package backend

import (
	"context"
	"time"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/tui"
)

// WatchEvery is how often a watch polls the run directory. Polling, not file notifications:
// it works the same on a shared (network) filesystem written by another machine.
const WatchEvery = 250 * time.Millisecond

// DirWatcher follows the sweep writing a run directory (routerlab watch DIR) as the
// explorer's sweep pane shows a sweep: the ledger's evaluations as they land, the phase
// from progress.json, the validation from summary.json once the sweep is done. It only
// reads: no file is created, written or locked in the directory, so the writer may be
// killed and resumed under it.
type DirWatcher struct {
	dir   string
	every time.Duration
}

// NewDirWatcher follows dir, polling it every `every`.
func NewDirWatcher(dir string, every time.Duration) *DirWatcher {
	return &DirWatcher{dir: dir, every: every}
}

// Info describes the watched sweep from its progress record (the objective of a directory
// without one, or not written yet, is taken to be the default, mean e2e latency).
func (w *DirWatcher) Info() tui.SweepInfo {
	target := "e2e_latency"
	rounds := 0
	if rec, err := sweep.ReadProgress(w.dir); err == nil && rec != nil {
		target, rounds = rec.Target, rec.Rounds
	}
	obj, err := sweep.NewObjective(config.Goal{Target: target})
	if err != nil {
		obj, _ = sweep.NewObjective(config.Goal{Target: "e2e_latency"})
	}
	info := tui.SweepInfo{Objective: objectiveLabel(obj), HigherIsBetter: obj.Maximise(), Rounds: rounds}
	if sum, err := sweep.ReadSummary(w.dir); err == nil && sum != nil {
		info.Requests, info.ValidationRequests = sum.SearchRequests, sum.ValidationRequests
	}
	return info
}

// Sweep emits the directory's sweep as it stands, then what changes, until the sweep is
// done (summary.json beside a "done" progress record) or ctx ends. The knobs are unused: the
// sweep runs wherever its writer is.
func (w *DirWatcher) Sweep(ctx context.Context, _ tui.Knobs, emit func(tui.SweepEvent)) error {
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	seen := map[string]bool{}
	var last sweep.Progress
	for {
		evals, err := sweep.ReadLedger(w.dir)
		if err != nil {
			return err
		}
		rec, err := sweep.ReadProgress(w.dir)
		if err != nil {
			return err
		}
		var pr sweep.Progress
		if rec != nil {
			pr = rec.Progress
		}
		for _, e := range evals {
			if seen[e.Key] {
				continue // a resume rewrites the ledger with what it already held
			}
			seen[e.Key] = true
			p := pr
			if rec == nil { // a directory without a progress record: the ledger is all there is
				p = sweep.Progress{Phase: sweep.PhaseSearch, Round: e.Round, Done: len(seen)}
			}
			emit(tui.SweepEvent{Progress: p, Eval: &tui.SweepEval{Round: e.Round, Knobs: knobs(e.Config, tui.Knobs{}), Value: e.Value, Runs: len(e.Runs)}})
			last = p
		}
		if rec == nil || rec.Phase == sweep.PhaseDone {
			sum, err := sweep.ReadSummary(w.dir)
			if err != nil {
				return err
			}
			if sum != nil {
				final := tui.SweepEvent{Progress: pr}
				if rec == nil {
					final.Progress = sweep.Progress{Phase: sweep.PhaseDone, Done: len(seen), Total: len(seen), Stop: sum.Stop}
				}
				for _, v := range sum.Validation {
					final.Validation = append(final.Validation, tui.ValidationRow{Name: v.Name, Knobs: knobs(v.Config, tui.Knobs{}), Metrics: metrics(v.Metrics)})
				}
				emit(final)
				return nil
			}
		}
		if rec != nil && pr != last {
			emit(tui.SweepEvent{Progress: pr})
			last = pr
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
