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

// A legend is drawn beside the axes, never over the data: with the line along the bottom,
// the upper left of the chart (where gonum puts a legend) has no dark ink, and the strip at
// the right does.
func TestLegendOutsideData(t *testing.T) {
	p, err := Lines("", "x", "y", []Series{{Name: "a long series name", X: []float64{0, 1, 2}, Y: []float64{0, 0, 1e-9}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Y.Min, p.Y.Max = 0, 1
	img := renderImage(t, Figure{Name: "l", Plot: p})
	b := img.Bounds()
	if n := dark(img, b.Dx()/5, b.Dx()*3/5, b.Dy()/20, b.Dy()/2); n > 0 {
		t.Errorf("%d dark pixels in the upper left of the data: a legend over the data", n)
	}
	if n := dark(img, b.Dx()*3/4, b.Dx(), 0, b.Dy()/3); n == 0 {
		t.Error("no legend in the strip at the right")
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
	b := img.Bounds()
	found := false
	for x := b.Max.X - b.Dx()/7; x < b.Max.X; x++ {
		if brightness(img, x, b.Dy()/4) < 0.4 && brightness(img, x, b.Dy()*80/100) > 0.7 && !grey(img, x, b.Dy()*80/100) {
			found = true
			break
		}
	}
	if !found {
		t.Error("no column of the colour bar strip runs from pale colour (below) to dark (above)")
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

// dark counts the pixels in [x0, x1) × [y0, y1) (y from the top) darker than mid grey.
func dark(img image.Image, x0, x1, y0, y1 int) int {
	n := 0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			if brightness(img, x, y) < 0.5 {
				n++
			}
		}
	}
	return n
}

func brightness(img image.Image, x, y int) float64 {
	r, g, b, _ := img.At(x, y).RGBA()
	return float64(r+g+b) / 3 / 0xffff
}

func grey(img image.Image, x, y int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	return max(r, g, b)-min(r, g, b) < 0x800
}
