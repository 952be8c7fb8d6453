package backend

import (
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui"
)

// drive runs cmd and every command its messages lead to, feeding each message back into m,
// until nothing is left: the program loop without a terminal.
func drive(tb testing.TB, m tea.Model, cmd tea.Cmd) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil, tea.QuitMsg:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		default:
			var next tea.Cmd
			m, next = m.Update(msg)
			queue = append(queue, next)
		}
	}
}

// BenchmarkKnobChange times a knob change on the explorer's default experiment (the seed,
// first 2,000 requests of the built-in toolagent trace, c=32): from the key press to the
// updated panes rendered — the whole re-simulation included.
func BenchmarkKnobChange(b *testing.B) {
	_, s := smallExperiment(b, 0)
	for _, bc := range []struct {
		name string
		keys []tea.KeyPressMsg
	}{
		{"mode", []tea.KeyPressMsg{{Code: 'm', Text: "m"}}},
		{"prefill_load_scale", []tea.KeyPressMsg{{Code: 'j', Text: "j"}, {Code: 'j', Text: "j"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := tui.New(tui.Options{Title: s.Title(), Space: s.Space(),
				Initial: s.Initial(), Sim: s, Palettes: []themes.Palette{themes.Dark()}})
			var model tea.Model = m
			model, _ = model.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
			drive(b, model, model.Init())
			for _, k := range bc.keys { // move the cursor to the knob
				model, _ = model.Update(k)
			}
			step := []tea.KeyPressMsg{{Code: tea.KeyRight}, {Code: tea.KeyLeft}}
			i := 0
			cpu0 := cpuTime()
			for b.Loop() {
				var cmd tea.Cmd
				k := tea.KeyPressMsg{Code: 'm', Text: "m"}
				if bc.name != "mode" {
					k = step[i%2]
				}
				i++
				model, cmd = model.Update(k)
				drive(b, model, cmd)
				_ = model.View()
			}
			// CPU time per change (this process, all threads): what the wall time would be on an
			// idle machine, since a run is one goroutine plus the UI and the GC.
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
