package model

import (
	"sort"
)

// point is one measured (x, latency µs) sample.
type point struct{ x, us float64 }

// series is a measured 1-D curve, sorted by x, duplicates averaged.
type series []point

func newSeries(pts []point) series {
	sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	var out series
	for i := 0; i < len(pts); {
		j, sum := i, 0.0
		for ; j < len(pts) && pts[j].x == pts[i].x; j++ {
			sum += pts[j].us
		}
		out = append(out, point{pts[i].x, sum / float64(j-i)})
		i = j
	}
	return out
}

// at interpolates linearly between measured points; below the first point it holds that
// point's latency (the launch floor), above the last it holds the measured utilisation
// (latency grows as (x/xlast)^power).
func (s series) at(x, power float64) float64 {
	if x <= s[0].x {
		return s[0].us
	}
	last := s[len(s)-1]
	if x >= last.x {
		r := x / last.x
		if power == 2 {
			return last.us * r * r
		}
		return last.us * r
	}
	i := sort.Search(len(s), func(i int) bool { return s[i].x >= x })
	a, b := s[i-1], s[i]
	return a.us + (b.us-a.us)*(x-a.x)/(b.x-a.x)
}

// surfaceSeries is a measured 2-D grid: for each measured row value (batch) a curve.
type surfaceSeries struct {
	rows []float64
	by   []series
}

func newSurfaceSeries(pts map[float64][]point) surfaceSeries {
	var s surfaceSeries
	for r := range pts {
		s.rows = append(s.rows, r)
	}
	sort.Float64s(s.rows)
	for _, r := range s.rows {
		s.by = append(s.by, newSeries(pts[r]))
	}
	return s
}

// at interpolates in the column within each measured row, then linearly between rows;
// below the first row it holds that row, above the last it scales as r/rlast (linear work).
func (s surfaceSeries) at(r, c, colPow float64) float64 {
	if r <= s.rows[0] {
		return s.by[0].at(c, colPow)
	}
	n := len(s.rows) - 1
	if r >= s.rows[n] {
		return s.by[n].at(c, colPow) * r / s.rows[n]
	}
	i := sort.SearchFloat64s(s.rows, r)
	a := s.by[i-1].at(c, colPow)
	b := s.by[i].at(c, colPow)
	return a + (b-a)*(r-s.rows[i-1])/(s.rows[i]-s.rows[i-1])
}

// sample evaluates f on the first n axis nodes and makes the result non-decreasing: a larger
// batch is never faster, so single-point measurement noise is levelled to the running maximum.
func sample(n int, f func(x float64) float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = f(axisNode(i))
		if i > 0 && v[i] < v[i-1] {
			v[i] = v[i-1]
		}
	}
	return v
}

// sample2 is sample over a rows×cols grid, non-decreasing along both axes.
func sample2(rows, cols int, f func(r, c float64) float64) []float64 {
	v := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			x := f(axisNode(i), axisNode(j))
			if j > 0 && x < v[i*cols+j-1] {
				x = v[i*cols+j-1]
			}
			if i > 0 && x < v[(i-1)*cols+j] {
				x = v[(i-1)*cols+j]
			}
			v[i*cols+j] = x
		}
	}
	return v
}

// round keeps tables compact and their JSON stable: 1 ns resolution.
func round(v []float64) []float64 {
	for i, x := range v {
		v[i] = float64(int64(x*1000+0.5)) / 1000
	}
	return v
}
