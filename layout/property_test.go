package layout

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// spaceGen draws a search space and a probe whose KV capacity grows with the attention TP.
func spaceGen(t *rapid.T) (Space, Probe) {
	budget := rapid.IntRange(1, 40).Draw(t, "budget")
	rules, _ := RulesFor(rapid.SampledFrom([]string{"vllm", "trtllm", "sglang", "sglang/deepep_moe", "sglang/megamoe"}).Draw(t, "backend"))
	sp := Space{
		MoE: rapid.Bool().Draw(t, "moe"), Rules: rules, Budget: budget,
		MinBudget: rapid.IntRange(0, budget).Draw(t, "min"),
		MaxSeqLen: rapid.IntRange(1, 5000).Draw(t, "maxseq"),
	}
	perGPU := int64(rapid.IntRange(0, 3000).Draw(t, "perGPU"))
	return sp, fakeProbe(perGPU)
}

// legal: the width constraint, a pure pattern, the backend's filters, the ladder, and a KV
// cache that holds the longest sequence.
func legal(t *rapid.T, sp Space, probe Probe, s Shape) {
	fit, _ := probe(s)
	switch {
	case s.TP*s.AttentionDP != s.MoETP*s.MoEEP:
		t.Fatalf("%s breaks the width constraint", s)
	case sp.MoE && s.Strategy() == "mixed" || !sp.MoE && s.Strategy() != "tp":
		t.Fatalf("%s is not a pure pattern", s)
	case sp.MoE && !sp.Rules.allows(s): // the filters are MoE filters: a dense model runs plain TP
		t.Fatalf("%s is refused by %s", s, sp.Rules.Backend)
	case fit.KVTokens <= int64(sp.MaxSeqLen) || fit.Untimed != "":
		t.Fatalf("%s kept: KV %d tokens for %d, untimed %q", s, fit.KVTokens, sp.MaxSeqLen, fit.Untimed)
	}
	ok := false
	for _, g := range GPUsPerWorker {
		ok = ok || g == s.GPUs()
	}
	if !ok {
		t.Fatalf("%s: %d GPUs is off the ladder", s, s.GPUs())
	}
}

// Every derived configuration is feasible, within [min_gpu_budget, gpu_budget], and unique;
// every projection of a configuration's own features returns it, with no mode fallback.
func TestDerivedConfigsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sp, probe := spaceGen(t)
		agg, skipped, err := sp.Agg(probe)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[Fleet]bool{}
		for _, f := range agg {
			legal(t, sp, probe, f.Shape)
			if f.GPUs() < sp.MinBudget || f.GPUs() > sp.Budget || f.Replicas < 1 {
				t.Fatalf("%s uses %d GPUs, outside [%d, %d]", f, f.GPUs(), sp.MinBudget, sp.Budget)
			}
			if seen[f] {
				t.Fatalf("%s twice", f)
			}
			seen[f] = true
		}
		for _, s := range skipped {
			if s.Reason == "" {
				t.Fatalf("%s skipped without a reason", s.Shape)
			}
		}
		pairs, _, err := sp.Disagg(probe)
		if err != nil {
			t.Fatal(err)
		}
		seenP := map[Pair]bool{}
		for _, p := range pairs {
			legal(t, sp, probe, p.Prefill.Shape)
			legal(t, sp, probe, p.Decode.Shape)
			if p.GPUs() < sp.MinBudget || p.GPUs() > sp.Budget {
				t.Fatalf("%s uses %d GPUs", p, p.GPUs())
			}
			if seenP[p] {
				t.Fatalf("%s twice", p)
			}
			seenP[p] = true
		}
		if len(agg) > 0 {
			pr, err := NewAggProjector(agg, sp.Budget, sp.MoE)
			if err != nil {
				t.Fatal(err)
			}
			for i := range agg {
				if got := pr.Project(pr.Features(i)); got.Index != i || got.ModeProjected || got.Distance != 0 {
					t.Fatalf("%s projects to %s (%+v)", agg[i], agg[got.Index], got)
				}
			}
			if d := pr.Project(pr.Default()); d.Index < 0 || d.Index >= len(agg) {
				t.Fatalf("default projects outside the pool: %+v", d)
			}
		}
		if len(pairs) > 0 && len(pairs) < 400 {
			pr, err := NewDisaggProjector(pairs, sp.Budget, sp.MoE)
			if err != nil {
				t.Fatal(err)
			}
			for i := range pairs {
				if got := pr.Project(pr.Features(i)); got.Index != i {
					t.Fatalf("%s projects to %s", pairs[i], pairs[got.Index])
				}
			}
		}
	})
}

