package tui

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/routerlab/routerlab/internal/shellwords"
)

// at80 is an explorer at 80×24 whose first run has finished.
func at80(t *testing.T, sim Simulator) *Model {
	t.Helper()
	m := New(testOptions(sim, nil))
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, m, m.Init())
	return m
}

// fits checks that no line of the screen is wider than the window and that text is on it
// whole (its words in order, wherever the lines break).
func fits(t *testing.T, m *Model, text string) string {
	t.Helper()
	sc := ansi.Strip(m.render())
	for i, l := range strings.Split(sc, "\n") {
		if w := ansi.StringWidth(l); w > m.common.Width {
			t.Fatalf("line %d is %d wide:\n%s", i, w, sc)
		}
	}
	if flat := strings.Join(strings.Fields(sc), " "); !strings.Contains(flat, strings.Join(strings.Fields(text), " ")) {
		t.Fatalf("%q is not on the screen whole:\n%s", text, sc)
	}
	return sc
}

// A failed run's error is shown whole, wrapped to 80 columns (issue 31: it was cut
// mid-sentence), and the panes hide the figures of the knobs before instead of showing
// them under the new ones.
func TestFailedRunWrapsItsErrorAndHidesOldFigures(t *testing.T) {
	long := errors.New("model: no step-time table for meta-llama/Llama-3.1-70B on b200_sxm with vllm 0.19.0, layout tp4-adp1-moetp1-moeep4, the checkpoint's quantisation; see routerlab model list")
	m := at80(t, fakeSim{workers: 8, windows: 30, fail: long})
	m.keyAndSettle(t, "k") // async_scheduling, the last knob
	m.keyAndSettle(t, "right")
	sc := fits(t, m, "error: "+long.Error())
	flat := func(s string) string { return strings.Join(strings.Fields(ansi.Strip(s)), " ") }
	const why = "no figures: the run of these knobs failed (the error is at the bottom)"
	if strings.Contains(sc, "output tok/s") || flat(m.metrics.View()) != why || flat(m.fleet.View()) != why {
		t.Fatalf("a failed run's panes:\n%s", sc)
	}
	m.keyAndSettle(t, "b") // the hidden figures cannot become the baseline
	fits(t, m, "b: nothing to pin until the run of these knobs has finished")
	m.keyAndSettle(t, "left") // back where it ran: the figures return
	if sc := fits(t, m, "output tok/s"); strings.Contains(sc, "error:") {
		t.Fatalf("the error outlived a good run:\n%s", sc)
	}
}

// Requests the fleet rejected are counted and said why, at the top of the figures where a
// short pane does not cut them off (issue 31: "1999 requests" under "first 2000").
func TestRejectedRequestsAreShown(t *testing.T) {
	m := at80(t, fakeSim{workers: 8, windows: 30, rejected: 3})
	fits(t, m, "Metrics · kv_router · 200 requests")
	pane := strings.Join(strings.Fields(ansi.Strip(m.metrics.View())), " ")
	if want := "3 of 203 rejected: input_length + output_length exceeds context_length 40960 (first: trace.jsonl:17) ms mean"; !strings.HasPrefix(pane, want) {
		t.Fatalf("the Metrics pane does not start with %q:\n%s", want, m.metrics.View())
	}
}

// A copied command breaks only before a flag, fits the width, and reads back as the same
// words in a shell (backslash-newline continues the line).
func TestBreakAtFlags(t *testing.T) {
	cmd := "routerlab replay --config exp.yaml --requests 2000 --set 'router_mode=round_robin' --set layout=tp4·moe_tp4 --set model_name=nvidia/Llama-3.1-8B-Instruct-FP8 --set 'x=[1, 2]'"
	for _, width := range []int{30, 50, 80, 200} {
		out := breakAtFlags(cmd, width)
		for _, l := range strings.Split(out, "\n") {
			if ansi.StringWidth(l) > width && strings.Count(strings.TrimSpace(l), "--") > 1 {
				t.Errorf("width %d: line %q is wider and holds more than one flag", width, l)
			}
			if f := strings.Fields(l); len(f) > 0 && f[0] != "routerlab" && !strings.HasPrefix(f[0], "--") {
				t.Errorf("width %d: line %q does not start at a flag", width, l)
			}
		}
		a, err := shellwords.Split(cmd)
		if err != nil {
			t.Fatal(err)
		}
		b, err := shellwords.Split(out)
		if err != nil || strings.Join(a, "\x00") != strings.Join(b, "\x00") {
			t.Errorf("width %d reads back as %q, want %q (%v)", width, b, a, err)
		}
	}
	if got := breakAtFlags(cmd, 200); strings.Contains(got, "\n") {
		t.Errorf("a command that fits was broken: %q", got)
	}
}
