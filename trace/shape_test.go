package trace

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// uniform is a trace with one request every 100 ms for span seconds.
func uniform(span int) *Trace {
	t := &Trace{Name: "u", BlockSize: 512}
	for ms := int64(0); ms < int64(span)*1000; ms += 100 {
		t.Requests = append(t.Requests, Request{TimestampMS: ms, InputLength: 1, OutputLength: 1, HashIDs: []int64{1}})
	}
	return t
}

// countIn is how many requests arrive in [a, b) seconds.
func countIn(t *Trace, a, b float64) int {
	n := 0
	for _, r := range t.Requests {
		if s := float64(r.TimestampMS) / 1000; s >= a && s < b {
			n++
		}
	}
	return n
}

// A burst ×4 for 60 s of the source squeezes its 600 requests into 15 s; the rest keep the
// source's 10 per second, shifted 45 s earlier after the burst.
func TestBurstShape(t *testing.T) {
	s, err := ParseShape("burst:100:60:4")
	if err != nil {
		t.Fatal(err)
	}
	out := Reshape(uniform(300), s)
	if n := countIn(out, 100, 115); n != 600 {
		t.Fatalf("%d requests in the burst's 15 s, want 600", n)
	}
	if n := countIn(out, 115, 125); n != 100 {
		t.Fatalf("%d requests in the 10 s after, want 100", n)
	}
	if last := out.Requests[len(out.Requests)-1].TimestampMS; last != 299_900-45_000 {
		t.Fatalf("last arrival %d ms, want %d", last, 299_900-45_000)
	}
}

// A ramp ×1 → ×3 over 120 s: its closed form agrees with a numerical integral, and the
// shaped rate near the end of the ramp is three times the start's.
func TestRampShape(t *testing.T) {
	s, _ := ParseShape("ramp:1:3:120")
	for _, x := range []float64{10, 60, 119, 200} {
		want := quad.Fixed(func(u float64) float64 {
			return 1 / (1 + 2*math.Min(u, 120)/120)
		}, 0, math.Min(x, 120), 64, nil, 0) + math.Max(0, x-120)/3
		if got := s.warp(x, 0, 0); math.Abs(got-want) > 1e-6 {
			t.Fatalf("T(%g) = %g, want %g", x, got, want)
		}
	}
	out := Reshape(uniform(300), s)
	early := countIn(out, 0, 5)
	end := s.warp(120, 0, 0)
	late := countIn(out, end-5, end)
	if r := float64(late) / float64(early); r < 2.6 || r > 3.1 {
		t.Fatalf("rate at the ramp's end / start = %d/%d = %.2f, want about 3", late, early, r)
	}
}

// A diurnal shape: over whole periods the mean rate is unchanged up to the period's
// harmonic mean; at the crest the rate is 1 + amplitude times the source's.
func TestDiurnalShape(t *testing.T) {
	s, _ := ParseShape("diurnal:600:0.5")
	out := Reshape(uniform(1200), s)
	crest := s.warp(150, 0, 0) // sin peaks a quarter period in
	n := countIn(out, crest-5, crest+5)
	if n < 140 || n > 160 {
		t.Fatalf("%d requests in 10 s at the crest, want about 150", n)
	}
	for i := 1; i < len(out.Requests); i++ {
		if out.Requests[i].TimestampMS < out.Requests[i-1].TimestampMS {
			t.Fatal("reshaping reordered arrivals")
		}
	}
}

func TestParseShapeErrors(t *testing.T) {
	for _, bad := range []string{"", "ramp", "ramp:1:2", "ramp:0:2:10", "burst:1:0:2", "diurnal:60:1", "diurnal:x:0.5", "wave:1:2", "ramp:1:2:NaN"} {
		if _, err := ParseShape(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

func FuzzParseShape(f *testing.F) {
	for _, s := range []string{"ramp:1:3:120", "burst:100:60:4", "diurnal:600:0.5", "burst:-1:1:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseShape(spec)
		if err != nil {
			return
		}
		prev, prevT := 0.0, 0.0
		for _, x := range []float64{0, 1, 50, 1e4} {
			T := s.warp(x, prev, prevT)
			if math.IsNaN(T) || T < prevT {
				t.Fatalf("%s: T(%g) = %g after %g", spec, x, T, prevT)
			}
			prev, prevT = x, T
		}
	})
}
