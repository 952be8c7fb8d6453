package sweep

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// Random search over a derived space lands shapes by projection: picks are distinct,
// unevaluated candidates, the same for the same seed; the first draws follow the projected
// latent requests, and a round is completed from the permutation when projections repeat.
func TestProjectedRandomSearch(t *testing.T) {
	f := seedFile(t, "parallel_configs=[]", "gpu_budget=8", "router_mode=[kv_router, round_robin]", "overlap_score_credit=1.0",
		"prefill_load_scale=1.0", "router_temperature=0.0")
	s, err := NewSpace(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.shapes) != 1 || s.shapes[0].Projector.Len() != 12 || len(s.Candidates) != 24 {
		t.Fatalf("space: projector %v, %d candidates", s.shapes, len(s.Candidates))
	}
	// The encoding: the parallel configuration's four axes (ratio, log2 size, attention dp,
	// FFN ep) beside router_mode's two one-hot axes.
	if x := s.Candidates[0].X; len(x) != 6 {
		t.Errorf("encoding %v", x)
	}
	run := func(seed uint64) []int {
		p, err := newProposer(Random, s, seed)
		if err != nil {
			t.Fatal(err)
		}
		done := make([]bool, len(s.Candidates))
		var all []int
		for range 5 {
			picks, err := p.next(nil, done, 5)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range picks {
				if done[c] {
					t.Fatalf("candidate %d picked twice", c)
				}
				done[c] = true
			}
			all = append(all, picks...)
		}
		return all
	}
	a := run(7)
	if len(a) != 24 {
		t.Errorf("%d picks over 5 rounds of 5 in a space of 24", len(a))
	}
	if !slices.Equal(a, run(7)) {
		t.Error("the same seed picked differently")
	}
	// The first pick is the projection of the first latent draw on the seeded stream.
	rng := rand.New(rand.NewPCG(7, rngStream))
	rng.Perm(len(s.Candidates))
	base := slices.Clone(s.Candidates[rng.IntN(len(s.Candidates))].Point)
	base[s.shapeDim] = s.project(rng)
	if c, _ := s.Lookup(f, base); c != a[0] {
		t.Errorf("first pick %d, the projected draw %d", a[0], c)
	}
}
