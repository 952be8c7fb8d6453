// Package chartcheck is for tests: it reads a rendered chart (gonum/plot's PNG, or a
// browser's screenshot of a report page) for what a reader sees — a colour bar beside a
// heatmap, a legend beside the data rather than over it.
package chartcheck

import (
	"fmt"
	"image"
	"image/color"
)

// InkBox is the bounding box of everything not white.
func InkBox(img image.Image) image.Rectangle {
	b := img.Bounds()
	box := image.Rectangle{Min: b.Max, Max: b.Min}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if luma(img.At(x, y)) < 0.97 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}

// ColourBar reports whether some column in the right seventh of box runs from dark (above)
// to a pale colour (below): a heatmap's colour bar in the palette report uses.
func ColourBar(img image.Image, box image.Rectangle) bool {
	for x := box.Max.X - box.Dx()/7; x < box.Max.X; x++ {
		darkAt := -1
		for y := box.Min.Y; y < box.Max.Y; y++ {
			l := luma(img.At(x, y))
			if l < 0.3 && darkAt < 0 {
				darkAt = y
			}
			if darkAt >= 0 && l > 0.8 && !grey(img.At(x, y)) {
				return true
			}
		}
	}
	return false
}

// LegendOffLine checks the chart in box, one horizontal coloured line across its whole x
// range with a legend: no text (dark grey ink) lies on or near the line, as a legend drawn
// over the data would, and the legend's text is where given: right of the line's end, or
// across the bottom.
func LegendOffLine(img image.Image, b image.Rectangle, where Where) error {
	// The line: the longest run of coloured (not grey) dark-ish pixels in one row.
	lineY, a, e := -1, 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		run := 0
		for x := b.Min.X; x < b.Max.X; x++ {
			if c := img.At(x, y); !grey(c) && luma(c) < 0.7 {
				run++
				if run > e-a {
					lineY, a, e = y, x-run+1, x
				}
			} else {
				run = 0
			}
		}
	}
	if lineY < 0 || e-a < b.Dx()/3 {
		return fmt.Errorf("no line across the chart (longest coloured run %d px)", e-a)
	}
	text := func(x0, x1, y0, y1 int) int {
		n := 0
		for y := max(b.Min.Y, y0); y < min(b.Max.Y, y1); y++ {
			for x := max(b.Min.X, x0); x < min(b.Max.X, x1); x++ {
				if c := img.At(x, y); grey(c) && luma(c) < 0.5 {
					n++
				}
			}
		}
		return n
	}
	band := b.Dy() / 8
	if n := text(a+4, e-4, lineY-band, lineY+band); n > 0 {
		return fmt.Errorf("%d pixels of text on the line (x %d–%d, y %d): a legend over the data", n, a, e, lineY)
	}
	switch where {
	case Right:
		if text(e+2, b.Max.X, lineY-band, lineY+2*band) == 0 {
			return fmt.Errorf("no legend right of the line's end (x %d)", e)
		}
	case Below:
		// The last eighth of the chart, under the x axis's label: text across most of the width.
		row := b.Max.Y - band
		if text(b.Min.X, b.Min.X+b.Dx()/2, row, b.Max.Y) == 0 || text(b.Min.X+b.Dx()/2, b.Max.X, row, b.Max.Y) == 0 {
			return fmt.Errorf("no legend across the bottom of the chart")
		}
	}
	return nil
}

// Where a legend belongs: Right of the axes, or Below the chart (long names).
type Where int

const (
	Right Where = iota
	Below
)

func luma(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return float64(r+g+b) / 3 / 0xffff
}

func grey(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return max(r, g, b)-min(r, g, b) < 0x800
}
