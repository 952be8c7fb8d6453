package backend

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui"
)

// sizes are the terminal sizes the determinism goldens draw at, in the order a session
// resizes through them.
var sizes = [][2]int{{220, 60}, {80, 24}, {120, 40}}

// explorerSession is an explorer on the real simulator, driven key by key without a terminal.
type explorerSession struct {
	t     testing.TB
	model tea.Model
}

// newSession opens the explorer on s at workers replicas and runs the first point.
func newSession(t testing.TB, s *Sim, workers int) *explorerSession {
	k := s.Initial()
	k.Deployment.Replicas = workers
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := tui.New(tui.Options{Title: s.Title(), Space: s.Space(), Initial: k, Sim: s,
		Palettes: []themes.Palette{themes.NoColor()},
		Now:      func() time.Time { clock = clock.Add(40 * time.Millisecond); return clock }})
	se := &explorerSession{t: t, model: m}
	se.model, _ = se.model.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	drive(t, se.model, se.model.Init())
	return se
}

// keys presses each key and lets the runs it starts finish.
func (se *explorerSession) keys(keys ...string) {
	for _, k := range keys {
		msg := tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		var cmd tea.Cmd
		se.model, cmd = se.model.Update(msg)
		drive(se.t, se.model, cmd)
	}
}

// screens draws the explorer at every size, the header line left out: it counts the
// session's runs and their wall time, the only things on screen that are about the session
// rather than the point shown.
func (se *explorerSession) screens() []string {
	var out []string
	for _, size := range sizes {
		se.model, _ = se.model.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		screen := ansi.Strip(se.model.View().Content)
		_, body, _ := strings.Cut(screen, "\n")
		out = append(out, body)
	}
	return out
}

// Every pane is a function of the point shown, the pinned baseline and the terminal size,
// not of how the explorer got there: on the real simulator at 8, 64 and 1,024 workers,
//   - changing a knob and changing it back draws what never changing it draws, and
//   - opening at overlap_score_credit 0.5 (as `--set 'overlap_score_credit=[0.5]'` does)
//     draws what stepping there from the default draws, each with that point pinned,
//
// byte for byte at 220×60, 80×24 and 120×40 (reached by resizing). The default point's
// screens are goldens.
func TestSameKnobsSameScreen(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates up to 1,024 workers")
	}
	_, s := smallExperiment(t, 2000)
	_, atHalf := smallExperiment(t, 2000, "overlap_score_credit=[0.5]")
	if k := atHalf.Initial(); k.Credit != 0.5 {
		t.Fatalf("--set start at credit %v", k.Credit)
	}
	for _, workers := range []int{8, 64, 1024} {
		t.Run(fmt.Sprintf("%dworkers", workers), func(t *testing.T) {
			// j puts the cursor on overlap_score_credit in every session.
			still := newSession(t, s, workers)
			still.keys("j")
			roundTrip := newSession(t, s, workers)
			roundTrip.keys("j", "h", "l")
			stepped := newSession(t, s, workers)
			stepped.keys("j", "h", "b")
			started := newSession(t, atHalf, workers)
			started.keys("j", "b")

			want, got := still.screens(), roundTrip.screens()
			pinnedWant, pinnedGot := stepped.screens(), started.screens()
			for i, size := range sizes {
				name := fmt.Sprintf("%dx%d", size[0], size[1])
				if got[i] != want[i] {
					t.Errorf("%s: credit 1 → 0.5 → 1 draws\n%s\nwhere credit 1 draws\n%s", name, got[i], want[i])
				}
				if pinnedGot[i] != pinnedWant[i] {
					t.Errorf("%s: opened at credit 0.5 draws\n%s\nwhere stepping to 0.5 draws\n%s", name, pinnedGot[i], pinnedWant[i])
				}
				if !strings.Contains(pinnedWant[i], "0.5") {
					t.Errorf("%s: the stepped session does not show credit 0.5:\n%s", name, pinnedWant[i])
				}
				t.Run(name, func(t *testing.T) { teatest.RequireEqualOutput(t, []byte(want[i]+"\n")) })
			}
		})
	}
}

// loadShades counts the distinct shades in the load heatmap (the left one) of a screen.
func loadShades(screen string) int {
	seen := map[rune]bool{}
	for _, line := range strings.Split(screen, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "w") || !strings.ContainsAny(f[0], "0123456789") {
			continue
		}
		for _, r := range f[1] {
			if strings.ContainsRune("·░▒▓█", r) {
				seen[r] = true
			}
		}
	}
	return len(seen)
}

// At 1,024 workers on the seed experiment the grouped load heatmap stays readable: at least
// three shades on the first run, on a run compared with it (round robin, on a scale shared
// with the baseline only if that keeps the contrast), and after pinning that run and moving
// on (random).
func TestGroupedHeatmapKeepsContrast(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 1,024 workers")
	}
	_, s := smallExperiment(t, 2000)
	se := newSession(t, s, 1024)
	for _, step := range []struct {
		name string
		keys []string
	}{{"first run", nil}, {"round_robin against the first run", []string{"m"}}, {"random against pinned round_robin", []string{"b", "m"}}} {
		se.keys(step.keys...)
		for i, screen := range se.screens() {
			if !strings.Contains(screen, "cell: max of") && !strings.Contains(screen, "max of") {
				t.Errorf("%s at %v: the legend does not say what a grouped cell is:\n%s", step.name, sizes[i], screen)
			}
			if n := loadShades(screen); n < 3 {
				t.Errorf("%s at %v: %d shades in the load heatmap, want ≥ 3:\n%s", step.name, sizes[i], n, screen)
			}
		}
	}
}
