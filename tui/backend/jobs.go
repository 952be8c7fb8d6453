package backend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/routerlab/routerlab/tui"
)

// ListEvery is the least time between two updates of a session's list of sweeps.
const ListEvery = 250 * time.Millisecond

// Caller is who a session is, for the sweep registry: its name in lists and logs, and
// whether it may start and cancel sweeps.
type Caller struct {
	Name     string // e.g. "alice SHA256:…": SSH user and key fingerprint
	Operator bool
}

// ErrViewer refuses a viewer's request to start or cancel a sweep.
var ErrViewer = errors.New("viewers may watch sweeps, not start or cancel them")

// Jobs is the server's registry of sweeps (routerlab serve). Sweeps belong to it, not to
// the session that started them: each runs in its own goroutine, writing its run directory,
// until it ends or is cancelled, whoever is watching. At most `slots` run at once; the rest
// wait in order. Every event of a sweep is kept, so a session attaching late sees the sweep
// from its first evaluation, and all watchers see the same events in the same order; a slow
// watcher only falls behind, it never holds the sweep up.
type Jobs struct {
	sweeper    *Sweeper
	experiment string
	runs       string // parent of the run directories
	slots      int

	wg      sync.WaitGroup // running sweeps' goroutines
	mu      sync.Mutex
	list    []*job
	running int
	changed chan struct{} // closed (and replaced) at every change: wakes watchers and lists
}

type job struct {
	info    tui.Job
	starter Caller
	events  []tui.SweepEvent        // append-only
	cancel  context.CancelCauseFunc // the cause is the reason progress.json records
	err     error                   // when finished: nil, tui.ErrSweepCancelled or the failure
}

// NewJobs builds the registry for sweeps of sw's experiment (named experiment in lists),
// each writing a new directory under runs, at most slots at once.
func NewJobs(sw *Sweeper, experiment, runs string, slots int) (*Jobs, error) {
	if slots < 1 {
		return nil, fmt.Errorf("sweep slots %d: want at least 1", slots)
	}
	return &Jobs{sweeper: sw, experiment: experiment, runs: runs, slots: slots, changed: make(chan struct{})}, nil
}

// changedLocked wakes everyone waiting on the registry; j.mu is held.
func (j *Jobs) changedLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// For returns the registry as the session of c sees it.
func (j *Jobs) For(c Caller) tui.Jobs { return session{j, c} }

// ErrServerStopped is why the sweeps a stopping server cancels stopped, as their
// progress.json records it.
var ErrServerStopped = errors.New("routerlab serve stopped")

// Shutdown cancels every queued and running sweep (the server is stopping), waits for the
// running ones to close their files, and returns those it cancelled while running: their
// run directories hold ledgers that `sweep --resume` continues.
func (j *Jobs) Shutdown() []tui.Job {
	j.mu.Lock()
	var stopped []tui.Job
	for _, jb := range j.list {
		if !jb.info.State.Finished() {
			if jb.info.State == tui.JobRunning {
				stopped = append(stopped, jb.info)
			}
			j.cancelLocked(jb, ErrServerStopped)
		}
	}
	j.mu.Unlock()
	j.wg.Wait()
	return stopped
}

// ResumeSets are the --set overrides that make the experiment of a sweep started at knobs
// at, for `routerlab sweep --resume` of its run directory.
func (j *Jobs) ResumeSets(at tui.Knobs) ([]string, error) { return j.sweeper.ResumeSets(at) }

