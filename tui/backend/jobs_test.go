package backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/tui"
)

// testJobs is a registry of small sweeps (a few hundred ms each) writing under a temp dir.
func testJobs(t *testing.T, slots int) (*Jobs, tui.Knobs) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs sweeps")
	}
	sim, sw := smallSweeper(t)
	j, err := NewJobs(sw, "test", t.TempDir(), slots)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Shutdown() })
	return j, sim.Initial()
}

var (
	alice = Caller{Name: "alice", Operator: true}
	carol = Caller{Name: "carol", Operator: true}
	bob   = Caller{Name: "bob"} // a viewer
)

func list(j *Jobs) []tui.Job {
	ctx, cancel := context.WithCancel(context.Background())
	var l []tui.Job
	j.For(bob).List(ctx, func(x []tui.Job) { l = x; cancel() })
	return l
}

// TestJobsWatchersSeeTheSameSweep: a watcher from the start and one attaching mid-sweep get
// the same events in the same order, through validation; the finished sweep stays listed
// with its run directory.
func TestJobsWatchersSeeTheSameSweep(t *testing.T) {
	j, at := testJobs(t, 1)
	id, err := j.For(alice).Start(at)
	if err != nil {
		t.Fatal(err)
	}
	type watched struct {
		events []tui.SweepEvent
		err    error
	}
	early := make(chan watched, 1)
	firstSeen := make(chan struct{})
	go func() {
		var w watched
		w.err = j.For(alice).Watch(context.Background(), id, func(ev tui.SweepEvent) {
			w.events = append(w.events, ev)
			if len(w.events) == 1 {
				close(firstSeen)
			}
		})
		early <- w
	}()
	<-firstSeen
	var late watched
	late.err = j.For(bob).Watch(context.Background(), id, func(ev tui.SweepEvent) { late.events = append(late.events, ev) })
	first := <-early
	if first.err != nil || late.err != nil {
		t.Fatalf("watch errors %v, %v", first.err, late.err)
	}
	if last := first.events[len(first.events)-1]; len(first.events) < 3 || last.Progress.Phase != sweep.PhaseDone || len(last.Validation) != 3 {
		t.Fatalf("%d events ending with %+v, want evaluations through the validation", len(first.events), last)
	}
	if !slices.EqualFunc(first.events, late.events, func(a, b tui.SweepEvent) bool {
		return a.Progress == b.Progress && (a.Eval == b.Eval || (a.Eval != nil && b.Eval != nil && *a.Eval == *b.Eval)) &&
			len(a.Validation) == len(b.Validation)
	}) {
		t.Errorf("the two watchers saw different event sequences:\n%v\n%v", first.events, late.events)
	}
	l := list(j)
	if len(l) != 1 || l[0].State != tui.JobDone || l[0].Starter != "alice" || l[0].Best == nil {
		t.Fatalf("list %+v", l)
	}
	evals := 0
	for _, ev := range first.events {
		if ev.Eval != nil {
			evals++
			if ev.Eval.Value < l[0].Best.Value {
				t.Errorf("listed best %v is not the best evaluation (%v)", l[0].Best.Value, ev.Eval.Value)
			}
		}
	}
	if l[0].Evaluations != evals {
		t.Errorf("listed %d evaluations, watchers saw %d", l[0].Evaluations, evals)
	}
	if _, err := os.Stat(filepath.Join(l[0].Dir, sweep.LedgerName)); err != nil {
		t.Errorf("run directory: %v", err)
	}
}

// TestJobsRolesAndQueue: viewers can neither start nor cancel; with one slot a second sweep
// waits queued; an operator cancels the queued one at once and the running one promptly,
// and their watchers end with ErrSweepCancelled.
func TestJobsRolesAndQueue(t *testing.T) {
	j, at := testJobs(t, 1)
	if _, err := j.For(bob).Start(at); !errors.Is(err, ErrViewer) {
		t.Errorf("viewer start: err %v, want ErrViewer", err)
	}
	first, err := j.For(alice).Start(at)
	if err != nil {
		t.Fatal(err)
	}
	second, err := j.For(carol).Start(at)
	if err != nil {
		t.Fatal(err)
	}
	if l := list(j); l[0].State != tui.JobRunning || l[1].State != tui.JobQueued || l[0].At != at {
		t.Fatalf("states %s, %s; want running, queued", l[0].State, l[1].State)
	}
	if err := j.For(bob).Cancel(first); !errors.Is(err, ErrViewer) {
		t.Errorf("viewer cancel: err %v, want ErrViewer", err)
	}
	if err := j.For(alice).Cancel(second); err != nil { // an operator, not the starter
		t.Fatal(err)
	}
	if err := j.For(bob).Watch(context.Background(), second, func(tui.SweepEvent) {}); !errors.Is(err, tui.ErrSweepCancelled) {
		t.Errorf("watching the cancelled queued sweep: err %v", err)
	}
	if err := j.For(carol).Cancel(first); err != nil {
		t.Fatal(err)
	}
	if err := j.For(bob).Watch(context.Background(), first, func(tui.SweepEvent) {}); !errors.Is(err, tui.ErrSweepCancelled) {
		t.Errorf("watching the cancelled running sweep: err %v", err)
	}
	if l := list(j); l[0].State != tui.JobCancelled || l[1].State != tui.JobCancelled {
		t.Errorf("states %s, %s; want cancelled, cancelled", l[0].State, l[1].State)
	}
	// The slot is free again.
	third, err := j.For(alice).Start(at)
	if err != nil {
		t.Fatal(err)
	}
	if l := list(j); l[third-1].State != tui.JobRunning {
		t.Errorf("a new sweep after both were cancelled is %s, want running", l[third-1].State)
	}
}

// Two servers sharing --runs, each starting its first sweep in the same second, write two
// directories.
func TestRunDirsNeverCollide(t *testing.T) {
	runs := t.TempDir()
	a, err := newRunDir(runs, "serve-20260101-000000-1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := newRunDir(runs, "serve-20260101-000000-1")
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Base(b) != "serve-20260101-000000-1-2" {
		t.Fatalf("run directories %s and %s, want the second suffixed -2", a, b)
	}
	if st, err := os.Stat(b); err != nil || !st.IsDir() {
		t.Fatalf("%s not created: %v", b, err)
	}
}

// A session's list marks the sweeps its own caller started (what the explorer announces on
// reconnect), and no one else's.
func TestJobsListMarksTheCallersOwnSweeps(t *testing.T) {
	j, at := testJobs(t, 1)
	if _, err := j.For(alice).Start(at); err != nil {
		t.Fatal(err)
	}
	as := func(c Caller) tui.Job {
		ctx, cancel := context.WithCancel(context.Background())
		var l []tui.Job
		j.For(c).List(ctx, func(x []tui.Job) { l = x; cancel() })
		return l[0]
	}
	if !as(Caller{Name: "alice", Operator: true}).Mine || as(carol).Mine || as(bob).Mine {
		t.Fatalf("Mine as alice %v, carol %v, bob %v", as(alice).Mine, as(carol).Mine, as(bob).Mine)
	}
}
