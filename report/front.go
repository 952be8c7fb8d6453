package report

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Front draws every point of a two-objective search as a dot and its Pareto front (points
// given in x order) as a line through them.
func Front(title, xLabel, yLabel string, all, front Series) (*plot.Plot, error) {
	p := newPlot(title, xLabel, yLabel)
	sc, err := plotter.NewScatter(xys(all.X, all.Y))
	if err != nil {
		return nil, err
	}
	sc.Color, sc.Shape = colour(0), draw.CircleGlyph{}
	l, pts, err := plotter.NewLinePoints(xys(front.X, front.Y))
	if err != nil {
		return nil, err
	}
	l.Color, pts.Color, l.Width = colour(1), colour(1), vg.Points(2)
	pts.Shape = draw.SquareGlyph{}
	p.Add(sc, l, pts)
	p.Legend.Add(all.Name, sc)
	p.Legend.Add(front.Name, l, pts)
	p.Legend.Top = true
	return p, nil
}
