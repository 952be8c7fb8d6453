package backend

import (
	"fmt"
	"os"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/routerlab/routerlab/internal/cputime"
	"github.com/routerlab/routerlab/internal/teadrive"
	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui"
)

// drive runs cmd and every command its messages lead to, feeding each message back into m,
// until nothing is left: the program loop without a terminal.
func drive(tb testing.TB, m tea.Model, cmd tea.Cmd) {
	tb.Helper()
	if _, err := teadrive.Run(m, cmd); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkKnobChange times a knob change on the explorer's default experiment (the seed,
// first 2,000 requests of the built-in toolagent trace, c=32): from the key press to the
// updated panes rendered — the whole re-simulation included. A router knob (mode, scale) and
// a deployment knob (replicas 8 ↔ 16) on the seed's 8 workers, and the mode on 64 workers.
func BenchmarkKnobChange(b *testing.B) {
	_, s := smallExperiment(b, 0)
	j := tea.KeyPressMsg{Code: 'j', Text: "j"}
	for _, bc := range []struct {
		name    string
		workers int
		cursor  int  // j presses that put the cursor on the knob
		mode    bool // the change is `m`; else → and ← alternately
	}{
		{"mode", 8, 0, true},
		{"prefill_load_scale", 8, 2, false},
		{"replicas", 8, 5, false},
		{"mode/64workers", 64, 0, true},
		{"mode/1024workers", 1024, 0, true},
		{"max_num_batched_tokens/1024workers", 1024, 7, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			initial := s.Initial()
			initial.Deployment.Replicas = bc.workers
			m := tui.New(tui.Options{Title: s.Title(), Space: s.Space(),
				Initial: initial, Sim: s, Palettes: []themes.Palette{themes.Dark()}})
			var model tea.Model = m
			model, _ = model.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			drive(b, model, model.Init())
			for range bc.cursor {
				model, _ = model.Update(j)
			}
			step := []tea.KeyPressMsg{{Code: tea.KeyRight}, {Code: tea.KeyLeft}}
			i := 0
			cpu0 := cputime.Process()
			for b.Loop() {
				var cmd tea.Cmd
				k := tea.KeyPressMsg{Code: 'm', Text: "m"}
				if !bc.mode {
					k = step[i%2]
				}
				i++
				model, cmd = model.Update(k)
				drive(b, model, cmd)
				_ = model.View()
			}
			// CPU time per change (this process, all threads): what the wall time would be on an
			// idle machine, since a run is one goroutine plus the UI and the GC.
			b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkExplorerMemory1024 is the explorer's memory at 1,024 workers: ten knob changes
// (router_mode through its four policies and back, then prefill_load_scale up and down) on
// the 2,000-request default, each run to its end and drawn at 120×40; it reports the
// process's peak RSS (VmHWM) and its RSS after the tenth run.
func BenchmarkExplorerMemory1024(b *testing.B) {
	_, s := smallExperiment(b, 0)
	for b.Loop() {
		initial := s.Initial()
		initial.Deployment.Replicas = 1024
		m := tui.New(tui.Options{Title: s.Title(), Space: s.Space(), Initial: initial, Sim: s, Palettes: []themes.Palette{themes.Dark()}})
		var model tea.Model = m
		model, _ = model.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		drive(b, model, model.Init())
		keys := []tea.KeyPressMsg{{Code: 'm', Text: "m"}, {Code: 'm', Text: "m"}, {Code: 'm', Text: "m"}, {Code: 'm', Text: "m"},
			{Code: 'j', Text: "j"}, {Code: 'j', Text: "j"}, {Code: tea.KeyRight}, {Code: tea.KeyRight}, {Code: tea.KeyLeft}, {Code: tea.KeyLeft},
			{Code: tea.KeyRight}, {Code: tea.KeyLeft}}
		for _, k := range keys {
			var cmd tea.Cmd
			model, cmd = model.Update(k)
			drive(b, model, cmd)
			_ = model.View()
		}
	}
	b.ReportMetric(procStatusMB("VmRSS"), "rss-MB")
	b.ReportMetric(procStatusMB("VmHWM"), "peak-rss-MB")
}

// procStatusMB reads a size field of /proc/self/status in MB (0 where there is none).
func procStatusMB(field string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkExplorerStart times what the explorer does before its first run on the seed:
// the simulator for the first 2,000 requests and its knob space (the catalogue of every
// embedded table's model, GPU and layout).
func BenchmarkExplorerStart(b *testing.B) {
	exp, _ := smallExperiment(b, 2000)
	for b.Loop() {
		s, err := NewSim(exp, 2000)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Space()
	}
}
