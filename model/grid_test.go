package model

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

func TestAxisNodesAndPositions(t *testing.T) {
	want := []float64{1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 10, 12, 14, 16}
	for i, w := range want {
		if got := axisNode(i); got != w {
			t.Fatalf("axisNode(%d) = %g, want %g", i, got, w)
		}
		if got := axisPos(w); got != float64(i) {
			t.Fatalf("axisPos(%g) = %g, want %d", w, got, i)
		}
	}
	if got := axisPos(4.5); got != 8.5 {
		t.Fatalf("axisPos(4.5) = %g, want 8.5 (halfway between nodes 4 and 5)", got)
	}
	if axisNodes(15) != 61 {
		t.Fatalf("axisNodes(15) = %d", axisNodes(15))
	}
}

func TestCurveOnBetweenAndBeyondGrid(t *testing.T) {
	// nodes 1, 1.25, …, 4 (9 nodes) with value 10·x.
	v := make([]float64, axisNodes(2))
	for i := range v {
		v[i] = 10 * axisNode(i)
	}
	c := newCurve(v, 1)
	for i := range v {
		if got := c.at(axisNode(i)); math.Abs(got-v[i]) > 1e-12 {
			t.Fatalf("on node %d: %g, want %g", i, got, v[i])
		}
	}
	if got := c.at(2.25); math.Abs(got-22.5) > 1e-12 {
		t.Fatalf("between nodes: %g, want 22.5", got)
	}
	if got := c.at(0.5); got != 10 {
		t.Fatalf("below grid: %g, want the floor 10", got)
	}
	if got := c.at(8); got != 80 {
		t.Fatalf("beyond grid (linear): %g, want 80", got)
	}
	q := newCurve(v, 2)
	if got := q.at(8); got != 160 {
		t.Fatalf("beyond grid (quadratic): %g, want 40·(8/4)² = 160", got)
	}
}

func TestSurfaceBilinear(t *testing.T) {
	rows, cols := axisNodes(1), axisNodes(2) // r in 1..2, c in 1..4
	v := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			v[i*cols+j] = axisNode(i) * axisNode(j)
		}
	}
	s := newSurface(v, rows, cols, 1, 2)
	if got := s.at(2, 4); got != 8 {
		t.Fatalf("corner: %g", got)
	}
	if got := s.at(1.5, 3); math.Abs(got-4.5) > 1e-12 {
		t.Fatalf("on nodes: %g, want 4.5", got)
	}
	if got := s.at(1.125, 2.25); math.Abs(got-1.125*2.25) > 1e-9 {
		t.Fatalf("between nodes (bilinear of a product is exact on a cell corner grid): %g", got)
	}
	if got := s.at(4, 8); got != 8*2*4 {
		t.Fatalf("beyond both edges: %g, want 8·(4/2)·(8/4)² = 64", got)
	}
}

func TestCurveMonotoneProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 40).Draw(t, "n")
		v := make([]float64, n)
		acc := 0.0
		for i := range v {
			acc += rapid.Float64Range(0, 100).Draw(t, "step")
			v[i] = acc
		}
		c := newCurve(v, rapid.SampledFrom([]float64{1, 2}).Draw(t, "power"))
		a := rapid.Float64Range(0, 1e6).Draw(t, "a")
		b := rapid.Float64Range(0, 1e6).Draw(t, "b")
		if a > b {
			a, b = b, a
		}
		if c.at(a) > c.at(b)+1e-9 {
			t.Fatalf("at(%g)=%g > at(%g)=%g", a, c.at(a), b, c.at(b))
		}
	})
}

// TestAxisPosIsFrexps: axisPos reads the exponent and mantissa from the bits, which must
// give exactly the position math.Frexp's formula does, for every positive value.
func TestAxisPosIsFrexps(t *testing.T) {
	frexpPos := func(x float64) float64 {
		frac, exp := math.Frexp(x)
		return float64((exp-1)*nodesPerOctave) + (2*frac-1)*nodesPerOctave
	}
	for _, x := range []float64{1, 1.25, 3, 4.5, 1e6, math.MaxFloat64, math.SmallestNonzeroFloat64, 2.2250738585072014e-308} {
		if got, want := axisPos(x), frexpPos(x); got != want {
			t.Fatalf("axisPos(%g) = %v, Frexp's %v", x, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Float64Range(math.SmallestNonzeroFloat64, math.MaxFloat64).Draw(t, "x")
		if got, want := axisPos(x), frexpPos(x); got != want {
			t.Fatalf("axisPos(%g) = %v, Frexp's %v", x, got, want)
		}
	})
}
