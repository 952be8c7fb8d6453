package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// fakeJobs is a registry with one listed sweep whose events are fakeSweeper's.
type fakeJobs struct {
	control   bool
	started   *int
	cancelled *[]int
}

func (f fakeJobs) CanControl() bool { return f.control }
func (f fakeJobs) Start(Knobs) (int, error) {
	*f.started++
	return 1, nil
}
func (f fakeJobs) Cancel(id int) error {
	*f.cancelled = append(*f.cancelled, id)
	return nil
}
func (f fakeJobs) Watch(ctx context.Context, _ int, emit func(SweepEvent)) error {
	return fakeSweeper{}.Sweep(ctx, Knobs{}, emit)
}
func (f fakeJobs) List(_ context.Context, emit func([]Job)) error {
	emit([]Job{{ID: 1, Experiment: "test", Starter: "alice SHA256:abc", State: JobRunning, Phase: "round 2 · 5 evaluated",
		Evaluations: 5, Best: &SweepEval{Round: 2, Knobs: Knobs{Mode: "kv_router", Credit: 1, Scale: 16, Concurrency: 32}, Value: 2120}, Dir: "runs/serve-1",
		Mine: f.control}})
	return nil
}

func serverExplorer(t *testing.T, control bool) (*Model, fakeJobs) {
	t.Helper()
	jobs := fakeJobs{control: control, started: new(int), cancelled: new([]int)}
	o := testOptions(fakeSim{workers: 8, windows: 90}, fakeSweeper{})
	o.Jobs = jobs
	m := New(o)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	drive(t, m, m.Init())
	return m, jobs
}

// TestServerSweepsOperator: with a registry, s starts a server sweep and attaches to it, the
// sweep pane's title names it, d detaches (clearing the pane), enter in the Sweeps pane
// attaches again and q leaves without cancelling.
func TestServerSweepsOperator(t *testing.T) {
	m, jobs := serverExplorer(t, true)
	m.keyAndSettle(t, "s")
	if *jobs.started != 1 || m.attached != 1 {
		t.Fatalf("after s: %d started, attached %d", *jobs.started, m.attached)
	}
	view := ansi.Strip(m.render())
	if !strings.Contains(view, "server sweep #1 · running · started by alice SHA256:abc") || len(m.sweep.rows) == 0 {
		t.Fatalf("attached sweep not shown:\n%s", view)
	}
	m.keyAndSettle(t, "d")
	if m.attached != 0 || len(m.sweep.rows) != 0 || m.common.Keys.Detach.Enabled() {
		t.Errorf("after d: attached %d, %d rows, detach key enabled %v", m.attached, len(m.sweep.rows), m.common.Keys.Detach.Enabled())
	}
	m.keyAndSettle(t, "tab")
	if m.focus != paneJobs {
		t.Fatalf("tab from Sweep focused %v", m.focus)
	}
	m.keyAndSettle(t, "enter")
	if m.attached != 1 || m.focus != paneSweep {
		t.Fatalf("enter in Sweeps: attached %d, focus %v", m.attached, m.focus)
	}
	m.keyAndSettle(t, "q") // leaving detaches; the sweep is the server's
	if len(*jobs.cancelled) != 0 {
		t.Errorf("quitting cancelled server sweeps %v", *jobs.cancelled)
	}
}

// TestServerSweepsViewer: a viewer's explorer offers neither s nor esc, lists the server's
// sweeps in their own pane and attaches with enter.
func TestServerSweepsViewer(t *testing.T) {
	m, jobs := serverExplorer(t, false)
	if m.common.Keys.StartSweep.Enabled() {
		t.Error("a viewer's explorer offers s")
	}
	m.keyAndSettle(t, "s")
	if *jobs.started != 0 {
		t.Fatal("a viewer's s started a sweep")
	}
	m.keyAndSettle(t, "tab")
	m.keyAndSettle(t, "tab")
	m.keyAndSettle(t, "tab") // the Sweep pane
	if view := ansi.Strip(m.render()); !strings.Contains(view, "operators start sweeps; tab to the Sweeps pane") {
		t.Errorf("a viewer's idle Sweep pane does not say how to watch:\n%s", view)
	}
	m.keyAndSettle(t, "tab")
	view := ansi.Strip(m.render())
	for _, want := range []string{"Sweeps on this server", "alice SHA256:abc", "round 2 · 5 evaluated", "2120.0 kv_router 1.0/16.0/0.0", "run directory runs/serve-1", "best so far (e2e ms)", "enter watch this sweep"} {
		if !strings.Contains(view, want) {
			t.Errorf("Sweeps pane lacks %q:\n%s", want, view)
		}
	}
	m.keyAndSettle(t, "enter")
	if m.attached != 1 || len(m.sweep.rows) == 0 {
		t.Fatalf("enter: attached %d with %d rows", m.attached, len(m.sweep.rows))
	}
	if m.common.Keys.CancelSweep.Enabled() {
		t.Error("a viewer's explorer offers esc on a server sweep")
	}
	m.keyAndSettle(t, "esc")
	if len(*jobs.cancelled) != 0 {
		t.Error("a viewer's esc asked to cancel")
	}
}

// An operator who reconnects is told which of their sweeps still run and how to watch them;
// a session that did not start them is not.
func TestServerSweepsAnnouncedOnReconnect(t *testing.T) {
	op, _ := serverExplorer(t, true)
	if got := ansi.Strip(op.helpView()); !strings.Contains(got, "your sweep #1 (round 2 · 5 evaluated) is still running on the server") {
		t.Fatalf("the starter's session: %q", got)
	}
	viewer, _ := serverExplorer(t, false)
	if got := ansi.Strip(viewer.helpView()); strings.Contains(got, "your sweep") {
		t.Fatalf("another session: %q", got)
	}
}
