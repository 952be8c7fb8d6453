package engine

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The histogram makes its dense chunks as gaps fall in them; whatever the gaps (none, all
// short, straddling the dense limit, all long), its counts, mean, percentiles and per-user rate are
// those of the plain list of gaps, the rate summed in the same order (ascending gap, each
// gap's count at once).
func TestGapHistMatchesList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h gapHist
		var gaps []int64
		top := rapid.SampledFrom([]int64{10, 5000, denseGapUS - 1, denseGapUS + 10, 1 << 22}).Draw(t, "top")
		for range rapid.IntRange(0, 300).Draw(t, "n") {
			g := rapid.Int64Range(0, top).Draw(t, "gap")
			c := rapid.Int64Range(1, 3).Draw(t, "count")
			h.add(g, c)
			for range c {
				gaps = append(gaps, g)
			}
		}
		slices.Sort(gaps)
		for i, g := range gaps {
			if i+1 == len(gaps) || gaps[i+1] != g {
				if got, want := h.count(g), int64(i+1-slices.Index(gaps, g)); got != want {
					t.Fatalf("count(%d) = %d, want %d", g, got, want)
				}
			}
		}
		var mean, p50, p90, p99, rate float64
		var sum, pos int64
		for i, g := range gaps {
			sum += g
			if g > 0 && (i+1 == len(gaps) || gaps[i+1] != g) {
				c := int64(i + 1 - slices.Index(gaps, g))
				rate += float64(c) * 1e6 / float64(g)
				pos += c
			}
		}
		if n := len(gaps); n > 0 {
			mean = ms(float64(sum) / float64(n))
			q := func(p float64) float64 { return ms(float64(gaps[rank(p, n)])) }
			p50, p90, p99 = q(0.5), q(0.9), q(0.99)
		}
		if pos > 0 {
			rate /= float64(pos)
		}
		gm, g50, g90, g99 := h.stats()
		if gm != mean || g50 != p50 || g90 != p90 || g99 != p99 {
			t.Fatalf("stats %v %v %v %v, want %v %v %v %v", gm, g50, g90, g99, mean, p50, p90, p99)
		}
		if got := h.perUser(); got != rate {
			t.Fatalf("per-user rate %v, want %v", got, rate)
		}
	})
}

// BenchmarkGapHist is a short replay's inter-token histogram: a fresh one filled with
// 20,000 gaps of 2–40 ms (a canonical replay's steps) and read for the report. The
// chunks take the pages the gaps fall in; a full-length array took 512 KB, faulted in
// and walked by every report.
func BenchmarkGapHist(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var h gapHist
		g := int64(2000)
		for range 20_000 {
			g = 2000 + (g*7919+13)%38_000
			h.add(g, 1)
		}
		h.stats()
		h.perUser()
	}
}
