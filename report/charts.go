// Package report draws routerlab's charts (gonum/plot, SVG or PNG) and lays out
// self-contained HTML pages from them: no scripts, no external resources, printable. It
// takes plain values (series, tables), so any result — a sweep, a replay, a comparison —
// can be drawn; it never simulates.
package report

import (
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
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{}
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

// Interval is one value with an optional interval around it (Low ≤ Value ≤ High; both 0:
// none).
type Interval struct {
	Name             string
	Value, Low, High float64
}

// Intervals draws one dot per entry with its interval as an error bar, on a value axis
// zoomed to the dots and intervals (with a margin) rather than from 0, so that differences
// of a percent are visible. It returns the axis range drawn, for the caption to state.
func Intervals(title, yLabel string, vals []Interval) (p *plot.Plot, lo, hi float64, err error) {
	p = newPlot(title, "", yLabel)
	var pts plotter.XYs
	var errs plotter.YErrors
	names := make([]string, len(vals))
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, v := range vals {
		names[i] = v.Name
		low, high := v.Value, v.Value
		if v.Low != 0 || v.High != 0 {
			low, high = v.Low, v.High
		}
		pts = append(pts, plotter.XY{X: float64(i), Y: v.Value})
		errs = append(errs, struct{ Low, High float64 }{v.Value - low, high - v.Value})
		lo, hi = math.Min(lo, low), math.Max(hi, high)
	}
	if len(vals) == 0 {
		return nil, 0, 0, fmt.Errorf("report: %s: no data", title)
	}
	margin := math.Max((hi-lo)*0.15, math.Abs(hi)*0.002+1e-9)
	lo, hi = lo-margin, hi+margin
	eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: plotter.DefaultLineStyle, CapWidth: vg.Points(10)}
	eb.LineStyle.Width = vg.Points(1.5)
	eb.LineStyle.Color = colour(0)
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("report: %s: %w", title, err)
	}
	sc.Color, sc.Shape, sc.Radius = colour(0), draw.CircleGlyph{}, vg.Points(4)
	p.Add(eb, sc)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(vals))-0.4
	p.Y.Min, p.Y.Max = lo, hi
	return p, lo, hi, nil
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

// HeatmapScale is how a heatmap's colours read: pale cream at the lowest value through
// yellow, red, purple and blue to black at the highest (gonum's extended black-body palette,
// reversed, so that an idle worker is nearly white).
const HeatmapScale = "pale cream (low) through yellow, red, purple and blue to black (high)"

// Heatmap draws g with the HeatmapScale palette from lo to hi, and returns with it the colour
// bar that reads it (label: what a colour measures). untilX > 0 extends the x axis to it, so
// that heatmaps of runs of different lengths share one time axis.
func Heatmap(title, xLabel string, g Grid, lo, hi, untilX float64, label string) (*plot.Plot, *plot.Plot, error) {
	if len(g.Z) == 0 || len(g.Z[0]) == 0 {
		return nil, nil, fmt.Errorf("report: %s: no data", title)
	}
	hi = math.Max(hi, lo+1e-9)
	// No grid: the cells cover it, and past a run's end its lines would read as data.
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.X.Tick.Marker = niceTicks{}
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(lo)
	cm.SetMax(hi)
	pal := palette.Reverse(cm).Palette(64)
	h := plotter.NewHeatMap(gridXYZ{g}, pal)
	h.Min, h.Max = lo, hi
	h.Underflow, h.Overflow = pal.Colors()[0], pal.Colors()[len(pal.Colors())-1]
	p.Add(h)
	if untilX > 0 {
		p.X.Max = untilX
	}
	var ticks []plot.Tick
	every := max(1, len(g.Rows)/16)
	for i, name := range g.Rows {
		if i%every == 0 {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: name})
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)

	bar := plot.New()
	bar.HideX()
	bar.Y.Label.Text = label
	bar.Y.Tick.Marker = niceTicks{}
	bar.Y.Min, bar.Y.Max = lo, hi
	bar.Add(colourScale{pal: pal.Colors(), lo: lo, hi: hi})
	return p, bar, nil
}

// colourScale draws a palette as a column of bands from lo (bottom) to hi (top): a colour
// bar of filled rectangles, crisp in SVG and PNG alike.
type colourScale struct {
	pal    []color.Color
	lo, hi float64
}

func (s colourScale) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := float64(len(s.pal))
	for i, col := range s.pal {
		y0 := s.lo + (s.hi-s.lo)*float64(i)/n
		y1 := s.lo + (s.hi-s.lo)*float64(i+1)/n
		// Each band overlaps the next by a hair: no seam shows between them.
		r := vg.Rectangle{Min: vg.Point{X: trX(0), Y: trY(y0)}, Max: vg.Point{X: trX(1), Y: trY(y1) + 0.3}}
		c.SetColor(col)
		c.Fill(r.Path())
	}
}

func (s colourScale) DataRange() (xmin, xmax, ymin, ymax float64) { return 0, 1, s.lo, s.hi }

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
