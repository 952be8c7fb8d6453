package trace

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/integrate/quad"
)

// Shape is a load shape laid over a trace's arrivals: a rate multiplier r(t) > 0 on the
// source trace's clock. Reshape moves request i from t_i to T(t_i) = ∫₀^t_i du / r(u), so
// where the source sends λ requests per second the shaped trace sends λ·r: the same
// requests (prompts, prefixes, sessions' order), arriving faster or slower.
type Shape struct {
	Kind string // ramp, burst, diurnal
	// ramp: the rate goes from From to To times the source's over the first SpanS seconds
	// and stays at To after. burst: ×Mult during [AtS, AtS+LenS). diurnal: 1 + Amp·sin(2πt/PeriodS).
	From, To, SpanS float64
	AtS, LenS, Mult float64
	PeriodS, Amp    float64
	text            string
}

// ShapeSpecs describes the --shape syntax.
const ShapeSpecs = "ramp:FROM:TO:SPAN_S, burst:AT_S:LEN_S:MULT, diurnal:PERIOD_S:AMPLITUDE"

// ParseShape reads a shape: ramp:FROM:TO:SPAN_S (rate ×FROM rising linearly to ×TO over
// SPAN_S seconds), burst:AT_S:LEN_S:MULT, diurnal:PERIOD_S:AMPLITUDE (amplitude in [0, 1)).
func ParseShape(spec string) (Shape, error) {
	parts := strings.Split(spec, ":")
	nums := make([]float64, len(parts)-1)
	for i, p := range parts[1:] {
		x, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return Shape{}, fmt.Errorf("shape %q: %q is not a number (want %s)", spec, p, ShapeSpecs)
		}
		nums[i] = x
	}
	s := Shape{Kind: parts[0], text: spec}
	want := map[string]int{"ramp": 3, "burst": 3, "diurnal": 2}
	n, ok := want[s.Kind]
	if !ok {
		return Shape{}, fmt.Errorf("shape %q: unknown kind %q (want %s)", spec, s.Kind, ShapeSpecs)
	}
	if len(nums) != n {
		return Shape{}, fmt.Errorf("shape %q: %s takes %d numbers (%s)", spec, s.Kind, n, ShapeSpecs)
	}
	const lo, hi = 1e-3, 1e3 // rate multipliers and their bounds
	switch s.Kind {
	case "ramp":
		s.From, s.To, s.SpanS = nums[0], nums[1], nums[2]
		if s.From < lo || s.From > hi || s.To < lo || s.To > hi || s.SpanS <= 0 || s.SpanS > 1e8 {
			return Shape{}, fmt.Errorf("shape %q: FROM and TO must be in [%g, %g] and SPAN_S in (0, 1e8]", spec, lo, hi)
		}
	case "burst":
		s.AtS, s.LenS, s.Mult = nums[0], nums[1], nums[2]
		if s.AtS < 0 || s.AtS > 1e8 || s.LenS <= 0 || s.LenS > 1e8 || s.Mult < lo || s.Mult > hi {
			return Shape{}, fmt.Errorf("shape %q: AT_S must be in [0, 1e8], LEN_S in (0, 1e8] and MULT in [%g, %g]", spec, lo, hi)
		}
	case "diurnal":
		s.PeriodS, s.Amp = nums[0], nums[1]
		if s.PeriodS <= 0 || s.PeriodS > 1e8 || s.Amp < 0 || s.Amp >= 1 {
			return Shape{}, fmt.Errorf("shape %q: PERIOD_S must be in (0, 1e8] and AMPLITUDE in [0, 1)", spec)
		}
	}
	return s, nil
}

func (s Shape) String() string { return s.text }

// rate is r(t), t in seconds of the source clock.
func (s Shape) rate(t float64) float64 {
	return 1 + s.Amp*math.Sin(2*math.Pi*t/s.PeriodS)
}

// warp is T(t) = ∫₀^t du / r(u) in seconds: closed forms for ramp and burst, Gauss–Legendre
// from the previous request's (prev, prevT) for the smooth diurnal shape.
func (s Shape) warp(t, prev, prevT float64) float64 {
	switch s.Kind {
	case "ramp":
		k := (s.To - s.From) / s.SpanS
		in := func(u float64) float64 { // ∫₀^u du / (From + k·u)
			if k == 0 {
				return u / s.From
			}
			return math.Log((s.From+k*u)/s.From) / k
		}
		if t <= s.SpanS {
			return in(t)
		}
		return in(s.SpanS) + (t-s.SpanS)/s.To
	case "burst":
		end := s.AtS + s.LenS
		switch {
		case t <= s.AtS:
			return t
		case t <= end:
			return s.AtS + (t-s.AtS)/s.Mult
		}
		return s.AtS + s.LenS/s.Mult + (t - end)
	}
	if t == prev {
		return prevT
	}
	// A step per tenth of a period keeps the 8-point rule exact to far below a millisecond.
	steps := max(1, int(math.Ceil((t-prev)/(s.PeriodS/10))))
	return prevT + quad.Fixed(func(u float64) float64 { return 1 / s.rate(u) }, prev, t, 8*steps, nil, 0)
}

// Reshape returns t's requests on the shaped clock (timestamps in ms, rounded; their order
// kept). The trace's arrays are shared; only the requests are copied.
func Reshape(t *Trace, s Shape) *Trace {
	out := &Trace{Name: t.Name, BlockSize: t.BlockSize, Lines: t.Lines, Requests: make([]Request, len(t.Requests)),
		Digest: t.Digest + ", shape " + s.String()}
	prev, prevT := 0.0, 0.0
	last := int64(0)
	for i, r := range t.Requests {
		src := float64(r.TimestampMS) / 1000
		T := s.warp(src, prev, prevT)
		prev, prevT = src, T
		r.TimestampMS = max(last, int64(math.Round(T*1000))) // rounding never reorders
		last = r.TimestampMS
		out.Requests[i] = r
	}
	return out
}
