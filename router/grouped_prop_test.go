package router

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// groupedBlock is one engine block of a grouped prompt: its hash and its place in its
// trace block.
type groupedBlock struct {
	hash, key uint64
	sub       uint8
}

// groupedTree draws prompts the way the engine hashes a trace: trace blocks of g engine
// blocks, the first block's hash keying the trace block, prompts sharing whole trace
// blocks from the front, each ending in a whole or partial trace block.
func groupedTree(t *rapid.T, g int) (chains [][]uint64, universe []groupedBlock) {
	next := uint64(rapid.Uint64Range(1, 1<<40).Draw(t, "base"))
	freshGroups := func(n int) [][]groupedBlock {
		groups := make([][]groupedBlock, n)
		for i := range groups {
			key := next
			for s := range g {
				groups[i] = append(groups[i], groupedBlock{hash: next, key: key, sub: uint8(s)})
				next++
			}
			universe = append(universe, groups[i]...)
		}
		return groups
	}
	var prompts [][][]groupedBlock // in trace blocks
	prompts = append(prompts, freshGroups(rapid.IntRange(1, 4).Draw(t, "groups0")))
	for k := rapid.IntRange(0, 5).Draw(t, "prompts"); k > 0; k-- {
		parent := prompts[rapid.IntRange(0, len(prompts)-1).Draw(t, "parent")]
		cut := rapid.IntRange(0, len(parent)).Draw(t, "cut")
		prompts = append(prompts, append(slices.Clone(parent[:cut]), freshGroups(rapid.IntRange(1, 3).Draw(t, "extra"))...))
	}
	for _, p := range prompts {
		// A prompt is its trace blocks' engine blocks, the last trace block maybe partly.
		n := (len(p)-1)*g + rapid.IntRange(1, g).Draw(t, "last")
		var c []uint64
		for _, grp := range p {
			for _, b := range grp {
				c = append(c, b.hash)
			}
		}
		chains = append(chains, c[:n])
	}
	return chains, universe
}

// groupedEvent draws a KV event of a grouped fleet: up to 12 blocks of universe stored on or
// removed from one worker. The worker is mostly one of a few, in the first, a middle and the
// last mask word, so that in a wide fleet events keep meeting on the same workers (one
// worker's store then removal, a second holder): drawn from the whole fleet, they would
// seldom meet, and a wide fleet's held-sub-block mask left stale went unseen.
func groupedEvent(t *rapid.T, workers int, universe []groupedBlock) KVEvent {
	blocks := rapid.SliceOfN(rapid.SampledFrom(universe), 0, 12).Draw(t, "blocks")
	few := []int{0, min(1, workers-1), workers / 2, workers - 1}
	ev := KVEvent{
		Worker: rapid.OneOf(rapid.SampledFrom(few), rapid.IntRange(0, workers-1)).Draw(t, "worker"),
		Kind:   rapid.SampledFrom([]KVEventKind{BlocksStored, BlocksRemoved}).Draw(t, "kind"),
	}
	for _, b := range blocks {
		ev.Hashes = append(ev.Hashes, b.hash)
		ev.Keys = append(ev.Keys, b.key)
		ev.Subs = append(ev.Subs, b.sub)
	}
	return ev
}

// TestGroupedIndexerMatchesNaiveModel: the index per trace block answers exactly what a
// table per engine block does — the naive model, and the ungrouped router fed the same
// events — through stores and removals of any sub-blocks (holes included), and routes
// every request to the same worker with the same loads.
func TestGroupedIndexerMatchesNaiveModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := fleetSize(t)
		g := rapid.SampledFrom([]int{2, 3, 8, 32}).Draw(t, "sub_blocks")
		chains, universe := groupedTree(t, g)
		cfg := DefaultConfig()
		cfg.PrefillLoadScale = rapid.SampledFrom([]float64{0, 1, 32}).Draw(t, "scale")
		seed := rapid.Uint64().Draw(t, "seed")
		r, err := NewGrouped(cfg, workers, g, seed)
		if err != nil {
			t.Fatal(err)
		}
		flat, _ := New(cfg, workers, seed)
		r.cached.resize(4)
		if r.subsWide != nil {
			r.subsWide.resize(4)
		}
		f := newNaiveFleet(workers)
		out := make([]int, workers)
		var nextID int64
		t.Repeat(map[string]func(*rapid.T){
			"event": func(t *rapid.T) {
				ev := groupedEvent(t, workers, universe)
				r.Apply(ev)
				f.apply(ev)
				flat.Apply(KVEvent{Worker: ev.Worker, Kind: ev.Kind, Hashes: ev.Hashes})
			},
			"route": func(t *rapid.T) {
				c := chains[rapid.IntRange(0, len(chains)-1).Draw(t, "chain")]
				req := &Request{ID: nextID, InputLength: len(c)*cfg.BlockSize + 1, BlockHashes: c}
				nextID++
				if got, want := r.Route(req), flat.Route(req); got != want {
					t.Fatalf("grouped router chose worker %d, ungrouped %d", got, want)
				}
				if rapid.Bool().Draw(t, "finish") {
					r.Finished(req.ID - 1)
					flat.Finished(req.ID - 1)
				}
			},
			"": func(t *rapid.T) {
				for _, c := range chains {
					r.Overlaps(c, out)
					for w := range workers {
						if want := f.overlap(w, c); out[w] != want {
							t.Fatalf("chain %v worker %d: overlap %d, naive %d", c, w, out[w], want)
						}
					}
				}
				if got, want := r.CachedBlocks(), f.cachedCount(); got != want {
					t.Fatalf("cached blocks %d, naive %d", got, want)
				}
				for w := range workers {
					if got, want := r.Load(w), flat.Load(w); got != want {
						t.Fatalf("worker %d: load %+v, ungrouped %+v", w, got, want)
					}
				}
			},
		})
	})
}
