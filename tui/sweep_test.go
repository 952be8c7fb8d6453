package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
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
