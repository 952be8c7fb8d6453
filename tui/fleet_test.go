package tui

import (
	"math"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

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
		b.WriteString(p.cell(v))
	}
	if got := b.String(); got != " ·░▒▓█" {
		t.Fatalf("cells %q", got)
	}
	dark := Common{Styles: NewStyles(themes.Dark())}
	if cell := newFleetPane(&dark).cell(1); cell == "█" || !strings.Contains(cell, "█") {
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
