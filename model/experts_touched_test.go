package model

import (
	"math"
	"slices"
	"testing"
)

// The experts MiniMax-M2.5's shape (256 experts, top-8) reaches per step under the collector's
// samplers and under independent routing: the counts docs/validation.md's ablation quotes.
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
	got, unpaired := narrowIndependent(pl, bal, at, 1, 1.2)
	if len(unpaired) != 0 {
		t.Errorf("every narrow-range row has its balanced row, yet %v are unpaired", unpaired)
	}
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
	got, unpaired = narrowIndependent(pl, bal[1:], at, 1, 1.2)
	if got[0].us != 61 || got[2].us < 114 || !slices.Equal(unpaired, []int{8}) {
		t.Errorf("without the 8-token balanced row: %.1f µs at 8 tokens, %.1f at 32, unpaired %v; want 61 as measured, the 32 re-priced, [8] named", got[0].us, got[2].us, unpaired)
	}
}

// What narrow_independent rests on: at a decode step's few tokens the expert kernel reads the
// weights of every expert it reaches, so its measured time is a constant plus the experts
// reached times one expert's weights at HBM bandwidth, whichever distribution spread the
// tokens (TRT-LLM FP8 block-scale experts, B200, MiniMax-M2.5 at moe_tp 4: about 33 µs +
// 0.50 µs per expert, 3.5 MB of FP8 weights at 7.0 TB/s).
func TestExpertCostFollowsExpertsReached(t *testing.T) {
	dir := sharedAICDir(t)
	pl, bal := importSeedTP4(t, dir, ""), importSeedTP4(t, dir, "balanced")
	s := pl.LLM
	layers := float64(s.MoELayers())
	type obs struct{ reached, us float64 }
	var pts []obs
	for _, tokens := range []int{8, 16, 32} {
		pts = append(pts, obs{narrowPowerLawTouched(tokens, s.Experts, s.TopK, 1, moePowerLawAlpha), pl.MoE.Values[int(axisPos(float64(tokens)))] / layers})
	}
	for _, tokens := range []int{8, 16, 32, 64} {
		pts = append(pts, obs{balancedTouched(tokens, s.Experts, s.TopK, 1), bal.MoE.Values[int(axisPos(float64(tokens)))] / layers})
	}
	var sx, sy, sxx, sxy float64
	for _, p := range pts {
		sx, sy, sxx, sxy = sx+p.reached, sy+p.us, sxx+p.reached*p.reached, sxy+p.reached*p.us
	}
	n := float64(len(pts))
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	fixed := (sy - slope*sx) / n
	for _, p := range pts {
		if fit := fixed + slope*p.reached; math.Abs(fit-p.us) > 0.04*p.us {
			t.Errorf("%.0f experts reached: %.1f µs measured, %.1f on the line %.1f + %.3f × experts", p.reached, p.us, fit, fixed, slope)
		}
	}
	expertBytes := 3 * float64(s.Hidden) * float64(s.ExpertInter) / 4 // FP8 gate, up and down, a quarter per rank
	if bw := expertBytes / (slope * 1e-6); bw < 0.8*pl.GPU.MemBW || bw > pl.GPU.MemBW {
		t.Errorf("each expert reached costs %.3f µs: %.1f TB/s for its %.2f MB, want near the GPU's %.1f TB/s", slope, bw/1e12, expertBytes/1e6, pl.GPU.MemBW/1e12)
	}
	t.Logf("%.1f µs + %.3f µs per expert reached (%.1f TB/s)", fixed, slope, expertBytes/(slope*1e-6)/1e12)
}
