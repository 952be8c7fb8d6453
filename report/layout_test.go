package report

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/internal/chartcheck"
)

// Every linear axis labels alike: steps of 1, 2 or 5 × 10^k, the decimals the step needs and
// no more, so that two heatmaps of one report never read "200" beside "250.00".
func TestNiceTicks(t *testing.T) {
	labels := func(lo, hi float64) string {
		var out []string
		for _, tk := range (niceTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 1400, "0 200 400 600 800 1000 1200 1400"},
		{0, 1300, "0 200 400 600 800 1000 1200"},
		{0, 1, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{1685, 2035, "1700 1750 1800 1850 1900 1950 2000"},
		{0, 93.4, "0 20 40 60 80"},
	} {
		if got := labels(c.lo, c.hi); got != c.want {
			t.Errorf("ticks over [%g, %g] = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	if t.Failed() {
		return
	}
	rapid.Check(t, func(t *rapid.T) {
		lo := rapid.Float64Range(-1e6, 1e6).Draw(t, "lo")
		hi := lo + rapid.Float64Range(1e-3, 1e6).Draw(t, "span")
		var n int
		for _, tk := range (niceTicks{}).Ticks(lo, hi) {
			if tk.Value < lo-1e-9*(hi-lo) || tk.Value > hi+1e-9*(hi-lo) {
				t.Fatalf("tick %g outside [%g, %g]", tk.Value, lo, hi)
			}
			if tk.Label != "" {
				n++
			}
		}
		if n < 2 || n > 11 {
			t.Fatalf("%d labels over [%g, %g]", n, lo, hi)
		}
	})
}

// A legend is drawn beside the axes, never over the data: the legend's text lies right of
// the end of a line drawn across the whole chart, and none lies on it.
func TestLegendOutsideData(t *testing.T) {
	p, err := Lines("", "x", "y", []Series{{Name: "a long series name", X: []float64{0, 1, 2}, Y: []float64{0.9, 0.9, 0.9}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Y.Min, p.Y.Max = 0, 1
	img := renderImage(t, Figure{Name: "l", Plot: p})
	if err := chartcheck.LegendBesideLine(img, img.Bounds()); err != nil {
		t.Error(err)
	}
}

// A heatmap comes with a colour bar that spans its scale: the bar's tick labels read 0 to
// the top of the scale, and the rendered strip at the right is coloured bottom (pale) to top
// (dark).
func TestHeatmapColourBar(t *testing.T) {
	g := Grid{Z: [][]float64{{0, 500, 1000}, {250, 750, 1400}}, X0: 0, DX: 1, Rows: []string{"w0", "w1"}}
	p, bar, err := Heatmap("h", "t", g, 0, 1400, 0, "active KV blocks")
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, tk := range bar.Y.Tick.Marker.Ticks(bar.Y.Min, bar.Y.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0 200 400 600 800 1000 1200 1400" {
		t.Errorf("colour bar labels %q", got)
	}
	svg, err := (Figure{Name: "h", Plot: p, Bar: bar}).Render("svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte(">active KV blocks<")) {
		t.Error("the SVG has no colour bar label")
	}
	img := renderImage(t, Figure{Name: "h", Plot: p, Bar: bar})
	if dir := os.Getenv("ROUTERLAB_SCREENSHOT_DIR"); dir != "" {
		data, _ := (Figure{Name: "h", Plot: p, Bar: bar}).Render("png")
		_ = os.WriteFile(filepath.Join(dir, "heatmap-colour-bar.png"), data, 0o644)
	}
	if !chartcheck.ColourBar(img, img.Bounds()) {
		t.Error("no column of the colour bar strip runs from dark (above) to pale colour (below)")
	}
}

func renderImage(t *testing.T, f Figure) image.Image {
	t.Helper()
	data, err := f.Render("png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}
