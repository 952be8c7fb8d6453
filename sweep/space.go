// Package sweep searches the router knobs of an experiment file for the configuration that
// best meets its goal: a Gaussian-process bandit (or random or grid search) over the
// canonical configurations of the search space, evaluated on the first requests of the trace,
// with a ledger that survives interruption, a full-trace validation against the default KV
// router and round robin, and a report.
package sweep

import (
	"context"
	"fmt"
	"github.com/routerlab/routerlab/router"
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

	file     *config.File
	shapeDim int             // the parallel_configs dimension, -1 without one
	shapes   []config.Branch // its projection per deployment mode (shapes.go)
}

// kvKnobs are the router knobs that only the kv_router mode reads.
var kvKnobs = append(append([]string{config.KeyOverlapScoreCredit, config.KeyPrefillLoadScale, config.KeyRouterTemperature}, config.KVLoadKeys()...), config.IndexKVKnobs()...)

// MaxSpacePoints bounds the product of a search space's dimensions: NewSpace visits every
// point and keeps a candidate (about a kilobyte with its key, configuration and encoding) per
// canonical one, so this keeps setup under 512 MB and a few seconds. The seed's space has 216
// points; with a 4,000-value router_temperature list, 216,000.
const MaxSpacePoints = 250_000

// NewSpace enumerates the product of f's search dimensions (last dimension fastest) and keeps
// the first point of every canonical configuration. Its cost is linear in the product, which
// it checks against MaxSpacePoints first; it stops with ctx's error when ctx ends.
func NewSpace(ctx context.Context, f *config.File) (*Space, error) {
	dims := f.Dimensions()
	points, sizes := 1, make([]string, len(dims))
	for i, d := range dims {
		sizes[i] = fmt.Sprintf("%d %s", len(d.Values), d.Key)
		if points *= len(d.Values); points > MaxSpacePoints {
			return nil, fmt.Errorf("%s: search_space: the lists (%s…) span more than %d configurations, the limit of a sweep: shorten a list",
				f.Name, strings.Join(sizes[:i+1], " × "), MaxSpacePoints)
		}
	}
	// Sized for every point up front (at most MaxSpacePoints): growing a slice of a hundred
	// thousand candidates would copy them over and over.
	s := &Space{Dims: dims, index: make(map[string]int, points), Candidates: make([]Candidate, 0, points)}
	enc := newEncoder(dims)
	var err error
	if s.shapeDim, s.shapes, err = shapeBranches(f, dims); err != nil {
		return nil, fmt.Errorf("%s: search_space.parallel_configs: %w", f.Name, err)
	}
	enc.shapeAxes(s.shapeDim, s.shapes)
	s.file = f
	p, buf := make(config.Point, len(dims)), make(config.Point, len(dims))
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		k, _, err := s.canonicalKey(f, p, buf)
		if err != nil {
			return nil, err
		}
		if i, ok := s.index[k.Key]; ok {
			s.Candidates[i].Variants++
		} else {
			c, err := s.canonical(f, p)
			if err != nil {
				return nil, err
			}
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

// canonical returns p's candidate (without encoding): knobs the router mode ignores, index
// knobs the point's other index knobs make moot (config.IndexKnobIgnored), and the
// planner's composites where its policy scales nothing (config.PlannerKnobIgnored), are set
// to their first value and left out of the key.
func (s *Space) canonical(f *config.File, p config.Point) (Candidate, error) {
	c, kv, err := s.canonicalKey(f, p, nil)
	if err != nil {
		return Candidate{}, err
	}
	c.Config = map[string]string{}
	for i, d := range s.Dims {
		if (kv || !slices.Contains(kvKnobs, d.Key)) && !config.IndexKnobIgnored(f, c.Point, d.Key) && !f.ModeKnobIgnored(c.Point, d.Key) && !f.PlannerKnobIgnored(c.Point, d.Key) {
			c.Config[d.Key] = d.Values[c.Point[i]].Text
		}
	}
	return c, nil
}

// canonicalKey is canonical without the candidate's Config, writing its point into buf (nil:
// a new one), and says whether the router mode is kv_router. NewSpace calls it for every point
// of the space with one buffer and builds a whole candidate only for a new key, so a long
// list costs no garbage per point.
func (s *Space) canonicalKey(f *config.File, p, buf config.Point) (Candidate, bool, error) {
	mode, err := f.At(p, config.KeyRouterMode)
	if err != nil {
		return Candidate{}, false, err
	}
	kv := mode.Text == "kv_router"
	q := append(buf[:0], p...)
	var key strings.Builder
	for i, d := range s.Dims {
		if !kv && slices.Contains(kvKnobs, d.Key) || config.IndexKnobIgnored(f, p, d.Key) || f.ModeKnobIgnored(p, d.Key) || f.PlannerKnobIgnored(p, d.Key) {
			q[i] = 0
			continue
		}
		if key.Len() > 0 {
			key.WriteByte(' ')
		}
		key.WriteString(d.Key)
		key.WriteByte('=')
		key.WriteString(d.Values[q[i]].Text)
	}
	if key.Len() == 0 {
		key.WriteString("(fixed)")
	}
	temp, err := f.At(q, config.KeyRouterTemperature)
	if err != nil {
		return Candidate{}, false, err
	}
	return Candidate{Point: q, Key: key.String(), Stochastic: mode.Text == "random" || mode.Text == string(router.ModePowerOfTwoChoices) || (kv && temp.Num > 0)}, kv, nil
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
	dims  []config.Dimension
	pos   [][]float64   // per dimension, per value: position on [0,1]; nil for categoricals
	shape [][][]float64 // per dimension, per value: a parallel configuration's axes (shapes.go); nil for others
}

func newEncoder(dims []config.Dimension) *encoder {
	e := &encoder{dims: dims, pos: make([][]float64, len(dims)), shape: make([][][]float64, len(dims))}
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
		if e.shape[i] != nil {
			x = append(x, e.shape[i][p[i]]...) // a fleet is never a knob its router mode ignores
			continue
		}
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
