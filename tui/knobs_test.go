package tui

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Stepping a knob always lands on a listed value, never leaves the list's range, a step
// up then down (away from the ends) comes back, and a step that cannot move says why.
func TestStepProperties(t *testing.T) {
	sp := testSpace()
	rapid.Check(t, func(t *rapid.T) {
		k := Knobs{
			Mode:        rapid.SampledFrom(sp.Modes).Draw(t, "mode"),
			Credit:      rapid.SampledFrom(sp.Credits).Draw(t, "credit"),
			Scale:       rapid.SampledFrom(sp.Scales).Draw(t, "scale"),
			Temperature: rapid.SampledFrom(sp.Temperatures).Draw(t, "temperature"),
			Concurrency: rapid.SampledFrom(sp.Concurrencies).Draw(t, "concurrency"),
		}
		which := knob(rapid.IntRange(0, int(numKnobs)-1).Draw(t, "knob"))
		dir := rapid.SampledFrom([]int{-1, 1}).Draw(t, "dir")
		next, note := sp.step(k, which, dir)
		if next == k && note == "" {
			t.Fatalf("%s %+d from %+v: no move and nothing said", which.key(), dir, k)
		}
		if !slices.Contains(sp.Modes, next.Mode) || !slices.Contains(sp.Credits, next.Credit) ||
			!slices.Contains(sp.Scales, next.Scale) || !slices.Contains(sp.Temperatures, next.Temperature) ||
			!slices.Contains(sp.Concurrencies, next.Concurrency) {
			t.Fatalf("step left the space: %+v", next)
		}
		changed := 0
		for _, same := range []bool{next.Mode == k.Mode, next.Credit == k.Credit, next.Scale == k.Scale,
			next.Temperature == k.Temperature, next.Concurrency == k.Concurrency} {
			if !same {
				changed++
			}
		}
		if changed > 1 {
			t.Fatalf("one step changed %d knobs: %+v → %+v", changed, k, next)
		}
		if changed == 1 {
			if back, _ := sp.step(next, which, -dir); back != k {
				t.Fatalf("step %d then %d: %+v → %+v → %+v", dir, -dir, k, next, back)
			}
		}
	})
}

func TestStepOffListValue(t *testing.T) {
	sp := testSpace()
	k := Knobs{Mode: "kv_router", Scale: 3}
	if got, _ := sp.step(k, knobScale, +1); got.Scale != 4 {
		t.Errorf("→ from 3 = %v, want 4", got.Scale)
	}
	if got, _ := sp.step(k, knobScale, -1); got.Scale != 2 {
		t.Errorf("← from 3 = %v, want 2", got.Scale)
	}
	if got, _ := sp.step(Knobs{Mode: "fastest"}, knobMode, +1); got.Mode != "kv_router" {
		t.Errorf("→ from an unknown mode = %q", got.Mode)
	}
	// Every knob stops at the ends of its list and says so (issue 31: model_name wrapped
	// round while the numbers stopped silently).
	if got, note := sp.step(Knobs{Mode: "kv_router"}, knobMode, -1); got.Mode != "kv_router" ||
		note != "router_mode: kv_router is the first value; → steps back" {
		t.Errorf("← on the first mode: %q, %q", got.Mode, note)
	}
	top := Knobs{Mode: "kv_router", Scale: sp.Scales[len(sp.Scales)-1]}
	if got, note := sp.step(top, knobScale, +1); got != top || note != "prefill_load_scale: 32.0 is the last value; ← steps back" {
		t.Errorf("→ on the highest scale: %+v, %q", got, note)
	}
}

// Resampling keeps the mean of a row whose length divides evenly, and passes short rows.
func TestResampleProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cols := rapid.IntRange(1, 40).Draw(t, "cols")
		per := rapid.IntRange(1, 5).Draw(t, "per")
		row := rapid.SliceOfN(rapid.Float64Range(0, 1000), cols*per, cols*per).Draw(t, "row")
		out := resample(row, cols)
		if len(out) != cols {
			t.Fatalf("%d columns, want %d", len(out), cols)
		}
		mean := func(xs []float64) float64 {
			s := 0.0
			for _, x := range xs {
				s += x
			}
			return s / float64(len(xs))
		}
		if d := math.Abs(mean(out) - mean(row)); d > 1e-9*math.Max(1, mean(row)) {
			t.Fatalf("mean %v → %v", mean(row), mean(out))
		}
	})
	if got := resample([]float64{1, math.NaN(), 3}, 10); len(got) != 3 {
		t.Fatalf("short row resampled to %d", len(got))
	}
	if got := resample([]float64{math.NaN(), math.NaN(), 2, 4}, 2); !math.IsNaN(got[0]) || got[1] != 3 {
		t.Fatalf("NaN windows: %v", got)
	}
}

func TestFillGaps(t *testing.T) {
	nan := math.NaN()
	got := fillGaps([]float64{nan, 2, nan, 5, nan})
	if !slices.Equal(got, []float64{2, 2, 2, 5, 5}) {
		t.Fatalf("fillGaps = %v", got)
	}
	if fillGaps([]float64{nan, nan}) != nil {
		t.Fatal("all-NaN series should give no chart")
	}
}

// The arrival_speedup_ratio knob shows only in open loop, and steps through its ladder.
func TestSpeedupKnobOpenLoopOnly(t *testing.T) {
	sp := Space{Concurrencies: []int{0, 32}, Speedups: []float64{0.5, 1, 2}}
	closed := Knobs{Concurrency: 32, Speedup: 1}
	if slices.Contains(sp.knobs(closed), knobSpeedup) {
		t.Fatal("speedup knob shown in closed loop")
	}
	open := Knobs{Concurrency: 0, Speedup: 1}
	if !slices.Contains(sp.knobs(open), knobSpeedup) {
		t.Fatal("speedup knob missing in open loop")
	}
	next, _ := sp.step(open, knobSpeedup, 1)
	if next.Speedup != 2 || knobSpeedup.value(next) != "×2.0" || next.String() != next.Router()+" c=0 ×2.0" {
		t.Fatalf("stepped to %v (%q, %q)", next.Speedup, knobSpeedup.value(next), next.String())
	}
}
