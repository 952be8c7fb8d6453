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

// TestGoldenRealFleet512: the explorer on the real simulator with the seed's worker scaled
// out to 512 replicas (256 requests in flight, the first 2,000 requests), after its first
// run, at each supported size: the heatmaps group the fleet to fit, every pane's title and
// the help hint show, no line is wider than the terminal. (The tui package's goldens cover
// 2, 8, 64 and 512 workers from synthetic snapshots.)
func TestGoldenRealFleet512(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 512 workers")
	}
	_, s := smallExperiment(t, 2000)
	k := s.Initial()
	k.Deployment.Replicas, k.Concurrency = 512, 256
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := tui.New(tui.Options{Title: s.Title(), Space: s.Space(), Initial: k, Sim: s,
		Palettes: []themes.Palette{themes.NoColor()},
		Now:      func() time.Time { clock = clock.Add(40 * time.Millisecond); return clock }})
	var model tea.Model = m
	model, _ = model.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	drive(t, model, model.Init())
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			model, _ = model.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			screen := ansi.Strip(model.View().Content)
			lines := strings.Split(screen, "\n")
			if len(lines) > size[1] {
				t.Errorf("%d lines", len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > size[0] {
					t.Errorf("line of %d cells: %q", ansi.StringWidth(l), l)
				}
			}
			for _, want := range []string{"Knobs", "Metrics", "Fleet", "Sweep", "? help", "q quit", "512 workers, ", "–511 "} {
				if !strings.Contains(screen, want) {
					t.Errorf("screen lacks %q", want)
				}
			}
			teatest.RequireEqualOutput(t, []byte(screen+"\n"))
		})
	}
}
