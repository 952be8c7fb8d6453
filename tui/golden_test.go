package tui

import (
	"fmt"
	"strings"
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
func golden(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	tm.Send(press("q"))
	w := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*watched)
	screen := ansi.Strip(w.render())
	teatest.RequireEqualOutput(t, []byte(screen+"\n"))
	return screen
}

// checkScreen asserts what every screen of the explorer has: each pane's title, the help
// hint, and no line wider than the terminal nor more lines than it has.
func checkScreen(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) > h {
		t.Errorf("%d lines on a %d-line terminal", len(lines), h)
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			t.Errorf("line %d is %d cells wide on a %d-column terminal: %q", i, ansi.StringWidth(l), w, l)
		}
	}
	for _, want := range []string{"Knobs", "Metrics", "Fleet", "Sweep", "? help", "q quit"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
}

// TestGoldenFleetSizes: at each supported size and fleet size, the screen after `m`
// switched the first result (kv_router) to round_robin: the heatmaps group workers to fit.
func TestGoldenFleetSizes(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 60}} {
		for _, workers := range []int{2, 8, 64, 512} {
			t.Run(fmt.Sprintf("%dx%d/%dworkers", size[0], size[1], workers), func(t *testing.T) {
				w := watch(New(testOptions(fakeSim{workers: workers, windows: 90}, fakeSweeper{})), resultsAtLeast(1), resultsAtLeast(2))
				tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(size[0], size[1]))
				w.await(t, 0)
				tm.Send(press("m"))
				w.await(t, 1)
				screen := golden(t, tm)
				checkScreen(t, screen, size[0], size[1])
				if workers > 8 && (!strings.Contains(screen, "a row") || !strings.Contains(screen, "(row max)")) {
					t.Errorf("%d workers drawn without grouping:\n%s", workers, screen)
				}
			})
		}
	}
}

// TestGoldenTooSmall: below 80×24 the explorer says how much room it needs.
func TestGoldenTooSmall(t *testing.T) {
	w := watch(New(testOptions(fakeSim{workers: 8, windows: 90}, fakeSweeper{})), resultsAtLeast(1))
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(79, 24))
	w.await(t, 0)
	screen := golden(t, tm)
	if !strings.Contains(screen, "terminal too small") || !strings.Contains(screen, "need 80×24, have 79×24") || !strings.Contains(screen, "q quit") {
		t.Fatalf("too-small screen:\n%s", screen)
	}
}

// TestGoldenSweep120x40: the sweep pane after a finished sweep: its stop reason, the table,
// the validation and the convergence chart under it.
func TestGoldenSweep120x40(t *testing.T) {
	w := watch(New(testOptions(fakeSim{workers: 8, windows: 90}, fakeSweeper{})), resultsAtLeast(1),
		func(m *Model) bool { return m.sweep.state == sweepDone })
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(120, 40))
	w.await(t, 0)
	tm.Send(press("s"))
	w.await(t, 1)
	screen := golden(t, tm)
	checkScreen(t, screen, 120, 40)
	for _, want := range []string{"converged at round 2 of 2", "validation on 1000 requests", "Δ e2e", "best e2e ms by evaluation"} {
		if !strings.Contains(screen, want) {
			t.Errorf("sweep screen lacks %q", want)
		}
	}
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
