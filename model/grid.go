package model

import "math"

// The derived tables sample every quantity on one log-spaced axis: each octave [2^k, 2^(k+1))
// holds nodesPerOctave evenly spaced nodes, so node i sits at 2^(i/4)·(1 + (i%4)/4):
// 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 10, … Locating a value needs one
// math.Frexp instead of a logarithm, which keeps the step-time call in the tens of
// nanoseconds, and interpolation between two nodes is linear in the quantity itself.
const nodesPerOctave = 4

// axisNode is the value of node i.
func axisNode(i int) float64 {
	k := i / nodesPerOctave
	j := i % nodesPerOctave
	return math.Ldexp(1+float64(j)/nodesPerOctave, k)
}

// axisNodes is the number of nodes covering [1, 2^octaves].
func axisNodes(octaves int) int { return octaves*nodesPerOctave + 1 }

// axisPos is the fractional node position of x >= 1 (axisPos(axisNode(i)) == i).
func axisPos(x float64) float64 {
	// math.Frexp's x = frac·2^exp, frac in [0.5, 1), read straight from the bits of a normal
	// x: 2·frac is x's mantissa with a zero exponent (exactly), exp its exponent + 1. Frexp
	// itself, a call with special cases, cost more than the interpolation around it.
	b := math.Float64bits(x)
	e := int(b>>52) & 0x7ff
	if e == 0 || e == 0x7ff {
		return axisPosFrexp(x)
	}
	return float64((e-1023)*nodesPerOctave) + (math.Float64frombits(b&(1<<52-1)|0x3ff<<52)-1)*nodesPerOctave
}

// axisPosFrexp is axisPos of any x, subnormal and special values included.
func axisPosFrexp(x float64) float64 {
	frac, exp := math.Frexp(x)
	return float64((exp-1)*nodesPerOctave) + (2*frac-1)*nodesPerOctave
}

// curve is a non-decreasing quantity sampled on the axis nodes 0..len-1. Beyond the last node
// it holds the measured utilisation: the value grows as (x/xmax)^power (power 1 for work
// linear in x, 2 for causal attention over a sequence).
type curve struct {
	v     []float64
	power float64
	xmax  float64
}

func newCurve(v []float64, power float64) curve {
	return curve{v: v, power: power, xmax: axisNode(len(v) - 1)}
}

// at evaluates the curve at x; x below 1 is priced as 1 (the kernel floor).
func (c *curve) at(x float64) float64 {
	if x <= 1 {
		return c.v[0]
	}
	if x >= c.xmax {
		r := x / c.xmax
		if c.power == 2 {
			return c.v[len(c.v)-1] * r * r
		}
		return c.v[len(c.v)-1] * r
	}
	p := axisPos(x)
	i := int(p)
	f := p - float64(i)
	return c.v[i] + (c.v[i+1]-c.v[i])*f
}

// surface is a quantity sampled on (rows × cols) axis nodes, row-major, non-decreasing
// along both axes, with the same hold-utilisation rule beyond either edge.
type surface struct {
	v              []float64
	rows, cols     int
	rowPow, colPow float64
	rmax, cmax     float64
}

func newSurface(v []float64, rows, cols int, rowPow, colPow float64) surface {
	return surface{v: v, rows: rows, cols: cols, rowPow: rowPow, colPow: colPow,
		rmax: axisNode(rows - 1), cmax: axisNode(cols - 1)}
}

// at evaluates bilinearly at (r, c).
func (s *surface) at(r, c float64) float64 {
	i, i1, fr, scale := s.rowAt(r)
	return s.colAt(i, i1, fr, scale, c)
}

// rowAt is the row part of at: the rows i and i1 around r, the fraction fr between them and
// the hold-utilisation factor beyond the last row.
func (s *surface) rowAt(r float64) (i, i1 int, fr, scale float64) {
	scale = 1.0
	if r < 1 {
		r = 1
	}
	if r > s.rmax {
		scale *= math.Pow(r/s.rmax, s.rowPow)
		r = s.rmax
	}
	pr := axisPos(r)
	i = int(pr)
	i1 = i + 1
	if i1 >= s.rows {
		i1 = i
	}
	return i, i1, pr - float64(i), scale
}

// colAt finishes at for the row part rowAt gave: the column part and the bilinear value.
func (s *surface) colAt(i, i1 int, fr, scale, c float64) float64 {
	if c < 1 {
		c = 1
	}
	if c > s.cmax {
		q := c / s.cmax
		if s.colPow == 2 {
			scale *= q * q
		} else {
			scale *= math.Pow(q, s.colPow)
		}
		c = s.cmax
	}
	pc := axisPos(c)
	j := int(pc)
	fc := pc - float64(j)
	j1 := j + 1
	if j1 >= s.cols {
		j1 = j
	}
	a := s.v[i*s.cols+j]
	b := s.v[i*s.cols+j1]
	cc := s.v[i1*s.cols+j]
	d := s.v[i1*s.cols+j1]
	top := a + (b-a)*fc
	bot := cc + (d-cc)*fc
	return (top + (bot-top)*fr) * scale
}
