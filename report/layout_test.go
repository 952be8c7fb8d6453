package report

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/engine"
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

// A legend is drawn beside the axes (below the chart when its names are long), never over
// the data: no text lies on a line drawn across the whole chart.
func TestLegendOutsideData(t *testing.T) {
	p, err := Lines("", "x", "y", []Series{{Name: "a long series name", X: []float64{0, 1, 2}, Y: []float64{0.9, 0.9, 0.9}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Y.Min, p.Y.Max = 0, 1
	img := renderImage(t, Figure{Name: "l", Plot: p})
	if err := chartcheck.LegendOffLine(img, img.Bounds(), chartcheck.Right); err != nil {
		t.Error(err)
	}
	// Names too long to sit beside the axes (compare's run paths) go below the chart.
	long := strings.Repeat("/a/long/directory/of/runs", 4) + "/default_kv"
	p, err = Lines("", "x", "y", []Series{{Name: long, X: []float64{0, 1, 2}, Y: []float64{0.9, 0.9, 0.9}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Y.Min, p.Y.Max = 0, 1
	img = renderImage(t, Figure{Name: "l", Plot: p})
	if err := chartcheck.LegendOffLine(img, img.Bounds(), chartcheck.Below); err != nil {
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

// Heatmaps of runs shown together share their time axis and their load scale: one tick
// label set, one colour for one load, whichever run ran longer or peaked higher.
func TestFleetHeatmapsShareScale(t *testing.T) {
	run := func(seconds, peak int) *engine.Report {
		var sn []engine.Snapshot
		for i := range seconds + 1 {
			sn = append(sn, engine.Snapshot{TimeUS: int64(i) * 1_000_000, Workers: []engine.WorkerSnapshot{{ActiveBlocks: peak * i / seconds}, {ActiveBlocks: 1}}})
		}
		return &engine.Report{Snapshots: sn}
	}
	reps := []*engine.Report{run(1100, 900), run(1400, 1500)}
	sc := SharedFleetScale(reps)
	if sc.UntilS != 1400 || sc.MaxLoad != 1500 {
		t.Fatalf("shared scale %+v, want until 1400 s, load 1500", sc)
	}
	var xTicks, bars []string
	for i, rep := range reps {
		figs, err := FleetHeatmaps("r"+strconv.Itoa(i), rep, sc)
		if err != nil {
			t.Fatal(err)
		}
		load := figs[0]
		if !strings.Contains(load.Caption, HeatmapScale) || !strings.Contains(load.Caption, "0 to 1500 blocks, as the bar at the right reads") {
			t.Errorf("caption %q does not name the palette and its range", load.Caption)
		}
		if _, err := load.Render("svg"); err != nil { // settles the axes' ranges
			t.Fatal(err)
		}
		xTicks = append(xTicks, labelsOf(load.Plot.X.Tick.Marker.Ticks(load.Plot.X.Min, load.Plot.X.Max)))
		bars = append(bars, labelsOf(load.Bar.Y.Tick.Marker.Ticks(load.Bar.Y.Min, load.Bar.Y.Max)))
	}
	if xTicks[0] != xTicks[1] || bars[0] != bars[1] {
		t.Errorf("heatmaps of one report label differently: time %q vs %q, colour bar %q vs %q", xTicks[0], xTicks[1], bars[0], bars[1])
	}
}

// The validation chart's axis is zoomed to the values and their intervals, not from 0, and
// says which range it shows.
func TestIntervalsZoom(t *testing.T) {
	p, lo, hi, err := Intervals("v", "ms", []Interval{{"a", 1913.9, 1801, 2034}, {"b", 1810.5, 1712, 1913}, {"c", 1782.9, 1685, 1883}})
	if err != nil {
		t.Fatal(err)
	}
	if !(lo > 1500 && lo < 1685 && hi > 2034 && hi < 2200) || p.Y.Min != lo || p.Y.Max != hi {
		t.Errorf("axis %g–%g (plot %g–%g), want just around 1685–2034", lo, hi, p.Y.Min, p.Y.Max)
	}
}

func labelsOf(ticks []plot.Tick) string {
	var out []string
	for _, tk := range ticks {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return strings.Join(out, " ")
}
