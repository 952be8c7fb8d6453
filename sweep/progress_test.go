package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestProgressWalksPhasesWithCountsAndStopReason(t *testing.T) {
	f := seedFile(t, "validate.requests=100")
	ch := make(chan Event)
	var events []Event
	got := make(chan struct{})
	go func() {
		defer close(got)
		for ev := range ch {
			events = append(events, ev)
		}
	}()
	res, err := Run(context.Background(), f, newFakeSim(f), Options{Progress: ch})
	close(ch)
	<-got
	if err != nil {
		t.Fatal(err)
	}
	// Phases appear in order, each once, and within a phase Done counts up to Total.
	var phases []Phase
	last := map[Phase]Progress{}
	for _, ev := range events {
		p := ev.Progress
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			if slices.Contains(phases, p.Phase) {
				t.Fatalf("phase %s again after %v", p.Phase, phases)
			}
			phases = append(phases, p.Phase)
		} else if p.Done != last[p.Phase].Done+1 && p.Phase != PhaseDone {
			t.Errorf("%s: done %d after %d", p.Phase, p.Done, last[p.Phase].Done)
		}
		if p.Done > p.Total {
			t.Errorf("%s: done %d of %d", p.Phase, p.Done, p.Total)
		}
		last[p.Phase] = p
	}
	if want := []Phase{PhaseSearch, PhaseSaturation, PhaseValidation, PhaseDone}; !slices.Equal(phases, want) {
		t.Fatalf("phases %v, want %v", phases, want)
	}
	s := res.Search
	if p := last[PhaseSearch]; p.Done != len(s.Evaluations) || p.Rounds != 6 || p.Total != 60 || p.Round != s.Evaluations[len(s.Evaluations)-1].Round {
		t.Errorf("last search progress %+v, want %d evaluations of 60 in 6 rounds", p, len(s.Evaluations))
	}
	sat := 0
	for _, r := range res.Validation.Saturation {
		if !r.Searched {
			sat += r.Runs
		}
	}
	if p := last[PhaseSaturation]; p.Done != sat || p.Total != sat || sat == 0 {
		t.Errorf("last saturation progress %+v, want %d runs", p, sat)
	}
	if p := last[PhaseValidation]; p.Done != 3 || p.Total != 3 || p.String() != "validation 3/3" {
		t.Errorf("last validation progress %+v (%s), want 3/3", p, p)
	}
	done := last[PhaseDone]
	r := s.Evaluations[len(s.Evaluations)-1].Round
	if len(s.Evaluations) >= 60 || done.Stop != converged(r, 6) || done.Round != r || done.Done != len(s.Evaluations) {
		t.Errorf("done %+v after %d evaluations; want converged at round %d of 6", done, len(s.Evaluations), r)
	}
	if want := fmt.Sprintf("done · converged at round %d of 6", r); done.String() != want {
		t.Errorf("done reads %q, want %q", done, want)
	}
}

func TestProgressStopReasons(t *testing.T) {
	f := seedFile(t, "router_temperature=[0.0]", "prefill_load_scale=[1.0, 2.0]", "overlap_score_credit=[1.0]",
		"sweep.algorithm=grid", "validate.enabled=false")
	res, err := Run(context.Background(), f, newFakeSim(f), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Search.Progress(); p.Stop != StopExhausted || p.String() != "done · every configuration evaluated" {
		t.Errorf("grid over the whole space: %+v", p)
	}
	f = seedFile(t, "sweep.algorithm=random", "sweep.max_rounds=2", "sweep.candidates_per_round=3", "validate.enabled=false")
	res, err = Run(context.Background(), f, newFakeSim(f), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Search.Progress(); p.Stop != StopBudget || p.Done != 6 || p.Round != 2 {
		t.Errorf("random search of 2 rounds × 3: %+v", p)
	}
	c := Progress{Phase: PhaseSearch, Round: 2, Rounds: 6, Done: 14, Total: 60}
	if c.String() != "search round 2/6 · evaluations 14/60" || c.Cancelled().String() != "done · cancelled" {
		t.Errorf("%s / %s", c, c.Cancelled())
	} // A remote fleet's status follows the phase while the sweep runs.
	c.Remote = "nats: 2 workers connected, 8 tasks in flight, 14 results"
	if c.String() != "search round 2/6 · evaluations 14/60 · nats: 2 workers connected, 8 tasks in flight, 14 results" ||
		c.Cancelled().String() != "done · cancelled" {
		t.Errorf("%s / %s", c, c.Cancelled())
	}
}

// A sweep stopped before done says so in progress.json, with the reason, keeping its counts:
// interrupted by a cancel (with its cause), failed by an error.
func TestProgressRecordsInterruptedAndFailed(t *testing.T) {
	f := seedFile(t, "validate.requests=100")
	dir := t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan Event)
	go func() {
		n := 0
		for ev := range ch {
			if ev.Key != "" {
				if n++; n == 5 {
					cancel(errors.New("the server stopped"))
				}
			}
		}
	}()
	_, err := Run(ctx, f, newFakeSim(f), Options{Out: dir, Progress: ch})
	close(ch)
	var stopped *Interrupted
	if !errors.As(err, &stopped) {
		t.Fatalf("Run: %v, want interrupted", err)
	}
	rec, err := ReadProgress(dir)
	if err != nil || rec == nil {
		t.Fatalf("progress.json: %v", err)
	}
	if rec.Phase != PhaseInterrupted || rec.Stop != "the server stopped" || rec.Done < 5 || rec.Target != "e2e_latency" ||
		rec.String() != "interrupted · the server stopped" {
		t.Fatalf("progress.json after the cancel: %+v (%s)", rec, rec.Progress)
	}

	failing := t.TempDir()
	sim := newFakeSim(f)
	sim.failAfter = 3
	if _, err := Run(context.Background(), f, sim, Options{Out: failing}); err == nil {
		t.Fatal("Run of a failing simulator succeeded")
	}
	if rec, err := ReadProgress(failing); err != nil || rec == nil || rec.Phase != PhaseFailed || !strings.Contains(rec.Stop, errInterrupted.Error()) {
		t.Fatalf("progress.json after a failure: %+v, %v", rec, err)
	}
}

// Writing tells a held lock from a free one without leaving a lock file behind.
func TestWritingSeesTheLock(t *testing.T) {
	dir := t.TempDir()
	if w, err := Writing(dir); err != nil || w {
		t.Fatalf("a directory never locked: writing %v, %v", w, err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockName)); !os.IsNotExist(err) {
		t.Fatalf("Writing created the lock file: %v", err)
	}
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := Writing(dir); err != nil || !w {
		t.Fatalf("a held lock: writing %v, %v", w, err)
	}
	l.Unlock()
	if w, err := Writing(dir); err != nil || w {
		t.Fatalf("a released lock: writing %v, %v", w, err)
	}
	if l, err := LockDir(dir); err != nil {
		t.Fatalf("Writing left the directory locked: %v", err)
	} else {
		l.Unlock()
	}
}
