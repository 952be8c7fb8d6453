package backend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
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

// writerGoneAfter is how long a directory must stay unchanged, its progress record saying
// the sweep runs, before the watch asks whether the writer still holds the lock (a probe
// that takes the lock for an instant, so it is not made at every poll).
const writerGoneAfter = 2 * time.Second

// Info describes the watched sweep: the objective and round budget from its progress record
// (mean e2e latency without one), and from its ledger's experiment the settings it runs at
// and how many requests it searches and validates on. Fields are zero while the files that
// hold them are not written yet; Sweep sends Info again as they appear.
func (w *DirWatcher) Info() tui.SweepInfo {
	target := "e2e_latency"
	rounds := 0
	if rec, err := sweep.ReadProgress(w.dir); err == nil && rec != nil && rec.Target != "" {
		target, rounds = rec.Target, rec.Rounds
	}
	obj, err := sweep.NewObjective(config.Goal{Target: target})
	if err != nil {
		obj, _ = sweep.NewObjective(config.Goal{Target: "e2e_latency"})
	}
	info := tui.SweepInfo{Objective: objectiveLabel(obj), HigherIsBetter: obj.Maximise(), Rounds: rounds,
		Scope: "settings: waiting for the sweep's ledger"}
	fp, err := sweep.ReadLedgerExperiment(w.dir)
	if err != nil || fp == nil {
		return info
	}
	get := func(key string) string { v, _ := fp.Get(key); return v }
	atoi := func(key string) int { n, _ := strconv.Atoi(get(key)); return n }
	info.Requests = atoi("workload.search_requests")
	info.ValidationRequests = atoi("validate.requests")
	if all := atoi("workload.trace_requests"); info.ValidationRequests == 0 || (all > 0 && all < info.ValidationRequests) {
		info.ValidationRequests = all
	}
	if info.Rounds == 0 {
		info.Rounds = atoi("sweep.max_rounds")
	}
	c := get("workload.replay_concurrency")
	if c == "0" {
		c = "open loop"
	}
	parts := []string{fmt.Sprintf("at c=%s · %d requests", c, info.Requests)}
	for _, k := range []string{"parallel_configs", "agg_max_num_batched_tokens", "agg_max_num_seqs", config.KeyKVCacheDtype, "async_scheduling"} {
		if v, ok := fp.Get("search_space." + k); ok {
			parts = append(parts, k+" "+v)
		}
	}
	info.Scope = strings.Join(parts, " · ")
	return info
}

// Sweep emits the directory's sweep as it stands, then what changes, until the sweep is
// done (summary.json beside a "done" progress record) or ctx ends. A sweep whose record
// says it was interrupted or failed is followed on: a --resume may continue it. One whose
// record says it runs while its lock is free has lost its writer (killed), and the events
// say so. The knobs are unused: the sweep runs wherever its writer is.
func (w *DirWatcher) Sweep(ctx context.Context, _ tui.Knobs, emit func(tui.SweepEvent)) error {
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	seen := map[string]bool{}
	var last sweep.Progress
	var info tui.SweepInfo
	note, lastNote := "", ""
	changed := time.Now()
	for {
		if in := w.Info(); !reflect.DeepEqual(in, info) { // the ledger or the first progress record appeared
			info = in
			emit(tui.SweepEvent{Progress: last, Info: &in, Note: note})
		}
		if _, err := os.Stat(w.dir); errors.Is(err, fs.ErrNotExist) {
			// Started before the sweep that will write here: wait for it, saying so.
			if note = "no such directory yet: waiting for a sweep to create it"; note != lastNote {
				emit(tui.SweepEvent{Progress: last, Note: note})
				lastNote = note
			}
			select {
			case <-tick.C:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
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
			changed = time.Now()
			p := pr
			if rec == nil { // a directory without a progress record: the ledger is all there is
				p = sweep.Progress{Phase: sweep.PhaseSearch, Round: e.Round, Done: len(seen)}
			}
			k, pools := evalKnobs(e.Config, tui.Knobs{}, e.Runs)
			emit(tui.SweepEvent{Progress: p, Note: note, Eval: &tui.SweepEval{Round: e.Round, Candidate: e.Candidate, Knobs: k, Value: e.Value, Runs: len(e.Runs), Pools: pools}})
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
		note = ""
		if rec != nil && !pr.Phase.Ended() && time.Since(changed) >= writerGoneAfter {
			if writing, err := sweep.Writing(w.dir); err == nil && !writing {
				note = "the writer is gone: sweep.lock is free, so no process writes here (killed?); --resume continues it"
			}
		}
		if rec != nil && (pr != last || note != lastNote) {
			if pr != last {
				changed = time.Now()
			}
			emit(tui.SweepEvent{Progress: pr, Note: note})
			last, lastNote = pr, note
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// IsRunDir reports whether dir holds a sweep's files (ledger, progress record or summary).
func IsRunDir(dir string) bool {
	for _, name := range []string{sweep.LedgerName, sweep.ProgressName, "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// ListRuns lists the run directories directly under parent, in name order (explorer-,
// serve- and dated names sort by time), each with where it stands: its progress record's
// phase (or "no progress record"), its evaluations and its best configuration so far.
func ListRuns(parent string) ([]tui.RunEntry, error) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	var out []tui.RunEntry
	for _, e := range entries {
		dir := filepath.Join(parent, e.Name())
		if !e.IsDir() || !IsRunDir(dir) {
			continue
		}
		run := tui.RunEntry{Dir: dir, State: "no progress record"}
		if rec, err := sweep.ReadProgress(dir); err != nil {
			run.State = err.Error()
		} else if rec != nil {
			run.State = rec.Progress.String()
			if !rec.Phase.Ended() {
				if writing, err := sweep.Writing(dir); err == nil && !writing {
					run.State += " · writer gone"
				}
			}
		}
		evals, err := sweep.ReadLedger(dir)
		if err != nil {
			run.State = err.Error()
		}
		run.Evaluations = len(evals)
		info := NewDirWatcher(dir, WatchEvery).Info()
		for i, ev := range evals {
			better := ev.Value < evals[0].Value
			if info.HigherIsBetter {
				better = ev.Value > evals[0].Value
			}
			if better {
				evals[0], evals[i] = evals[i], evals[0]
			}
		}
		if len(evals) > 0 {
			k := knobs(evals[0].Config, tui.Knobs{})
			run.Best = fmt.Sprintf("best %s %s", formatValue(evals[0].Value), k.Router())
		}
		out = append(out, run)
	}
	return out, nil
}

func formatValue(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
