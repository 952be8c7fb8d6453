package report

import (
	"bytes"
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one chart with the name its file takes under --plots.
type Figure struct {
	Name    string // file name without extension: convergence, cdf-ttft, …
	Caption string
	Plot    *plot.Plot
	// Bar is a heatmap's colour scale, drawn in a strip at the right of Plot.
	Bar    *plot.Plot
	Width  vg.Length
	Height vg.Length
}

// barWidth is the colour bar's strip: the bar and its tick labels.
const barWidth = 2.4 * vg.Centimeter

// maxLegendShare is the widest a legend beside the axes may be, as a share of the figure;
// a wider one goes below the chart.
const maxLegendShare = 0.3

// legendGap separates the data area from a legend drawn beside it.
const legendGap = 0.3 * vg.Centimeter

// Render encodes the figure as "svg" or "png". A plot's legend is drawn in a strip at the
// right of its axes, never over the data; a heatmap's colour bar likewise. gonum/plot panics
// on some degenerate data (a log axis over nothing positive); that comes back as an error
// naming the figure.
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
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", f.Name, err)
	}
	dc := draw.New(c)
	if f.Bar != nil {
		full := dc
		dc = draw.Crop(dc, 0, -barWidth, 0, 0)
		// The bar spans the heatmap's data area, top to bottom.
		da := f.Plot.DataCanvas(dc)
		f.Bar.Draw(draw.Crop(full, w-barWidth, 0, da.Min.Y-full.Min.Y, da.Max.Y-full.Max.Y))
	}
	// A shallow copy draws the plot without its legend: the Figure may be rendered again
	// (the page, then --plots), so its plot is left as it was.
	p := *f.Plot
	leg := p.Legend
	leg.Top, leg.Left = true, true
	leg.XOffs, leg.YOffs = 0, 0
	switch r := leg.Rectangle(dc); {
	case r.Size().X == 0:
		p.Draw(dc)
	case r.Size().X <= dc.Size().X*maxLegendShare:
		// Beside the axes, top-aligned with the data.
		lw := r.Size().X + legendGap
		p.Legend = plot.NewLegend()
		p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
		leg.Draw(draw.Crop(dc, dc.Size().X-lw+legendGap, 0, 0, -titleHeight(f.Plot)))
	default:
		// Long names (compare's run paths): below the chart, where they take height instead.
		lh := r.Size().Y + legendGap
		p.Legend = plot.NewLegend()
		p.Draw(draw.Crop(dc, 0, 0, lh, 0))
		leg.Draw(draw.Crop(dc, legendGap, 0, 0, lh-dc.Size().Y))
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: %s: %w", f.Name, err)
	}
	return b.Bytes(), nil
}

// titleHeight is the height the plot's title takes at the top, so that a strip beside the
// axes starts level with the data area.
func titleHeight(p *plot.Plot) vg.Length {
	if p.Title.Text == "" {
		return 0
	}
	return p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
}
