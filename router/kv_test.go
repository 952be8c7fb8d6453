package router

import (
	"testing"

	"pgregory.net/rapid"
)

// The temperature-0 kv_router prices and picks in one pass; it must pick exactly as
// argminRandomTie over the priced costs, drawing the same tie-breaks from the same stream.
// Small loads and overlaps make exact ties common.
func TestFusedArgminIsArgmin(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := rapid.IntRange(1, 130).Draw(t, "workers")
		cfg := DefaultConfig()
		cfg.OverlapScoreCredit = float64(rapid.IntRange(0, 2).Draw(t, "credit"))
		cfg.PrefillLoadScale = float64(rapid.IntRange(0, 2).Draw(t, "scale"))
		cfg.BlockSize = rapid.SampledFrom([]int{16, 64, 100}).Draw(t, "block_size")
		seed := rapid.Uint64().Draw(t, "seed")
		a, err := New(cfg, workers, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := New(cfg, workers, seed)
		blocks := rapid.IntRange(0, 8).Draw(t, "blocks")
		req := &Request{InputLength: blocks*cfg.BlockSize + rapid.IntRange(0, 3).Draw(t, "extra"), BlockHashes: make([]uint64, blocks)}
		for range rapid.IntRange(1, 5).Draw(t, "routes") {
			for _, r := range []*Router{a, b} {
				clear(r.overlap)
				clear(r.activePrefix)
			}
			for w := range workers {
				l := WorkerLoad{PrefillTokens: int64(rapid.IntRange(0, 3).Draw(t, "prefill") * cfg.BlockSize), ActiveBlocks: rapid.IntRange(0, 3).Draw(t, "active")}
				ov, ap := rapid.IntRange(0, blocks).Draw(t, "overlap"), rapid.IntRange(0, blocks).Draw(t, "active_prefix")
				for _, r := range []*Router{a, b} {
					r.load[w], r.overlap[w], r.activePrefix[w] = l, ov, ap
				}
			}
			got := kvPolicy{}.choose(a, req)
			k := newKVCost(b.cfg, req)
			for w := range workers {
				b.cost[w] = k.cost(&b.load[w], b.overlap[w], b.activePrefix[w])
			}
			if want := argminRandomTie(b, b.cost); got != want {
				t.Fatalf("fused pick %d, argminRandomTie %d over %v", got, want, b.cost)
			}
			if x, y := a.rng.Uint64(), b.rng.Uint64(); x != y {
				t.Fatal("the fused pick drew a different number of tie-breaks")
			}
		}
	})
}
