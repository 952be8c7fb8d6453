// Package sweep searches the router knobs of an experiment file for the configuration that
// best meets its goal: a Gaussian-process bandit (or random or grid search) over the
// canonical configurations of the search space, evaluated on the first requests of the trace,
// with a ledger that survives interruption, a full-trace validation against the default KV
// router and round robin, and a report.
package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/routerlab/routerlab/config"
)

// Candidate is one canonical configuration of the search space: a point with every knob its
// router mode ignores fixed, so that two points that run the same simulation are one
// candidate.
type Candidate struct {
	Point config.Point
	// Key names the configuration: "key=value" for every search dimension the router reads,
	// space-separated, in dimension order.
	Key string
	// Config maps those dimension keys to their values.
	Config map[string]string
	// Variants is how many points of the raw search space canonicalise to this candidate.
	Variants int
	// Stochastic runs depend on the simulation seed (router_temperature > 0, or the random
	// router), so they are evaluated over several seeds.
	Stochastic bool
	// X is the candidate's encoding for the Gaussian process, every coordinate in [0,1].
	X []float64
}

// Space is the finite set of canonical candidates of an experiment file's search dimensions.
type Space struct {
	Dims       []config.Dimension
	Candidates []Candidate
	index      map[string]int // Key → candidate
}

// kvKnobs are the router knobs that only the kv_router mode reads.
var kvKnobs = []string{config.KeyOverlapScoreCredit, config.KeyPrefillLoadScale, config.KeyRouterTemperature}

// NewSpace enumerates the product of f's search dimensions (last dimension fastest) and keeps
// the first point of every canonical configuration.
func NewSpace(f *config.File) (*Space, error) {
	dims := f.Dimensions()
	s := &Space{Dims: dims, index: map[string]int{}}
	enc := newEncoder(dims)
	p := make(config.Point, len(dims))
	for {
		c, err := s.canonical(f, p)
		if err != nil {
			return nil, err
		}
		if i, ok := s.index[c.Key]; ok {
			s.Candidates[i].Variants++
		} else {
			c.Variants = 1
			c.X = enc.encode(c.Point, ignoredDims(dims, c.Config))
			s.index[c.Key] = len(s.Candidates)
			s.Candidates = append(s.Candidates, c)
		}
		if !next(p, dims) {
			break
		}
	}
	return s, nil
}

// next advances p to the following point of the product; false after the last.
func next(p config.Point, dims []config.Dimension) bool {
	for i := len(p) - 1; i >= 0; i-- {
		p[i]++
		if p[i] < len(dims[i].Values) {
			return true
		}
		p[i] = 0
	}
	return false
}

// canonical returns p's candidate (without encoding): knobs the router mode ignores are set
// to their first value and left out of the key.
func (s *Space) canonical(f *config.File, p config.Point) (Candidate, error) {
	mode, err := f.At(p, config.KeyRouterMode)
	if err != nil {
		return Candidate{}, err
	}
	kv := mode.Text == "kv_router"
	q := slices.Clone(p)
	c := Candidate{Config: map[string]string{}}
	var key []string
	for i, d := range s.Dims {
		if !kv && slices.Contains(kvKnobs, d.Key) {
			q[i] = 0
			continue
		}
		v := d.Values[q[i]].Text
		c.Config[d.Key] = v
		key = append(key, d.Key+"="+v)
	}
	if len(key) == 0 {
		key = []string{"(fixed)"}
	}
	c.Point, c.Key = q, strings.Join(key, " ")
	temp, err := f.At(q, config.KeyRouterTemperature)
	if err != nil {
		return Candidate{}, err
	}
	c.Stochastic = mode.Text == "random" || (kv && temp.Num > 0)
	return c, nil
}

// ignoredDims marks the dimensions a candidate's configuration leaves out.
func ignoredDims(dims []config.Dimension, cfg map[string]string) []bool {
	ign := make([]bool, len(dims))
	for i, d := range dims {
		_, ok := cfg[d.Key]
		ign[i] = !ok
	}
	return ign
}

// Lookup returns the index of the candidate that point p canonicalises to.
func (s *Space) Lookup(f *config.File, p config.Point) (int, error) {
	if len(p) != len(s.Dims) {
		return 0, fmt.Errorf("sweep: point has %d coordinates, the space %d dimensions", len(p), len(s.Dims))
	}
	c, err := s.canonical(f, p)
	if err != nil {
		return 0, err
	}
	i, ok := s.index[c.Key]
	if !ok {
		return 0, fmt.Errorf("sweep: %s is not in the search space", c.Key)
	}
	return i, nil
}

// Index returns the candidate with the given key.
func (s *Space) Index(key string) (int, bool) {
	i, ok := s.index[key]
	return i, ok
}

// encoder maps points to [0,1]^d: categorical dimensions one-hot, numeric ones min–max
// scaled, on a logarithmic axis when config marks them Log. A zero on a log axis sits one
// geometric step (the median ratio of consecutive positive values) below the smallest
// positive value — for the seed's prefill_load_scale 0, 0.25, …, 32 that is exactly its rank,
// an evenly spaced ladder. Knobs the candidate's router mode ignores encode as 0.
type encoder struct {
	dims []config.Dimension
	pos  [][]float64 // per dimension, per value: position on [0,1]; nil for categoricals
}

func newEncoder(dims []config.Dimension) *encoder {
	e := &encoder{dims: dims, pos: make([][]float64, len(dims))}
	for i, d := range dims {
		numeric := true
		for _, v := range d.Values {
			numeric = numeric && v.IsNum
		}
		if !numeric {
			continue
		}
		raw := make([]float64, len(d.Values))
		for j, v := range d.Values {
			raw[j] = v.Num
		}
		if d.Log {
			raw = logAxis(raw)
		}
		lo, hi := slices.Min(raw), slices.Max(raw)
		e.pos[i] = make([]float64, len(raw))
		for j, r := range raw {
			if hi > lo {
				e.pos[i][j] = (r - lo) / (hi - lo)
			}
		}
	}
	return e
}

// logAxis returns log(x) for positive values and one geometric step below the smallest
// positive value for zero (config only marks non-negative numeric lists Log).
func logAxis(xs []float64) []float64 {
	var pos []float64
	for _, x := range xs {
		if x > 0 {
			pos = append(pos, x)
		}
	}
	slices.Sort(pos)
	pos = slices.Compact(pos)
	ratios := []float64{2}
	if len(pos) > 1 {
		ratios = ratios[:0]
		for i := 1; i < len(pos); i++ {
			ratios = append(ratios, pos[i]/pos[i-1])
		}
		slices.Sort(ratios)
	}
	step := ratios[len(ratios)/2]
	out := make([]float64, len(xs))
	for i, x := range xs {
		if x > 0 {
			out[i] = math.Log(x)
		} else {
			out[i] = math.Log(pos[0] / step)
		}
	}
	return out
}

func (e *encoder) encode(p config.Point, ignored []bool) []float64 {
	var x []float64
	for i, d := range e.dims {
		if e.pos[i] != nil {
			v := 0.0
			if !ignored[i] {
				v = e.pos[i][p[i]]
			}
			x = append(x, v)
			continue
		}
		for j := range d.Values {
			v := 0.0
			if !ignored[i] && j == p[i] {
				v = 1
			}
			x = append(x, v)
		}
	}
	return x
}
