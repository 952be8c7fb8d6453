package tui

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"pgregory.net/rapid"
)

// At 80 columns the validation table drops its TTFT column instead of wrapping.
func TestValidationFitsNarrowWindow(t *testing.T) {
	m := New(testOptions(fakeSim{workers: 8, windows: 90}, fakeSweeper{}))
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, m, m.Init())
	m.keyAndSettle(t, "s")
	view := ansi.Strip(m.render())
	lines := strings.Split(view, "\n")
	if len(lines) != 24 {
		t.Fatalf("%d lines at 80×24", len(lines))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("line wider than 80: %q", l)
		}
	}
	if !strings.Contains(view, "best         2200.0  60.0%   -4.3%") || strings.Contains(view, "TTFT ms") {
		t.Fatalf("compact validation table expected:\n%s", view)
	}
}

// Every supported size renders exactly the window, whatever pane is shown.
func TestViewFitsWindow(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 34}, {200, 60}} {
		m := New(testOptions(fakeSim{workers: 8, windows: 90}, fakeSweeper{}))
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		drive(t, m, m.Init())
		for _, k := range []string{"", "tab", "tab", "?", "s"} {
			if k != "" {
				m.keyAndSettle(t, k)
			}
			lines := strings.Split(ansi.Strip(m.render()), "\n")
			if len(lines) > size[1] {
				t.Fatalf("%v after %q: %d lines", size, k, len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > size[0] {
					t.Fatalf("%v after %q: line of %d cells: %q", size, k, ansi.StringWidth(l), l)
				}
			}
		}
	}
}

// The sweep table fits its room with the cursor's row on screen, always shows the winner
// (row 0) when there is room for markers, and accounts for every row: shown or counted by a
// marker.
func TestSweepTableWindowProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 200).Draw(t, "rows")
		room := rapid.IntRange(1, 40).Draw(t, "room")
		cursor := rapid.IntRange(0, n-1).Draw(t, "cursor")
		lines := tableWindow(n, cursor, room)
		if len(lines) > room {
			t.Fatalf("%d lines in room for %d", len(lines), room)
		}
		shown, counted, sawCursor, sawWinner, last := 0, 0, false, false, -1
		for _, l := range lines {
			if l.row < 0 {
				counted += l.more
				continue
			}
			if l.row <= last {
				t.Fatalf("rows out of order: %v", lines)
			}
			last = l.row
			shown++
			sawCursor = sawCursor || l.row == cursor
			sawWinner = sawWinner || l.row == 0
		}
		if !sawCursor {
			t.Fatalf("cursor row %d not shown: %v", cursor, lines)
		}
		if room >= 4 && !sawWinner {
			t.Fatalf("winner not shown: %v", lines)
		}
		if room >= 4 && shown+counted != n {
			t.Fatalf("%d shown + %d counted of %d rows: %v", shown, counted, n, lines)
		}
	})
}

// During a sweep `j` moves the cursor to a row index; as evaluations land and the table
// re-sorts it stays on that index (it follows a configuration only once enter loaded one),
// and at the end the winner is on screen and named in the pane's title.
func TestSweepCursorStaysOnItsRow(t *testing.T) {
	block := make(chan struct{})
	m := started(t, fakeSim{workers: 8, windows: 30}, fakeSweeper{block: block})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 24})
	_, cmd := m.Update(press("s"))
	for range 3 { // the evaluations before the sweeper waits on block
		_, cmd = m.Update(cmd())
	}
	m.Update(press("j"))
	close(block)
	drive(t, m, cmd)
	if m.sweep.state != sweepDone || m.sweep.cursor != 1 {
		t.Fatalf("state %v, cursor %d: want done with the cursor still on row 1", m.sweep.state, m.sweep.cursor)
	}
	view := ansi.Strip(m.render())
	if !strings.Contains(view, "Sweep · winner kv_router credit 1.0 scale 16.0 T 0.0 · 2122.0 e2e ms") {
		t.Fatalf("the title does not name the winner:\n%s", view)
	}
	if !strings.Contains(view, "  kv_router     1.0  16.0 0.0   2122.0") {
		t.Fatalf("the winner's row is not on screen:\n%s", view)
	}
}

// The table and the best-so-far chart follow the evaluations' order (round, candidate), not
// the order parallel evaluations happen to land in: every landing order of one sweep's
// evaluations draws the same chart and table.
func TestSweepChartIndependentOfLandingOrder(t *testing.T) {
	k := func(scale float64) Knobs { return routerKnobs("kv_router", 1, scale, 0) }
	evals := []SweepEval{
		{1, 0, k(1), 2300, 1, nil}, {1, 1, k(2), 2100, 1, nil}, {1, 2, k(4), 2200, 1, nil},
		{2, 0, k(8), 2000, 1, nil}, {2, 1, k(2), 2500, 1, nil}, {2, 2, k(16), 2050, 2, nil},
	}
	draw := func(order []int) ([]float64, []sweepRow) {
		p := newSweepPane(&Common{}, nil, SweepInfo{}, Knobs{})
		for _, i := range order {
			e := evals[i]
			p.apply(SweepEvent{Eval: &e})
		}
		return p.bestSoFar, p.rows
	}
	chart, rows := draw([]int{0, 1, 2, 3, 4, 5})
	// k(2) is averaged over its two evaluations (2300): the best after each evaluation in
	// order is 2300, 2100, 2100, 2000, 2000 (k(2) falls back to 2300), 2000.
	if want := []float64{2300, 2100, 2100, 2000, 2000, 2000}; !slices.Equal(chart, want) {
		t.Fatalf("chart in evaluation order %v, want %v", chart, want)
	}
	rng := rand.New(rand.NewPCG(3, 7))
	for range 50 {
		order := rng.Perm(len(evals))
		c, r := draw(order)
		if !slices.Equal(c, chart) || !slices.Equal(r, rows) {
			t.Fatalf("landing order %v: chart %v rows %v, want %v %v", order, c, r, chart, rows)
		}
	}
}
