package router

import (
	"testing"

	"pgregory.net/rapid"
)

// TestReusedRouterIsANewOne: a router built in the memory of one that has routed and
// indexed (NewGroupedReusing), for the same or another fleet size, block grouping and
// knobs, answers exactly as a new router through any events and routes: the same worker
// for every request, the same loads, overlaps and cached-block counts.
func TestReusedRouterIsANewOne(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var prev *Router
		for life := range 2 {
			workers := fleetSize(t)
			g := rapid.SampledFrom([]int{1, 2, 8, 32}).Draw(t, "sub_blocks")
			cfg := DefaultConfig()
			cfg.PrefillLoadScale = rapid.SampledFrom([]float64{0, 1, 32}).Draw(t, "scale")
			cfg.Temperature = rapid.SampledFrom([]float64{0, 0.5}).Draw(t, "temperature")
			seed := rapid.Uint64().Draw(t, "seed")
			fresh, err := NewGrouped(cfg, workers, g, seed)
			if err != nil {
				t.Fatal(err)
			}
			routers := []*Router{fresh}
			if prev != nil {
				reused, err := NewGroupedReusing(prev, cfg, workers, g, seed)
				if err != nil {
					t.Fatal(err)
				}
				routers = append(routers, reused)
			}
			driveAlike(t, routers, workers, g, life)
			prev = routers[len(routers)-1]
		}
	})
}

// driveAlike feeds every router the same drawn events and requests (some finished, some
// left in flight) and fails when any answers differently from the first.
func driveAlike(t *rapid.T, routers []*Router, workers, g, life int) {
	chains, universe := groupedTree(t, g)
	out := make([][]int, len(routers))
	for i := range out {
		out[i] = make([]int, workers)
	}
	var nextID int64
	for range rapid.IntRange(1, 60).Draw(t, "ops") {
		switch rapid.IntRange(0, 2).Draw(t, "op") {
		case 0:
			ev := groupedEvent(t, workers, universe)
			for _, r := range routers {
				r.Apply(ev)
			}
		case 1:
			c := chains[rapid.IntRange(0, len(chains)-1).Draw(t, "chain")]
			req := &Request{ID: nextID, InputLength: len(c)*DefaultConfig().BlockSize + 1, BlockHashes: c}
			nextID++
			want := routers[0].Route(req)
			for _, r := range routers[1:] {
				if got := r.Route(req); got != want {
					t.Fatalf("life %d: reused router chose worker %d, a new one %d", life, got, want)
				}
			}
		case 2:
			id := rapid.Int64Range(0, max(0, nextID-1)).Draw(t, "id")
			first := rapid.Bool().Draw(t, "first_token")
			for _, r := range routers {
				if first {
					r.FirstToken(id)
				} else {
					r.Finished(id)
				}
			}
		}
		for i, r := range routers {
			r.Overlaps(chains[0], out[i])
		}
		for i, r := range routers[1:] {
			if r.CachedBlocks() != routers[0].CachedBlocks() {
				t.Fatalf("life %d: cached blocks %d, a new router %d", life, r.CachedBlocks(), routers[0].CachedBlocks())
			}
			for w := range workers {
				if out[i+1][w] != out[0][w] || r.Load(w) != routers[0].Load(w) {
					t.Fatalf("life %d worker %d: overlap %d load %+v, a new router %d %+v", life, w, out[i+1][w], r.Load(w), out[0][w], routers[0].Load(w))
				}
			}
		}
	}
}
