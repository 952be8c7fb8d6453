package sweep

import (
	"context"
	"sync"

	"github.com/routerlab/routerlab/engine"
)

// Validation replays run on the whole trace, each worth about ten search evaluations. Run one
// wave after the search, three of them on two cores leave a core idle for a whole replay, and
// the search's own round tails and model fits leave cores idle too. The speculator fills those
// idle slots with the validation replays that the search's best so far implies, and Validate
// then takes a replay already run (or running) for the same engine config and request count
// instead of running it again. A replay's report depends only on those two, so a sweep's
// results are byte-identical whether or how much it speculates.
//
// Search and validation jobs take a slot of the same pool (at most one simulation per core);
// a speculative replay starts only when a slot is free and no search job is waiting for one,
// and it is cancelled as soon as the best so far no longer implies it. During the search the
// speculator leaves as many of the implied replays as there are slots for the validation
// phase (the best's own replay is among them), so that the last wave keeps every core busy:
// on 2 cores round_robin's replay overlaps the search and default_kv's the best's.

// speculator is the slot pool of a sweep and its speculative validation replays.
type speculator struct {
	sim   Simulator
	ctx   context.Context
	slots int
	mu    sync.Mutex
	cond  *sync.Cond
	free  int // idle slots
	// pending counts search and validation jobs handed to runAll and not yet started;
	// speculation waits while any are.
	pending int
	wanted  []runJob // replays the speculator may start, in order
	runs    []*specRun
	wg      sync.WaitGroup
}

// specRun is one speculative replay.
type specRun struct {
	job    runJob
	done   chan struct{} // closed when rep and err are set
	rep    *engine.Report
	err    error
	cancel context.CancelFunc
}

// newSpeculator returns a pool of slots simulations for sim; its replays end with ctx.
func newSpeculator(ctx context.Context, sim Simulator, slots int) *speculator {
	g := &speculator{sim: sim, ctx: ctx, slots: slots, free: slots}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// stop cancels the replays still running and waits for them.
func (g *speculator) stop() {
	g.mu.Lock()
	g.wanted = nil
	for _, r := range g.runs {
		r.cancel()
	}
	g.mu.Unlock()
	g.wg.Wait()
}

// wantDuringSearch sets the replays of the best so far that may start during the search:
// all but as many as there are slots, which the validation phase then runs together with
// whatever is left of the search's work.
func (g *speculator) wantDuringSearch(s *Search, sim Simulator) {
	_, _, jobs, err := validationPlan(s, &s.Evaluations[s.bestSoFar()], sim)
	if err != nil {
		return // Validate reports it
	}
	g.want(jobs[:max(0, len(jobs)-g.slots)])
}

// enqueue announces n jobs about to ask for slots (negative: jobs withdrawn).
func (g *speculator) enqueue(n int) {
	g.mu.Lock()
	g.pending += n
	g.mu.Unlock()
}

// acquire takes a slot for an announced job, waiting for one to be free.
func (g *speculator) acquire() {
	g.mu.Lock()
	for g.free == 0 {
		g.cond.Wait()
	}
	g.free--
	g.pending--
	g.mu.Unlock()
}

// release gives a slot back.
func (g *speculator) release() {
	g.mu.Lock()
	g.free++
	g.startLocked()
	g.cond.Broadcast()
	g.mu.Unlock()
}

// want sets the replays the speculator may start, cancelling those it started that are no
// longer among them.
func (g *speculator) want(jobs []runJob) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.wanted = jobs
	kept := g.runs[:0]
	for _, r := range g.runs {
		if indexJob(jobs, r.job) < 0 {
			r.cancel()
			continue
		}
		kept = append(kept, r)
	}
	clear(g.runs[len(kept):])
	g.runs = kept
	g.startLocked()
}

// indexJob is the position of job j in jobs, or -1.
func indexJob(jobs []runJob, j runJob) int {
	for i, x := range jobs {
		if x == j {
			return i
		}
	}
	return -1
}

// startLocked starts wanted replays on free slots while no announced job waits.
func (g *speculator) startLocked() {
	for _, j := range g.wanted {
		if g.free == 0 || g.pending > 0 || g.ctx.Err() != nil {
			return
		}
		if g.find(j) != nil {
			continue
		}
		ctx, cancel := context.WithCancel(g.ctx)
		r := &specRun{job: j, done: make(chan struct{}), cancel: cancel}
		g.runs = append(g.runs, r)
		g.free--
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			rep, err := g.sim.Run(ctx, j.cfg, j.requests)
			g.mu.Lock()
			r.rep, r.err = rep, err
			close(r.done)
			g.mu.Unlock()
			g.release()
		}()
	}
}

// find is the started replay of job j, or nil.
func (g *speculator) find(j runJob) *specRun {
	for _, r := range g.runs {
		if r.job == j {
			return r
		}
	}
	return nil
}

// result waits for the speculative replay of job j and returns it; ok is false when none was
// started (or it was cancelled), and the caller then runs the job itself.
func (g *speculator) result(ctx context.Context, j runJob) (rep *engine.Report, ok bool, err error) {
	g.mu.Lock()
	r := g.find(j)
	g.mu.Unlock()
	if r == nil {
		return nil, false, nil
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, true, ctx.Err()
	}
	return r.rep, true, r.err
}