func (j *Jobs) start(c Caller, at tui.Knobs) (int, error) {
	if !c.Operator {
		return 0, ErrViewer
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	id := len(j.list) + 1
	dir, err := newRunDir(j.runs, fmt.Sprintf("serve-%s-%d", time.Now().UTC().Format("20060102-150405"), id))
	if err != nil {
		return 0, err
	}
	jb := &job{starter: c, info: tui.Job{
		ID: id, Experiment: j.experiment, Starter: c.Name, State: tui.JobQueued, At: at, Phase: "queued", Dir: dir,
	}}
	j.list = append(j.list, jb)
	j.launchLocked()
	j.changedLocked()
	return id, nil
}

// launchLocked starts queued sweeps, oldest first, while slots are free.
func (j *Jobs) launchLocked() {
	for _, jb := range j.list {
		if j.running >= j.slots {
			return
		}
		if jb.info.State != tui.JobQueued {
			continue
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		jb.cancel = cancel
		jb.info.State, jb.info.Phase = tui.JobRunning, "starting"
		j.running++
		j.wg.Add(1)
		go j.run(ctx, jb)
	}
}

func (j *Jobs) run(ctx context.Context, jb *job) {
	defer j.wg.Done()
	better := j.better()
	err := j.sweeper.WritingTo(jb.info.Dir).Sweep(ctx, jb.info.At, func(ev tui.SweepEvent) {
		j.mu.Lock()
		defer j.mu.Unlock()
		jb.events = append(jb.events, ev)
		if e := ev.Eval; e != nil {
			jb.info.Evaluations++
			if jb.info.Best == nil || better(e.Value, jb.info.Best.Value) {
				jb.info.Best = e
			}
		}
		if jb.info.State == tui.JobRunning {
			jb.info.Phase = ev.Progress.String()
		}
		j.changedLocked()
	})
	j.mu.Lock()
	defer j.mu.Unlock()
	jb.cancel(nil)
	switch {
	case jb.info.State == tui.JobCancelled:
		jb.err = tui.ErrSweepCancelled
	case err != nil:
		jb.info.State, jb.info.Err, jb.err = tui.JobFailed, err.Error(), err
	default:
		jb.info.State = tui.JobDone
	}
	j.running--
	j.launchLocked()
	j.changedLocked()
}

// better compares objective values the way the sweep's goal ranks them.
func (j *Jobs) better() func(a, b float64) bool {
	info, err := j.sweeper.Info()
	if err == nil && info.HigherIsBetter {
		return func(a, b float64) bool { return a > b }
	}
	return func(a, b float64) bool { return a < b }
}

func (j *Jobs) find(id int) (*job, error) {
	if id < 1 || id > len(j.list) {
		return nil, fmt.Errorf("no server sweep #%d", id)
	}
	return j.list[id-1], nil
}

func (j *Jobs) cancel(c Caller, id int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	jb, err := j.find(id)
	if err != nil {
		return err
	}
	if !c.Operator && c != jb.starter {
		return ErrViewer
	}
	if jb.info.State.Finished() {
		return nil
	}
	j.cancelLocked(jb, fmt.Errorf("cancelled by %s", c.Name))
	j.changedLocked()
	return nil
}

// cancelLocked stops a sweep: a queued one ends at once, a running one when its goroutine
// returns (which then frees its slot).
func (j *Jobs) cancelLocked(jb *job, cause error) {
	queued := jb.info.State == tui.JobQueued
	jb.info.State, jb.info.Phase = tui.JobCancelled, "cancelled after "+fmt.Sprint(jb.info.Evaluations)+" evaluations"
	if queued {
		jb.err = tui.ErrSweepCancelled
		return
	}
	jb.cancel(cause)
}

func (j *Jobs) watch(ctx context.Context, id int, emit func(tui.SweepEvent)) error {
	sent := 0
	for {
		j.mu.Lock()
		jb, err := j.find(id)
		if err != nil {
			j.mu.Unlock()
			return err
		}
		// Events are append-only: the slice seen here never changes after the unlock.
		evs := jb.events[sent:]
		finished := jb.info.State.Finished() && (jb.err != nil || jb.info.State == tui.JobDone)
		result, changed := jb.err, j.changed
		j.mu.Unlock()
		for _, ev := range evs {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			emit(ev)
		}
		sent += len(evs)
		if finished {
			return result
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (j *Jobs) listen(ctx context.Context, c Caller, emit func([]tui.Job)) error {
	for {
		j.mu.Lock()
		list := make([]tui.Job, len(j.list))
		for i, jb := range j.list {
			list[i] = jb.info
			list[i].Mine = jb.starter == c
		}
		changed := j.changed
		j.mu.Unlock()
		emit(list)
		// The list is an overview: at most one update per ListEvery, however fast evaluations
		// land, so fifty idle sessions do not redraw at every one.
		select {
		case <-time.After(ListEvery):
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// session is the registry bound to one caller.
type session struct {
	jobs   *Jobs
	caller Caller
}

func (s session) CanControl() bool                { return s.caller.Operator }
func (s session) Start(at tui.Knobs) (int, error) { return s.jobs.start(s.caller, at) }
func (s session) Cancel(id int) error             { return s.jobs.cancel(s.caller, id) }
func (s session) Watch(ctx context.Context, id int, emit func(tui.SweepEvent)) error {
	return s.jobs.watch(ctx, id, emit)
}
func (s session) List(ctx context.Context, emit func([]tui.Job)) error {
	return s.jobs.listen(ctx, s.caller, emit)
}

// newRunDir creates runs/name, or runs/name-2, -3, … when that exists: the creation is atomic,
// so servers sharing --runs never write one directory.
func newRunDir(runs, name string) (string, error) {
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(runs, name)
	for k := 2; ; k++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		dir = filepath.Join(runs, fmt.Sprintf("%s-%d", name, k))
	}
}
