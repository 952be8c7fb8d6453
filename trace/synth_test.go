package trace

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestToolagentTargets(t *testing.T) {
	seeds := []uint64{DefaultSeed}
	if !testing.Short() {
		seeds = append(seeds, 2, 3)
	}
	for _, seed := range seeds {
		tr, err := Synthesize("toolagent", seed, 0)
		if err != nil {
			t.Fatal(err)
		}
		s := Stats(tr)
		if s.Requests != 23608 {
			t.Errorf("seed %d: requests %d", seed, s.Requests)
		}
		if math.Abs(float64(s.SpanMS)-3_600_000) > 36_000 {
			t.Errorf("seed %d: span %d ms, want 3,600,000 ± 1 %%", seed, s.SpanMS)
		}
		if rel := s.MeanInputLength/8596 - 1; math.Abs(rel) > 0.03 {
			t.Errorf("seed %d: mean input %.0f, want 8,596 ± 3 %%", seed, s.MeanInputLength)
		}
		if rel := s.MeanOutputLength/182 - 1; math.Abs(rel) > 0.03 {
			t.Errorf("seed %d: mean output %.1f, want 182 ± 3 %%", seed, s.MeanOutputLength)
		}
		if s.PrefixCacheRatio < 0.57 || s.PrefixCacheRatio > 0.61 {
			t.Errorf("seed %d: prefix-cache ratio %.3f, want 0.57–0.61", seed, s.PrefixCacheRatio)
		}
		if s.MaxInputLength+s.MaxOutputLength > 131072 {
			t.Errorf("seed %d: max input %d + max output %d exceed 131,072", seed, s.MaxInputLength, s.MaxOutputLength)
		}
		if s.Sharing.DistinctFirstBlocks != 7 || s.Sharing.ContinuationRequests < s.Requests/4 {
			t.Errorf("seed %d: sharing %+v: want 7 prompt families and many session continuations", seed, s.Sharing)
		}
	}
}

func TestConversationProfileFit(t *testing.T) {
	tr, err := Builtin("conversation")
	if err != nil {
		t.Fatal(err)
	}
	s := Stats(tr)
	if tr.Name != "builtin:conversation" || s.Requests != 12031 {
		t.Fatalf("name %q, requests %d", tr.Name, s.Requests)
	}
	checks := []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"span_ms", float64(s.SpanMS), 3_537_000, 0.02},
		{"mean_input_length", s.MeanInputLength, 12035, 0.06},
		{"mean_output_length", s.MeanOutputLength, 343, 0.03},
		{"prefix_cache_ratio", s.PrefixCacheRatio, 0.3664, 0.04},
		{"p50 input", s.InputLength.P50, 6909, 0.08},
	}
	for _, c := range checks {
		if math.Abs(c.got/c.want-1) > c.tol {
			t.Errorf("%s = %.3f, want %.3f ± %.0f %%", c.name, c.got, c.want, 100*c.tol)
		}
	}
	if s.Sharing.DistinctFirstBlocks != 1 {
		t.Errorf("every request should start with the one shared system-prompt block, got %d first blocks", s.Sharing.DistinctFirstBlocks)
	}
	// Timestamps sit on 3-second ticks, give or take a millisecond, as in the real trace.
	for _, r := range tr.Requests {
		if m := (r.TimestampMS + 1) % 3000; m > 2 {
			t.Fatalf("timestamp %d is not on a 3 s tick", r.TimestampMS)
		}
	}
}

func TestSynthesizeDeterministic(t *testing.T) {
	for _, p := range Profiles() {
		var a, b, c bytes.Buffer
		for _, x := range []struct {
			buf  *bytes.Buffer
			seed uint64
		}{{&a, 7}, {&b, 7}, {&c, 8}} {
			tr, err := Synthesize(p, x.seed, 2000)
			if err != nil {
				t.Fatal(err)
			}
			if err := Write(x.buf, tr.Requests); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: same seed gave different traces", p)
		}
		if bytes.Equal(a.Bytes(), c.Bytes()) {
			t.Errorf("%s: seeds 7 and 8 gave the same trace", p)
		}
	}
}

// Any synthesized trace is a valid Mooncake trace: it survives Write and Parse unchanged,
// its ids are numbered by first appearance, and a follow-up shares a prefix with its session.
func TestSynthesizeValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.SampledFrom(Profiles()).Draw(t, "profile")
		n := rapid.IntRange(1, 600).Draw(t, "requests")
		seed := rapid.Uint64().Draw(t, "seed")
		tr, err := Synthesize(p, seed, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Requests) != n {
			t.Fatalf("got %d requests, want %d", len(tr.Requests), n)
		}
		var buf bytes.Buffer
		if err := Write(&buf, tr.Requests); err != nil {
			t.Fatal(err)
		}
		back, err := Parse(&buf, "synth", DefaultBlockSize)
		if err != nil {
			t.Fatal(err)
		}
		next := int64(0)
		for i, r := range back.Requests {
			if r.InputLength+r.OutputLength > 131072 {
				t.Fatalf("request %d: %d+%d tokens exceed the context", i, r.InputLength, r.OutputLength)
			}
			for _, id := range r.HashIDs {
				if id > next {
					t.Fatalf("request %d: id %d appears before id %d", i, id, next)
				}
				if id == next {
					next++
				}
			}
		}
	})
}

