package config

// The search space as the sweep sees it: dimensions, their values and points.

import (
	"fmt"
	"math"
	"slices"

	"github.com/routerlab/routerlab/router"
)

// Dimensions returns the search dimensions: list-valued search_space keys with more than
// one value, in canonical order.
func (f *File) Dimensions() []Dimension {
	var dims []Dimension
	for _, l := range f.lists {
		if !f.dimension(&l) {
			continue
		}
		d := Dimension{Key: l.key, Values: append([]Value(nil), l.values...)}
		d.Log = spansDecades(l.values)
		dims = append(dims, d)
	}
	return dims
}

// dimension reports whether the list is a search dimension. deployment_mode never is: each
// parallel_configs entry is of one mode, so listing both modes makes one branch per mode
// within parallel_configs (disagg.go), not a product. The planner's composites are not
// while no planner_scaling_policy value scales the fleet, as Spica drops them then.
func (f *File) dimension(l *list) bool {
	return len(l.values) >= 2 && l.key != "deployment_mode" && (!slices.Contains(plannerListKeys, l.key) || f.plannerOn())
}

// spansDecades reports whether positive numeric values range over more than a factor of 10.
func spansDecades(vals []Value) bool {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vals {
		if !v.IsNum {
			return false
		}
		if v.Num > 0 {
			lo = math.Min(lo, v.Num)
		}
		hi = math.Max(hi, v.Num)
	}
	return hi > 10*lo
}

// Values returns the values of any list-capable search_space key (one element for a
// fixed key).
func (f *File) Values(key string) []Value {
	for _, l := range f.lists {
		if l.key == key {
			return append([]Value(nil), l.values...)
		}
	}
	return nil
}

// Point picks one value of every search dimension: Point[i] indexes Dimensions()[i].Values.
// A nil Point means the first value of every list.
type Point []int

// DefaultPoint is where a single run of the file starts, as Dynamo would: each router knob
// left as a list takes Dynamo's default (kv_router, credit 1, scale 1, T 0) when the list
// offers it, else its first value; derived parallel_configs the reference's default request
// projected onto them (derive.go); every other list takes its first value.
func (f *File) DefaultPoint() Point {
	def := router.DefaultConfig()
	want := map[string]string{
		KeyRouterMode:         string(def.Mode),
		KeyOverlapScoreCredit: num(def.OverlapScoreCredit),
		KeyPrefillLoadScale:   num(def.PrefillLoadScale),
		KeyRouterTemperature:  num(def.Temperature),
	}
	for k, v := range routerDefaults() {
		want[k] = v
	}
	if f.derive {
		want["parallel_configs"] = f.defaultParallel()
	}
	dims := f.Dimensions()
	p := make(Point, len(dims))
	for i, d := range dims {
		if w, ok := want[d.Key]; ok {
			p[i] = max(0, slices.IndexFunc(d.Values, func(v Value) bool { return canonical(d.Key, v) == w }))
		}
	}
	return p
}

// At returns the value of a list-capable search_space key at p. It walks the lists in
// place (no copy of any list), so a sweep asking it for every point of a long list stays
// linear.
func (f *File) At(p Point, key string) (Value, error) {
	var v Value
	found, dim := false, 0
	for _, l := range f.lists {
		if !f.dimension(&l) { // a fixed key: not a dimension
			if l.key == key {
				v, found = l.values[0], true
			}
			continue
		}
		j := 0
		if p != nil {
			if dim >= len(p) {
				return Value{}, fmt.Errorf("config: point has %d coordinates, the search space more dimensions", len(p))
			}
			if j = p[dim]; j < 0 || j >= len(l.values) {
				return Value{}, fmt.Errorf("config: %s index %d out of range (0..%d)", l.key, j, len(l.values)-1)
			}
		}
		if l.key == key {
			v, found = l.values[j], true
		}
		dim++
	}
	if p != nil && len(p) != dim {
		return Value{}, fmt.Errorf("config: point has %d coordinates, the search space %d dimensions", len(p), dim)
	}
	if !found {
		return Value{}, fmt.Errorf("config: %s is not a search_space list", key)
	}
	return v, nil
}
