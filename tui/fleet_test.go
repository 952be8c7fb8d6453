package tui

import (
	"fmt"
	"math"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/themes"
)

func TestHeatScaleIgnoresBursts(t *testing.T) {
	row := make([]float64, 100)
	for i := range row {
		row[i] = float64(i + 1)
	}
	row[99] = 1e6 // one burst
	if got := heatScale([][]float64{row, {math.NaN()}}); got != 98 {
		t.Fatalf("heatScale = %v, want the 98th percentile 98", got)
	}
	if heatScale(nil) != 0 {
		t.Fatal("empty matrix")
	}
}

func TestHeatCellsShadeWithoutColour(t *testing.T) {
	c := Common{Styles: NewStyles(themes.NoColor())}
	p := newFleetPane(&c)
	var b strings.Builder
	for _, v := range []float64{math.NaN(), 0, 0.25, 0.5, 0.75, 1} {
		b.WriteString(p.cell(level(v, 1)))
	}
	if got := b.String(); got != " ·░▒▓█" {
		t.Fatalf("cells %q", got)
	}
	dark := Common{Styles: NewStyles(themes.Dark())}
	if cell := newFleetPane(&dark).cell(heatLevels - 1); cell == "█" || !strings.Contains(cell, "█") {
		t.Fatalf("dark theme cell %q should be a coloured █", cell)
	}
}

// With the no-colour palette the screen carries no colour at all (NO_COLOR), only bold and
// reverse video; every other palette colours it.
func TestNoColorPaletteEmitsNoColour(t *testing.T) {
	for _, p := range []themes.Palette{themes.NoColor(), themes.Dark(), themes.Light(), themes.HighContrast()} {
		o := testOptions(fakeSim{workers: 8, windows: 90}, fakeSweeper{})
		o.Palettes = []themes.Palette{p}
		m := New(o)
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		drive(t, m, m.Init())
		m.keyAndSettle(t, "m")
		v := m.render()
		coloured := strings.Contains(v, "[38;") || strings.Contains(v, "[48;") || strings.Contains(v, ";38;") || strings.Contains(v, ";48;")
		if coloured != p.HasColor() {
			t.Errorf("%s palette: colour sequences present = %v", p.Name, coloured)
		}
	}
}

// Any fleet from 1 to 1,024 workers fits any pane height: the rows never outnumber the
// room, every worker is in exactly one row, in order, and each label names its range.
func TestFleetGroupingFitsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := rapid.IntRange(1, 1024).Draw(t, "workers")
		height := rapid.IntRange(fleetChrome+1, 60).Draw(t, "height")
		c := Common{Styles: NewStyles(themes.NoColor())}
		p := newFleetPane(&c)
		p.SetSize(120, height)
		p.res = &Result{Fleet: Fleet{ActiveBlocks: make([][]float64, workers)}}
		per := p.perRow()
		labels := workerLabels(workers, per)
		if len(labels) > height-fleetChrome {
			t.Fatalf("%d workers in %d rows of %d, room for %d", workers, len(labels), per, height-fleetChrome)
		}
		if per > 1 && (per-1)*(height-fleetChrome) >= workers {
			t.Fatalf("groups of %d where %d would fit", per, per-1)
		}
		next := 0
		for _, l := range labels {
			var lo, hi int
			if n, _ := fmt.Sscanf(l, "w%d–%d", &lo, &hi); n == 1 {
				hi = lo
			}
			if lo != next || hi < lo || hi-lo+1 > per {
				t.Fatalf("label %q after worker %d (groups of %d)", l, next-1, per)
			}
			next = hi + 1
		}
		if next != workers {
			t.Fatalf("labels end at worker %d of %d", next-1, workers)
		}
	})
	m := [][]float64{{1, math.NaN(), 3}, {5, math.NaN(), 1}, {2, 2, 2}}
	got := group(m, 2, maxOf)
	if len(got) != 2 || got[0][0] != 5 || !math.IsNaN(got[0][1]) || got[0][2] != 3 || got[1][1] != 2 {
		t.Fatalf("grouped by max: %v", got)
	}
	if mean := group(m, 3, meanOf); mean[0][0] != 8.0/3 || mean[0][1] != 2 {
		t.Fatalf("grouped by mean: %v", mean)
	}
}

