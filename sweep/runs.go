package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

// Interrupted is the error of a sweep whose context ended before it finished. Evaluations
// finished evaluations are in the ledger (each line whole), for a resume to continue from.
type Interrupted struct {
	Evaluations int
	Err         error // the context's error
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted after %d evaluations: %v", e.Evaluations, e.Err)
}

func (e *Interrupted) Unwrap() error { return e.Err }

// Run is the whole sweep: search, validation (unless the file turns it off), and the output
// files when opt.Out is set, holding the directory's lock (LockDir) throughout.
//
// A sweep that stops before done leaves its reason in progress.json, so no reader takes a
// dead sweep for a live one: phase interrupted when ctx ended (the reason is ctx's cause:
// "interrupt signal received" from signal.NotifyContext, or the cause its canceller gave),
// failed on an error or a panic (which then goes on).
func Run(ctx context.Context, f *config.File, sim Simulator, opt Options) (res *Result, err error) {
	opt = opt.withRemote(sim)
	sim = withSlotMemory(sim)
	if opt.Out != "" {
		lock, lockErr := LockDir(opt.Out)
		if lockErr != nil {
			return nil, lockErr
		}
		defer lock.Unlock()
		rec := &progressFile{path: filepath.Join(opt.Out, ProgressName), target: f.Goal.Target}
		opt.record = rec
		defer func() {
			if p := recover(); p != nil {
				rec.end(PhaseFailed, fmt.Sprint("crashed: ", p))
				panic(p)
			}
			switch {
			case err == nil:
			case ctx.Err() != nil:
				rec.end(PhaseInterrupted, context.Cause(ctx).Error())
			default:
				rec.end(PhaseFailed, err.Error())
			}
		}()
	}
	// Check the search and validation requests first, so that nothing fails after the search.
	ns := []int{f.Workload.SearchRequests}
	if f.Validate.Enabled {
		ns = append(ns, f.Validate.Requests)
	}
	if err := sim.CheckRequests(ns...); err != nil {
		return nil, err
	}
	if n := min(f.Sweep.ParallelEvals, runtime.GOMAXPROCS(0)); opt.spec == nil && n > 1 && f.Validate.Enabled && opt.remote == nil {
		// Speculation only fills idle cores: one core has none to fill.
		opt.spec = newSpeculator(ctx, sim, n)
		defer opt.spec.stop()
	}
	s, err := RunSearch(ctx, f, sim, opt)
	if err != nil {
		return nil, err
	}
	r := &Result{Search: s}
	if f.Validate.Enabled {
		if r.Validation, err = Validate(ctx, s, sim, opt); err != nil {
			if ctx.Err() != nil {
				return nil, &Interrupted{Evaluations: len(s.Evaluations), Err: ctx.Err()}
			}
			return nil, err
		}
	}
	if opt.Out != "" {
		if err := r.WriteFiles(opt.Out); err != nil {
			return nil, err
		}
	}
	if err := opt.send(ctx, Event{Progress: s.Progress(), Unit: s.Objective.Unit()}); err != nil {
		return nil, err
	}
	return r, nil
}

// Progress is the progress of a finished search: done, with its stop reason, last round and
// evaluation count.
func (s *Search) Progress() Progress {
	n := len(s.Evaluations)
	return Progress{Phase: PhaseDone, Round: s.Evaluations[n-1].Round, Rounds: s.Rounds, Done: n, Total: n, Stop: s.Reason}
}

// metricsOf picks the numbers a goal can target out of a run's summary.
func metricsOf(s engine.Summary) Metrics {
	return Metrics{
		E2EMS: s.MeanE2EMS, TTFTMS: s.MeanTTFTMS, TPOTMS: s.MeanTPOTMS,
		OutputTokS: s.OutputThroughput, PrefixReuse: s.PrefixCacheReusedRatio,
		BusyRejected: engine.BusyRejectedShare(s),
	}
}

// e2eByRequest returns the e2e latency of every request of a run that recorded them, in the
// order of their positions in the trace, with those positions (requests the fleet rejected
// have none).
func e2eByRequest(rep *engine.Report) (ids []int, e2e []float64, err error) {
	if len(rep.Requests) == 0 {
		return nil, nil, fmt.Errorf("sweep: the validation run kept no per-request records")
	}
	// Sorted as (id, e2e) pairs, not whole records: a fifth of the bytes to move.
	type pair struct {
		id  int
		e2e float64
	}
	recs := make([]pair, len(rep.Requests))
	for i, r := range rep.Requests {
		recs[i] = pair{r.ID, r.E2EMS}
	}
	slices.SortFunc(recs, func(a, b pair) int { return a.id - b.id })
	ids, e2e = make([]int, len(recs)), make([]float64, len(recs))
	for i, r := range recs {
		if r.id < 0 || i > 0 && recs[i-1].id == r.id {
			return nil, nil, fmt.Errorf("sweep: per-request record with id %d (want non-negative ids, each once)", r.id)
		}
		ids[i], e2e[i] = r.id, r.e2e
	}
	return ids, e2e, nil
}