func TestSynthesizeScalesSpan(t *testing.T) {
	tr, err := Synthesize("toolagent", 1, 2361)
	if err != nil {
		t.Fatal(err)
	}
	span := tr.Requests[len(tr.Requests)-1].TimestampMS
	if span < 300_000 || span > 420_000 {
		t.Fatalf("a tenth of the requests should span about a tenth of the hour, got %d ms", span)
	}
}

func TestUnknownProfile(t *testing.T) {
	if _, err := Synthesize("chat", 1, 0); err == nil || !strings.Contains(err.Error(), `"chat"`) {
		t.Fatalf("got %v", err)
	}
	if _, err := Load("builtin:nope", 0); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("got %v", err)
	}
	if _, err := Load("builtin:toolagent", 64); err == nil || !strings.Contains(err.Error(), "512-token blocks") {
		t.Fatalf("got %v", err)
	}
}

func TestLoadBuiltin(t *testing.T) {
	tr, err := Load("builtin:toolagent", 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name != "builtin:toolagent" || tr.BlockSize != 512 || len(tr.Requests) != 23608 {
		t.Fatalf("%s block %d, %d requests", tr.Name, tr.BlockSize, len(tr.Requests))
	}
}

func BenchmarkSynthesizeToolagent(b *testing.B) {
	for b.Loop() {
		if _, err := Synthesize("toolagent", DefaultSeed, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSynthesizeConversation(b *testing.B) {
	for b.Loop() {
		if _, err := Synthesize("conversation", DefaultSeed, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// lowerBound finds what slices.BinarySearch finds in every ascending list of non-NaN values,
// duplicates, signed zeros and probes outside the list included.
func TestLowerBoundMatchesBinarySearch(t *testing.T) {
	// The constant -0.0 is +0 in Go; the negative zero is made at run time.
	negZero := math.Copysign(0, -1)
	rapid.Check(t, func(t *rapid.T) {
		fs := rapid.SliceOf(rapid.SampledFrom([]float64{negZero, 0, 0.1, 0.25, 0.5, 0.5, 0.75, 1, 2, math.Inf(1), math.Inf(-1)})).Draw(t, "floats")
		slices.Sort(fs)
		x := rapid.SampledFrom([]float64{negZero, 0, 0.05, 0.25, 0.5, 0.6, 1, 3, math.Inf(1), math.Inf(-1)}).Draw(t, "x")
		if want, _ := slices.BinarySearch(fs, x); lowerBound(fs, x) != want {
			t.Fatalf("lowerBound(%v, %v) = %d, slices.BinarySearch %d", fs, x, lowerBound(fs, x), want)
		}
		is := rapid.SliceOf(rapid.IntRange(-5, 5)).Draw(t, "ints")
		slices.Sort(is)
		y := rapid.IntRange(-7, 7).Draw(t, "y")
		if want, _ := slices.BinarySearch(is, y); lowerBound(is, y) != want {
			t.Fatalf("lowerBound(%v, %d) = %d, slices.BinarySearch %d", is, y, lowerBound(is, y), want)
		}
	})
}

// sortPlaced, and its heapsort fallback, order turns as slices.SortFunc by (time, placement)
// does, many equal times among them.
func TestSortPlacedMatchesSortFunc(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 300).Draw(t, "n")
		times := rapid.IntRange(1, 40).Draw(t, "distinct times")
		s := make([]placed, n)
		for i := range s {
			s[i] = placed{at: float64(rapid.IntRange(0, times).Draw(t, "at")) / 4, seq: int32(i), turn: int32(i)}
		}
		want := slices.Clone(s)
		slices.SortFunc(want, func(a, b placed) int {
			if c := cmp.Compare(a.at, b.at); c != 0 {
				return c
			}
			return cmp.Compare(a.seq, b.seq)
		})
		got, heap := slices.Clone(s), slices.Clone(s)
		sortPlaced(got)
		heapsortPlaced(heap)
		if !slices.Equal(got, want) || !slices.Equal(heap, want) {
			t.Fatalf("sortPlaced %v\nheapsort %v\nwant %v", got, heap, want)
		}
	})
}
