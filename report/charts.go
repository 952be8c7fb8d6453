// Package report draws routerlab's charts (gonum/plot, SVG or PNG) and lays out
// self-contained HTML pages from them: no scripts, no external resources, printable. It
// takes plain values (series, tables), so any result — a sweep, a replay, a comparison —
// can be drawn; it never simulates.
package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one chart with the name its file takes under --plots.
type Figure struct {
	Name    string // file name without extension: convergence, cdf-ttft, …
	Caption string
	Plot    *plot.Plot
	Width   vg.Length
	Height  vg.Length
}

// Render encodes the figure as "svg" or "png". gonum/plot panics on some degenerate data
// (a log axis over nothing positive); that comes back as an error naming the figure.
func (f Figure) Render(format string) (_ []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("report: %s: %v", f.Name, r)
		}
	}()
	w, h := f.Width, f.Height
	if w == 0 {
		w, h = 17*vg.Centimeter, 9*vg.Centimeter
	}
	wt, err := f.Plot.WriterTo(w, h, format)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", f.Name, err)
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: %s: %w", f.Name, err)
	}
	return b.Bytes(), nil
}

// Series is one named line of points.
type Series struct {
	Name string
	X, Y []float64
}

// Colours for series in order: distinguishable in colour and in grey print.
var seriesColours = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0xff, 0x7f, 0x0e, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
}

func colour(i int) color.Color { return seriesColours[i%len(seriesColours)] }

func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return p
}

func xys(x, y []float64) plotter.XYs {
	pts := make(plotter.XYs, 0, len(x))
	for i := range x {
		if !math.IsNaN(y[i]) && !math.IsInf(y[i], 0) {
			pts = append(pts, plotter.XY{X: x[i], Y: y[i]})
		}
	}
	return pts
}

// Lines draws series as lines with point markers; logX puts x on a log axis (positive x
// only). Labels (optional) name the x ticks at the x values given.
func Lines(title, xLabel, yLabel string, series []Series, logX bool, labels map[float64]string) (*plot.Plot, error) {
	p := newPlot(title, xLabel, yLabel)
	for i, s := range series {
		l, sc, err := plotter.NewLinePoints(xys(s.X, s.Y))
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", title, err)
		}
		l.Color, sc.Color = colour(i), colour(i)
		sc.Shape = shapes[i%len(shapes)]
		p.Add(l, sc)
		if s.Name != "" {
			p.Legend.Add(s.Name, l, sc)
		}
	}
	p.Legend.Left = true
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if labels != nil {
		var ticks []plot.Tick
		for _, x := range slices.Sorted(mapsKeys(labels)) {
			ticks = append(ticks, plot.Tick{Value: x, Label: labels[x]})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	return p, nil
}

var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}}

func mapsKeys(m map[float64]string) func(func(float64) bool) {
	return func(yield func(float64) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Convergence draws every evaluation's value as a point and the best so far as a step line.
func Convergence(values, best []float64, yLabel string) (*plot.Plot, error) {
	p := newPlot("Search convergence", "evaluation", yLabel)
	n := make([]float64, len(values))
	for i := range n {
		n[i] = float64(i + 1)
	}
	sc, err := plotter.NewScatter(xys(n, values))
	if err != nil {
		return nil, err
	}
	sc.Color = colour(0)
	sc.Shape = draw.CircleGlyph{}
	l, err := plotter.NewLine(xys(n, best))
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	l.Color = colour(1)
	l.Width = vg.Points(2)
	p.Add(sc, l)
	p.X.Tick.Marker = countTicks(len(values))
	p.Legend.Add("each evaluation", sc)
	p.Legend.Add("best so far", l)
	return p, nil
}

// Bar is one bar with an optional interval (Low ≤ Value ≤ High; both 0: none).
type Bar struct {
	Name             string
	Value, Low, High float64
}

// Bars draws one bar per entry, with its interval as an error bar where given.
func Bars(title, yLabel string, bars []Bar) (*plot.Plot, error) {
	p := newPlot(title, "", yLabel)
	vals := make(plotter.Values, len(bars))
	names := make([]string, len(bars))
	var errs plotter.YErrors
	var pts plotter.XYs
	for i, b := range bars {
		vals[i], names[i] = b.Value, b.Name
		if b.Low != 0 || b.High != 0 {
			pts = append(pts, plotter.XY{X: float64(i), Y: b.Value})
			errs = append(errs, struct{ Low, High float64 }{b.Value - b.Low, b.High - b.Value})
		}
	}
	bc, err := plotter.NewBarChart(vals, vg.Points(40))
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", title, err)
	}
	bc.Color = color.RGBA{0x9e, 0xc5, 0xe8, 0xff}
	bc.LineStyle.Color = colour(0)
	p.Add(bc)
	if len(pts) > 0 {
		eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: plotter.DefaultLineStyle, CapWidth: vg.Points(10)}
		eb.LineStyle.Width = vg.Points(1.5)
		p.Add(eb)
	}
	p.NominalX(names...)
	p.Y.Min = 0
	return p, nil
}

