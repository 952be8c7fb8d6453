package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// watched wraps the explorer for teatest: after each Update, on the program's goroutine, it
// checks the next of a list of conditions and signals each one reached, so the test can
// send its next key once the explorer is in a known state — without reading the model from
// another goroutine and without parsing the renderer's cell-diffed output.
type watched struct {
	*Model
	conds   []func(*Model) bool
	next    int
	reached chan int
}

func watch(m *Model, conds ...func(*Model) bool) *watched {
	return &watched{Model: m, conds: conds, reached: make(chan int, len(conds))}
}

func (w *watched) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := w.Model.Update(msg)
	for w.next < len(w.conds) && w.conds[w.next](w.Model) {
		w.reached <- w.next
		w.next++
	}
	return w, cmd
}

func (w *watched) await(t *testing.T, stage int) {
	t.Helper()
	select {
	case got := <-w.reached:
		if got != stage {
			t.Fatalf("reached stage %d, want %d", got, stage)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("stage %d not reached in 10 s", stage)
	}
}

func resultsAtLeast(n int) func(*Model) bool {
	return func(m *Model) bool { return m.results >= n && !m.running }
}

// golden quits the program and compares the explorer's screen, escape sequences stripped,
// with testdata/<test name>.golden (go test ./tui -run Golden -update rewrites them).
func golden(t *testing.T, tm *teatest.TestModel) {
	t.Helper()
	tm.Send(press("q"))
	w := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*watched)
	teatest.RequireEqualOutput(t, []byte(ansi.Strip(w.render())+"\n"))
}

// TestGoldenModeChange80x24: the smallest supported window after `m` switched the first
// result (kv_router) to round_robin.
func TestGoldenModeChange80x24(t *testing.T) {
	w := watch(New(testOptions(fakeSim{workers: 8, windows: 90}, fakeSweeper{})), resultsAtLeast(1), resultsAtLeast(2))
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(80, 24))
	w.await(t, 0)
	tm.Send(press("m"))
	w.await(t, 1)
	golden(t, tm)
}

// TestGoldenSweep100x30: the sweep pane after a finished sweep and its validation.
func TestGoldenSweep100x30(t *testing.T) {
	w := watch(New(testOptions(fakeSim{workers: 8, windows: 90}, fakeSweeper{})), resultsAtLeast(1),
		func(m *Model) bool { return m.sweep.phase == sweepDone })
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(100, 30))
	w.await(t, 0)
	tm.Send(press("s"))
	w.await(t, 1)
	golden(t, tm)
}

// TestGoldenFullHelp120x34: a wide window with the full help, Fleet focused, queued-prefill
// heatmap.
func TestGoldenFullHelp120x34(t *testing.T) {
	w := watch(New(testOptions(fakeSim{workers: 8, windows: 90}, fakeSweeper{})), resultsAtLeast(1),
		func(m *Model) bool { return m.help.ShowAll })
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(120, 34))
	w.await(t, 0)
	for _, k := range []string{"tab", "tab", "v", "?"} {
		tm.Send(press(k))
	}
	w.await(t, 1)
	golden(t, tm)
}
