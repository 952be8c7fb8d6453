package model

import (
	"math"
	"testing"
)

// The experts MiniMax-M2.5's shape (256 experts, top-8) reaches per step under the collector's
// samplers and under independent routing: the counts README's ablation quotes.
func TestExpertsTouched(t *testing.T) {
	const experts, topK = 256, 8
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s: %.1f experts, want %.1f ± %.1f", what, got, want, tol)
		}
	}
	// Below the switch the narrow range crowds the tokens: at 32 tokens (256 token-expert
	// pairs) about 117 experts hold one, where independent routing reaches 163 and every
	// expert is reached when balanced.
	near("power law, 32 tokens", narrowPowerLawTouched(32, experts, topK, 1, 1.2), 117, 3)
	near("power law, 16 tokens", narrowPowerLawTouched(16, experts, topK, 1, 1.2), 86, 3)
	near("independent, 32 tokens", independentTouched(32, experts, topK, 1), 163.3, 0.1)
	near("balanced, 32 tokens", balancedTouched(32, experts, topK, 1), 256, 0)
	near("balanced, 16 tokens", balancedTouched(16, experts, topK, 1), 128, 0)
	// Under expert parallelism only the measured (busiest) rank's experts count.
	near("power law, 32 tokens, rank of 4", narrowPowerLawTouched(32, experts, topK, 4, 1.2), 32.5, 2)
	near("balanced, 32 tokens, rank of 4", balancedTouched(32, experts, topK, 4), 64, 0)
	near("independent, 32 tokens, rank of 4", independentTouched(32, experts, topK, 4), 163.3/4, 0.1)
	// One token reaches its top-k under every distribution.
	for _, f := range []func(int, int, int, int) float64{balancedTouched, independentTouched,
		func(n, e, k, ep int) float64 { return narrowPowerLawTouched(n, e, k, ep, 1.2) }} {
		near("one token", f(1, experts, topK, 1), topK, 0.01)
	}
	if a, b := narrowPowerLawTouched(24, experts, topK, 1, 1.2), narrowPowerLawTouched(24, experts, topK, 1, 1.2); a != b {
		t.Errorf("the sampler is not seeded: %v then %v", a, b)
	}
	if !narrowBranch(32, experts, topK) || narrowBranch(33, experts, topK) {
		t.Error("the narrow range ends where tokens × top-k passes the experts")
	}
}

// narrow_independent moves only the sampler's narrow-range rows, towards the balanced row by
// the experts independent routing reaches, and never past either measurement.
func TestNarrowIndependent(t *testing.T) {
	at := MoEShape{Hidden: 3072, Inter: 1536, Experts: 256, TopK: 8}
	pl := []point{{8, 61}, {16, 75.8}, {32, 93.3}, {48, 124.4}, {256, 192.1}}
	bal := []point{{8, 66.4}, {16, 100.1}, {32, 161.4}, {48, 163}, {256, 173.8}}
	got := narrowIndependent(pl, bal, at, 1, 1.2)
	want := map[float64][2]float64{
		8:   {61, 61},       // the power law already reaches as many experts as independent routing
		16:  {83, 87},       // (102 − 86) / (128 − 86) of the way
		32:  {114, 118},     // (163 − 117) / (256 − 117)
		48:  {124.4, 124.4}, // wide range: as measured
		256: {192.1, 192.1},
	}
	for _, p := range got {
		w := want[p.x]
		if p.us < w[0] || p.us > w[1] {
			t.Errorf("%g tokens: %.1f µs, want %.1f…%.1f", p.x, p.us, w[0], w[1])
		}
	}
	if len(got) != len(pl) {
		t.Fatalf("%d points from %d", len(got), len(pl))
	}
	if got := narrowIndependent(pl, nil, at, 1, 1.2); got[2].us != 93.3 {
		t.Errorf("without balanced rows the power law stands, got %.1f at 32 tokens", got[2].us)
	}
}