// A projection depends on the request and the pool only: any latent request lands on a member
// with the fewest mode mismatches, the same one every time.
func TestProjectionIsAFunction(t *testing.T) {
	vllm, _ := RulesFor("vllm")
	sp := Space{MoE: true, Rules: vllm, Budget: 32, MaxSeqLen: 1500}
	agg, _, _ := sp.Agg(fakeProbe(1000))
	pr, _ := NewAggProjector(agg, sp.Budget, sp.MoE)
	rapid.Check(t, func(t *rapid.T) {
		z := Latent{
			UsedGPURatio:   rapid.Float64Range(0, 1.2).Draw(t, "ratio"),
			GPUsPerEngine:  []float64{float64(rapid.SampledFrom([]int{1, 2, 4, 8, 16}).Draw(t, "g"))},
			AttentionModes: []string{rapid.SampledFrom([]string{"tp", "dp"}).Draw(t, "attn")},
			FFNModes:       []string{rapid.SampledFrom([]string{"ep", "tp"}).Draw(t, "ffn")},
		}
		a, b := pr.Project(z), pr.Project(z)
		if a != b {
			t.Fatalf("%v projected to %+v then %+v", z, a, b)
		}
		got := pr.Features(a.Index)
		if (got.AttentionModes[0] != z.AttentionModes[0] || got.FFNModes[0] != z.FFNModes[0]) != a.ModeProjected {
			t.Fatalf("%v → %v: mode_projected %v", z, got, a.ModeProjected)
		}
	})
}

// The reference's worked example (search-space.md, "Projection onto a valid config"): a
// request for A's numbers with decode FFN mode tp lands on B, whose actual ratios are 0.875
// and 4/28.
func TestProjectionReferenceExample(t *testing.T) {
	a := Pair{Fleet{Shape{4, 1, 1, 4}, 2}, Fleet{Shape{8, 1, 1, 8}, 1}}
	b := Pair{Fleet{Shape{4, 1, 1, 4}, 1}, Fleet{Shape{8, 1, 8, 1}, 3}}
	pr, err := NewDisaggProjector([]Pair{a, b}, 32, true)
	if err != nil {
		t.Fatal(err)
	}
	z := pr.Features(0)
	z.FFNModes = []string{"ep", "tp"}
	got := pr.Project(z)
	f := pr.Features(got.Index)
	if got.Index != 1 || got.ModeProjected || f.UsedGPURatio != 0.875 || fmt.Sprintf("%.4f", f.PrefillGPUShare) != "0.1429" {
		t.Errorf("projected to %d (%+v) with %v", got.Index, got, f)
	}
	// With A's modes A wins, at distance 0.
	if got := pr.Project(pr.Features(0)); got.Index != 0 || got.Distance != 0 {
		t.Errorf("A's own request: %+v", got)
	}
}

// The defaults: ratio 1 clipped to the pool, the engine size nearest the geometric centre
// ({2, 4, 8} → 4; {1, 2, 4, 8, 16} → 4, a tie between 2 and 8 would take 2), tp then ep.
func TestProjectionDefault(t *testing.T) {
	vllm, _ := RulesFor("vllm")
	sp := Space{MoE: true, Rules: vllm, Budget: 16, MaxSeqLen: 1500}
	agg, _, _ := sp.Agg(fakeProbe(1000))
	pr, _ := NewAggProjector(agg, sp.Budget, sp.MoE)
	z := pr.Default()
	if z.UsedGPURatio != 1 || z.GPUsPerEngine[0] != 4 || z.AttentionModes[0] != "tp" || z.FFNModes[0] != "ep" {
		t.Errorf("default %v", z)
	}
	if d := agg[pr.Project(z).Index]; d.String() != "tp4-dp1-moetp1-ep4-x4" {
		t.Errorf("default projects to %s", d)
	}
	if g := geometricCentre([]float64{2, 8}); g != 2 {
		t.Errorf("tie {2, 8} → %g, want 2", g)
	}
}

// A sampled latent request stays within the pool's spans and names only sizes and modes the
// pool has, for one role or two.
func TestSampleWithinPool(t *testing.T) {
	vllm, _ := RulesFor("vllm")
	sp := Space{MoE: true, Rules: vllm, Budget: 16, MaxSeqLen: 1500}
	agg, _, _ := sp.Agg(fakeProbe(1000))
	pairs, _, _ := sp.Disagg(fakeProbe(1000))
	aggPr, _ := NewAggProjector(agg, 16, true)
	disPr, _ := NewDisaggProjector(pairs, 16, true)
	rapid.Check(t, func(t *rapid.T) {
		rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		for _, pr := range []*Projector{aggPr, disPr} {
			z := pr.Sample(rng)
			for j, v := range pr.numeric(z) {
				if v < pr.lo[j] || v > pr.hi[j] {
					t.Fatalf("%v: feature %d = %g outside [%g, %g]", z, j, v, pr.lo[j], pr.hi[j])
				}
			}
			for r := range z.GPUsPerEngine {
				has := func(same func(f Latent) bool) bool { return slices.ContainsFunc(pr.feats, same) }
				if !has(func(f Latent) bool { return f.GPUsPerEngine[r] == z.GPUsPerEngine[r] }) ||
					!has(func(f Latent) bool { return f.AttentionModes[r] == z.AttentionModes[r] }) ||
					!has(func(f Latent) bool { return f.FFNModes[r] == z.FFNModes[r] }) {
					t.Fatalf("%v: role %d names a size or mode the pool lacks", z, r)
				}
			}
		}
	})
}