// The load heatmap's scale covers a pinned baseline of other knobs too, and says so, as
// long as the current map keeps its contrast on it; a map that would go flat keeps its own
// scale and the legend says why.
func TestHeatScaleSharedWithBaseline(t *testing.T) {
	c := Common{Styles: NewStyles(themes.NoColor())}
	p := newFleetPane(&c)
	p.SetSize(200, 10)
	frame := func(credit float64, load ...float64) Result {
		n := len(load)
		return Result{Final: true, Knobs: Knobs{Mode: "kv_router", Credit: credit}, SimMS: float64(n) * 1000,
			Fleet: Fleet{WindowMS: 1000, ActiveBlocks: [][]float64{load},
				QueuedPrefill: [][]float64{make([]float64, n)}, HitRatio: [][]float64{make([]float64, n)}}}
	}
	p.Update(resultMsg{frame(1, 900, 900)}) // the first result is the baseline
	p.Update(resultMsg{frame(0.5, 300, 300)})
	if v := p.View(); !strings.Contains(v, "≥900 blocks · same scale as baseline") {
		t.Fatalf("legend does not give the shared scale:\n%s", v)
	}
	p.Update(pinMsg{})
	if v := p.View(); !strings.Contains(v, "≥300 blocks") || strings.Contains(v, "scale") {
		t.Fatalf("after pinning the current run:\n%s", v)
	}
	// A baseline 30× hotter would draw this run in one shade: it keeps its own scale.
	p.Update(resultMsg{frame(1, 9000, 9000)})
	p.Update(pinMsg{})
	p.Update(resultMsg{frame(0, 0, 100, 200, 300, 400)})
	v := p.View()
	if !strings.Contains(v, "≥300 blocks · own scale (baseline's ≥9000 would flatten it)") {
		t.Fatalf("legend of a run that would go flat on the baseline's scale:\n%s", v)
	}
	if got := strings.Count(strings.Split(v, "\n")[1], "█"); got == 0 {
		t.Fatalf("own scale: the hottest cells are not drawn hottest:\n%s", v)
	}
}

// Percentages keep their column whatever their size.
func TestFormatPctWidth(t *testing.T) {
	for c, want := range map[float64]string{0.042: "  +4.2%", -0.421: " -42.1%", 2.57: "  +257%", 43.614: " +4361%", 441: "   ×442", 1e6: "  ≥×1e5"} {
		if got := formatPct(c, 7); got != want || ansi.StringWidth(got) != 7 {
			t.Errorf("formatPct(%v) = %q, want %q", c, got, want)
		}
	}
}

// With KV tiers the prefix-hit heatmap gains a last row, one line tall, of the fleet's share
// onboarded from the tiers: the pane keeps to its height (the workers' rows give up a line)
// and the row is shaded like the others (0 to 1).
func TestTierRowUnderPrefixHits(t *testing.T) {
	c := Common{Styles: NewStyles(themes.NoColor())}
	p := newFleetPane(&c)
	p.SetSize(120, 11)
	n := 4
	res := Result{Final: true, Knobs: Knobs{Mode: "kv_router"}, SimMS: 4000,
		Fleet: Fleet{WindowMS: 1000, ActiveBlocks: [][]float64{{1, 2, 3, 4}, {1, 2, 3, 4}},
			QueuedPrefill: [][]float64{make([]float64, n), make([]float64, n)}, HitRatio: [][]float64{make([]float64, n), make([]float64, n)}}}
	p.Update(resultMsg{res})
	without := p.View()
	if strings.Contains(without, tierLabel) {
		t.Fatalf("a tier row without tiers:\n%s", without)
	}
	res.Fleet.TierHit = []float64{0, 0, 1, 1}
	p.Update(resultMsg{res})
	v := p.View()
	lines := strings.Split(v, "\n")
	if len(lines) > 11 {
		t.Fatalf("%d lines in an 11-line pane:\n%s", len(lines), v)
	}
	if !strings.Contains(v, tierLabel+" ··██") {
		t.Fatalf("no tier row of two cold then two hot cells:\n%s", v)
	}
	if !strings.Contains(v, "G2/3: fleet's share onboarded from KV tiers") {
		t.Fatalf("legend does not explain the row:\n%s", v)
	}
}

// A changing fleet's load heatmap marks the windows where a worker was not serving with its
// state's letter, and says so in the legend.
func TestFleetPaneShowsWorkerStates(t *testing.T) {
	c := Common{Styles: NewStyles(themes.NoColor())}
	p := newFleetPane(&c)
	p.SetSize(120, 12)
	load := [][]float64{{1, 2, 3, 4}, {4, 3, 2, 1}}
	p.res = &Result{Final: true, SimMS: 4000, Fleet: Fleet{WindowMS: 1000, ActiveBlocks: load, QueuedPrefill: load, Decodes: load,
		HitRatio: [][]float64{{0, 0, 0, 0}, {0, 0, 0, 0}},
		States:   [][]byte{{StateStarting, StateServing, StateServing, StateDraining}, {StateServing, StateFailed, StateStarting, StateOff}}}}
	v := ansi.Strip(p.View())
	if !strings.Contains(v, "w0 s▒▓d") || !strings.Contains(v, "w1 █xs ") {
		t.Fatalf("state letters missing:\n%s", v)
	}
	if !strings.Contains(v, "s d x: start drain fail") {
		t.Fatalf("legend missing the states:\n%s", v)
	}
}