// CDF draws the empirical distribution of each sample: the share of values ≤ x, x on a log
// axis (latencies span decades). Samples are copied, not sorted in place. Nil when no sample
// has a positive value.
func CDF(title, xLabel string, names []string, samples [][]float64) (*plot.Plot, error) {
	if !slices.ContainsFunc(samples, func(s []float64) bool { return slices.ContainsFunc(s, func(x float64) bool { return x > 0 }) }) {
		return nil, nil
	}
	p := newPlot(title, xLabel, "share of requests ≤ x")
	for i, s := range samples {
		v := slices.Clone(s)
		v = slices.DeleteFunc(v, func(x float64) bool { return !(x > 0) })
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		// At most ~400 points per line: the file stays small, the eye sees no difference.
		step := max(1, len(v)/400)
		var pts plotter.XYs
		for j := 0; j < len(v); j += step {
			pts = append(pts, plotter.XY{X: v[j], Y: float64(j+1) / float64(len(v))})
		}
		pts = append(pts, plotter.XY{X: v[len(v)-1], Y: 1})
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", title, err)
		}
		l.Color = colour(i)
		l.Width = vg.Points(1.5)
		l.Dashes = dashes[i%len(dashes)]
		p.Add(l)
		p.Legend.Add(names[i], l)
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Left = true
	return p, nil
}

var dashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

// Grid is a heatmap's values: Z[row][col], rows bottom to top, columns at times X0 + col·DX.
type Grid struct {
	Z      [][]float64
	X0, DX float64
	Rows   []string // row labels (workers or worker groups)
}

// gridXYZ is a Grid as gonum/plot reads a heatmap.
type gridXYZ struct{ g Grid }

func (x gridXYZ) Dims() (c, r int)   { return len(x.g.Z[0]), len(x.g.Z) }
func (x gridXYZ) Z(c, r int) float64 { return x.g.Z[r][c] }
func (x gridXYZ) X(c int) float64    { return x.g.X0 + float64(c)*x.g.DX }
func (x gridXYZ) Y(r int) float64    { return float64(r) }

// Heatmap draws g with a black-body palette from lo to hi (white for the lowest).
func Heatmap(title, xLabel string, g Grid, lo, hi float64) (*plot.Plot, error) {
	if len(g.Z) == 0 || len(g.Z[0]) == 0 {
		return nil, fmt.Errorf("report: %s: no data", title)
	}
	p := newPlot(title, xLabel, "")
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(lo)
	cm.SetMax(math.Max(hi, lo+1e-9))
	pal := palette.Reverse(cm).Palette(64)
	h := plotter.NewHeatMap(gridXYZ{g}, pal)
	h.Min, h.Max = lo, math.Max(hi, lo+1e-9)
	h.Underflow, h.Overflow = pal.Colors()[0], pal.Colors()[len(pal.Colors())-1]
	p.Add(h)
	var ticks []plot.Tick
	every := max(1, len(g.Rows)/16)
	for i, name := range g.Rows {
		if i%every == 0 {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: name})
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	return p, nil
}

// countTicks labels a count axis 1…n at whole numbers, in steps of 1, 2, 5, 10, 20, 50, …
// giving at most about 10 labels.
func countTicks(n int) plot.ConstantTicks {
	step := 1
find:
	for m := 1; ; m *= 10 {
		for _, k := range []int{1, 2, 5} {
			if step = k * m; n/step <= 10 {
				break find
			}
		}
	}
	ticks := []plot.Tick{{Value: 1, Label: "1"}}
	for x := step; x <= n; x += step {
		if x > 1 {
			ticks = append(ticks, plot.Tick{Value: float64(x), Label: strconv.Itoa(x)})
		}
	}
	return ticks
}
