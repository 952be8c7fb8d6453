package specdec

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// Accepted stays in [0, k], repeats for a seed, and its mean over many draws is the chain's
// expectation Σ first·later^(i−1).
func TestAcceptedProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := Config{DraftLen: rapid.IntRange(1, 6).Draw(t, "k"), First: rapid.Float64Range(0.05, 1).Draw(t, "first"), Later: rapid.Float64Range(0.05, 1).Draw(t, "later")}
		seed := rapid.Uint64().Draw(t, "seed")
		a, b := NewSampler(c, seed), NewSampler(c, seed)
		const n = 20000
		sum := 0
		for range n {
			x := a.Accepted()
			if x != b.Accepted() {
				t.Fatal("one seed, two draws")
			}
			if x < 0 || x > c.DraftLen {
				t.Fatalf("accepted %d of %d drafts", x, c.DraftLen)
			}
			sum += x
		}
		if got, want := float64(sum)/n, c.MeanAccepted(); math.Abs(got-want) > 0.05*float64(c.DraftLen) {
			t.Fatalf("mean accepted %.3f, want %.3f", got, want)
		}
	})
}

// The defaults: 0.85 then 0.63, so 3 drafts accept 0.85 + 0.5355 + 0.337365 ≈ 1.72 a step,
// and the original module's 7 drafts 2.20 (the 3.20 tokens a step the default is derived from).
func TestDefaults(t *testing.T) {
	if got := (Config{DraftLen: 3}).MeanAccepted(); math.Abs(got-1.722865) > 1e-6 {
		t.Fatalf("3 drafts accept %v", got)
	}
	if got := (Config{DraftLen: 7}).MeanAccepted(); math.Abs(1+got-3.20) > 0.02 {
		t.Fatalf("7 drafts give %v tokens a step, want 3.20", 1+got)
	}
	for _, bad := range []Config{{DraftLen: -1}, {DraftLen: MaxDraftLen + 1}, {First: 1.5}, {Later: -0.1}, {First: math.NaN()}} {
		if bad.Validate() == nil {
			t.Fatalf("%+v validated", bad)
		}
	}
}
