package router

import (
	"math"
	"math/bits"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// prefixTree draws chains of block hashes that share prefixes the way chained hashes do:
// chain k copies a prefix of an earlier chain and appends fresh hashes, so a hash names
// one position in one prefix. It returns the chains and every hash in them.
func prefixTree(t *rapid.T) (chains [][]uint64, universe []uint64) {
	next := uint64(rapid.Uint64Range(1, 1<<40).Draw(t, "base"))
	fresh := func(n int) []uint64 {
		h := make([]uint64, n)
		for i := range h {
			h[i] = next
			next++
			universe = append(universe, h[i])
		}
		return h
	}
	chains = append(chains, fresh(rapid.IntRange(1, 10).Draw(t, "len0")))
	for k := rapid.IntRange(0, 6).Draw(t, "chains"); k > 0; k-- {
		parent := chains[rapid.IntRange(0, len(chains)-1).Draw(t, "parent")]
		cut := rapid.IntRange(0, len(parent)).Draw(t, "cut")
		c := append(slices.Clone(parent[:cut]), fresh(rapid.IntRange(1, 8).Draw(t, "extra"))...)
		chains = append(chains, c)
	}
	return chains, universe
}

// naiveFleet is the obvious model of the router's state: a set of cached blocks per
// worker and the list of bookings.
type naiveFleet struct {
	cached []map[uint64]bool
	booked map[int64]*naiveBooking
}

type naiveBooking struct {
	worker     int
	prefilling bool
	tokens     int64
	hashes     []uint64
}

func newNaiveFleet(workers int) *naiveFleet {
	f := &naiveFleet{booked: map[int64]*naiveBooking{}}
	for range workers {
		f.cached = append(f.cached, map[uint64]bool{})
	}
	return f
}

func (f *naiveFleet) apply(ev KVEvent) {
	for _, h := range ev.Hashes {
		f.cached[ev.Worker][h] = ev.Kind == BlocksStored
		if ev.Kind == BlocksRemoved {
			delete(f.cached[ev.Worker], h)
		}
	}
}

func (f *naiveFleet) overlap(w int, hashes []uint64) int {
	n := 0
	for n < len(hashes) && f.cached[w][hashes[n]] {
		n++
	}
	return n
}

func (f *naiveFleet) active(w int) map[uint64]bool {
	set := map[uint64]bool{}
	for _, b := range f.booked {
		if b.worker == w {
			for _, h := range b.hashes {
				set[h] = true
			}
		}
	}
	return set
}

func (f *naiveFleet) load(w int) WorkerLoad {
	var l WorkerLoad
	for _, b := range f.booked {
		if b.worker == w {
			l.InFlight++
			if b.prefilling {
				l.PrefillTokens += b.tokens
			}
		}
	}
	l.ActiveBlocks = len(f.active(w))
	return l
}

// cachedCount and activeCount are how many distinct blocks some worker caches, or has
// in flight.
func (f *naiveFleet) cachedCount() int {
	set := map[uint64]bool{}
	for w := range f.cached {
		for h := range f.cached[w] {
			set[h] = true
		}
	}
	return len(set)
}

func (f *naiveFleet) activeCount() int {
	set := map[uint64]bool{}
	for w := range f.cached {
		for h := range f.active(w) {
			set[h] = true
		}
	}
	return len(set)
}

// checkSizes compares the router's table sizes with the naive model.
func checkSizes(t *rapid.T, r *Router, f *naiveFleet) {
	if got, want := r.CachedBlocks(), f.cachedCount(); got != want {
		t.Fatalf("cached blocks %d, naive %d", got, want)
	}
	if got, want := r.active.n, f.activeCount(); got != want {
		t.Fatalf("active blocks %d, naive %d", got, want)
	}
}

// kvEvent draws a store or removal of arbitrary universe blocks (not necessarily a
// prefix: evictions can punch holes anywhere).
func kvEvent(t *rapid.T, workers int, universe []uint64) KVEvent {
	kind := rapid.SampledFrom([]KVEventKind{BlocksStored, BlocksRemoved}).Draw(t, "kind")
	return KVEvent{
		Worker: rapid.IntRange(0, workers-1).Draw(t, "worker"),
		Kind:   kind,
		Hashes: rapid.SliceOfN(rapid.SampledFrom(universe), 0, 12).Draw(t, "hashes"),
	}
}

func TestIndexerMatchesNaiveModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := fleetSize(t)
		chains, universe := prefixTree(t)
		r, err := New(DefaultConfig(), workers, 1)
		if err != nil {
			t.Fatal(err)
		}
		// Start tiny: growth, probe collisions and backward shifts all happen.
		r.cached.resize(4)
		r.active.resize(4)
		f := newNaiveFleet(workers)
		out := make([]int, workers)
		t.Repeat(map[string]func(*rapid.T){
			"event": func(t *rapid.T) {
				ev := kvEvent(t, workers, universe)
				r.Apply(ev)
				f.apply(ev)
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
				for _, h := range universe {
					want := make([]uint64, (workers+63)/64)
					for w := range workers {
						if f.cached[w][h] {
							want[w/64] |= 1 << (w % 64)
						}
					}
					got := make([]uint64, len(want))
					if i := r.cached.find(h); i >= 0 {
						got = r.cached.mask(i)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("block %d: cached mask %b, naive %b", h, got, want)
					}
				}
				checkSizes(t, r, f)
			},
		})
	})
}

func TestBookingMatchesNaiveModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := fleetSize(t)
		cfg := Config{
			Mode:               rapid.SampledFrom(Modes()).Draw(t, "mode"),
			OverlapScoreCredit: rapid.SampledFrom([]float64{0, 0.5, 1}).Draw(t, "credit"),
			PrefillLoadScale:   rapid.SampledFrom([]float64{0, 0.25, 1, 32}).Draw(t, "scale"),
			Temperature:        rapid.SampledFrom([]float64{0, 0, 0.5}).Draw(t, "temperature"),
			BlockSize:          rapid.SampledFrom([]int{1, 16, 64}).Draw(t, "block_size"),
		}
		chains, universe := prefixTree(t)
		r, err := New(cfg, workers, rapid.Uint64().Draw(t, "seed"))
		if err != nil {
			t.Fatal(err)
		}
		r.cached.resize(4)
		r.active.resize(4)
		if r.refCounts != nil {
			r.refCounts.resize(4)
		}
		f := newNaiveFleet(workers)
		var nextID int64
		var ids []int64 // booked ids in booking order, so draws do not depend on map order
		pick := func(t *rapid.T) (int64, bool) {
			if len(ids) == 0 {
				return 0, false
			}
			return ids[rapid.IntRange(0, len(ids)-1).Draw(t, "pick")], true
		}
		t.Repeat(map[string]func(*rapid.T){
			"route": func(t *rapid.T) {
				c := chains[rapid.IntRange(0, len(chains)-1).Draw(t, "chain")]
				hashes := slices.Clone(c[:rapid.IntRange(0, len(c)).Draw(t, "blocks")])
				isl := len(hashes)*cfg.BlockSize + rapid.IntRange(0, cfg.BlockSize-1).Draw(t, "partial")
				req := &Request{ID: nextID, InputLength: isl, BlockHashes: hashes}
				nextID++

				cost := make([]float64, workers)
				for w := range workers {
					active := f.active(w)
					newBlocks := 0
					for _, h := range hashes {
						if !active[h] {
							newBlocks++
						}
					}
					l := f.load(w)
					pre := math.Max(0, float64(l.PrefillTokens+int64(isl))/float64(cfg.BlockSize)-
						cfg.OverlapScoreCredit*float64(f.overlap(w, hashes)))
					cost[w] = cfg.PrefillLoadScale*pre + float64(l.ActiveBlocks+newBlocks)
				}
				if got := kvCosts(r, req); !slices.Equal(got, cost) {
					t.Fatalf("kv costs %v, naive %v", got, cost)
				}

				w := r.Route(req)
				if w < 0 || w >= workers {
					t.Fatalf("routed to worker %d of %d", w, workers)
				}
				if cfg.Mode == ModeKV && cfg.Temperature == 0 && cost[w] != slices.Min(cost) {
					t.Fatalf("T=0 chose worker %d with cost %v, costs %v", w, cost[w], cost)
				}
				tokens := int64(isl - f.overlap(w, hashes)*cfg.BlockSize)
				f.booked[req.ID] = &naiveBooking{worker: w, prefilling: true, tokens: tokens, hashes: slices.Clone(hashes)}
				ids = append(ids, req.ID)
				// The engine may reuse its hash buffer once Route returns.
				for i := range req.BlockHashes {
					req.BlockHashes[i] = 0
				}
			},
			"first token": func(t *rapid.T) {
				if id, ok := pick(t); ok {
					r.FirstToken(id)
					f.booked[id].prefilling = false
				}
			},
			"finish": func(t *rapid.T) {
				if id, ok := pick(t); ok {
					r.Finished(id)
					delete(f.booked, id)
					ids = slices.DeleteFunc(ids, func(x int64) bool { return x == id })
				}
			},
			"event": func(t *rapid.T) {
				ev := kvEvent(t, workers, universe)
				r.Apply(ev)
				f.apply(ev)
			},
			"": func(t *rapid.T) {
				for w := range workers {
					if got, want := r.Load(w), f.load(w); got != want {
						t.Fatalf("worker %d: load %+v, naive %+v", w, got, want)
					}
				}
				checkSizes(t, r, f)
			},
		})
		for _, id := range ids {
			r.Finished(id)
		}
		for w := range workers {
			if got := r.Load(w); got != (WorkerLoad{}) {
				t.Fatalf("worker %d after all finished: load %+v, want zero", w, got)
			}
		}
		f.booked = nil
		checkSizes(t, r, f)
		if r.refCounts != nil && r.refCounts.n != 0 {
			t.Fatalf("after all finished: %d refcounts left", r.refCounts.n)
		}
		if r.active.n != 0 || len(r.freeRecs) != len(r.activeKey) {
			t.Fatalf("after all finished: %d active blocks, %d of %d records free", r.active.n, len(r.freeRecs), len(r.activeKey))
		}
	})
}

// fleetSize draws a fleet: mostly a few workers (dense sharing of blocks), sometimes
// around and past one mask word, up to the largest fleet.
func fleetSize(t *rapid.T) int {
	return rapid.SampledFrom([]int{1, 2, 3, 5, 5, 63, 64, 65, 130, MaxWorkers}).Draw(t, "workers")
}

// TestMaskTableMatchesMap drives one table (tiny at first, so probe runs wrap and
// backward shifts move slots and their payloads) against a Go map, with one-word and
// multi-word masks and second masks; bits set and cleared one at a time take a wide slot
// between its one-holder form and a row of masks.
func TestMaskTableMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		words := rapid.SampledFrom([]int{1, 3}).Draw(t, "words")
		tab := newMaskTable(4, words, true, true)
		type val struct {
			mask, second uint64 // in word words−1, the last one, so emptiness looks past the first
			aux          uint32
		}
		model := map[uint64]val{}
		keys := rapid.SliceOfNDistinct(rapid.Uint64(), 1, 40, rapid.ID[uint64]).Draw(t, "keys")
		worker := func(b int) int { return (words-1)*64 + b }
		// held draws a key in the table, its model and slot, and a bit to change (few, so
		// that changes often meet bits already set).
		held := func(t *rapid.T) (uint64, val, int, int) {
			h := rapid.SampledFrom(keys).Draw(t, "key")
			v, ok := model[h]
			if !ok {
				t.Skip("absent")
			}
			return h, v, tab.find(h), rapid.IntRange(0, 8).Draw(t, "bit")
		}
		t.Repeat(map[string]func(*rapid.T){
			"set": func(t *rapid.T) {
				h := rapid.SampledFrom(keys).Draw(t, "key")
				v := val{mask: rapid.Uint64Range(1, 1<<8).Draw(t, "mask"), aux: rapid.Uint32().Draw(t, "aux")}
				v.second = v.mask & rapid.Uint64().Draw(t, "second")
				if i := tab.find(h); i >= 0 {
					tab.del(i)
				}
				i := tab.insert(h)
				for m := v.mask; m != 0; m &= m - 1 {
					w := worker(bits.TrailingZeros64(m))
					tab.setBit(i, w)
					if v.second&(1<<bits.TrailingZeros64(m)) != 0 {
						tab.setSecond(i, w)
					}
				}
				tab.setAux(i, v.aux)
				model[h] = v
			},
			"add": func(t *rapid.T) {
				h, v, i, b := held(t)
				tab.setBit(i, worker(b))
				v.mask |= 1 << b
				if rapid.Bool().Draw(t, "whole") {
					tab.setSecond(i, worker(b))
					v.second |= 1 << b
				}
				model[h] = v
			},
			"clear": func(t *rapid.T) {
				h, v, i, b := held(t)
				if v.mask&(1<<b) != 0 {
					tab.clearSecond(i, worker(b))
				}
				if tab.clearBit(i, worker(b)) {
					tab.del(i)
				}
				v.mask &^= 1 << b
				v.second &^= 1 << b
				if v.mask == 0 {
					delete(model, h)
				} else {
					model[h] = v
				}
			},
			"delete": func(t *rapid.T) {
				h := rapid.SampledFrom(keys).Draw(t, "key")
				if i := tab.find(h); i >= 0 {
					tab.del(i)
				}
				delete(model, h)
			},
			"": func(t *rapid.T) {
				if tab.n != len(model) {
					t.Fatalf("table holds %d blocks, map %d", tab.n, len(model))
				}
				for _, h := range keys {
					want, ok := model[h]
					i := tab.find(h)
					if (i >= 0) != ok {
						t.Fatalf("key %x: found %v, want %v", h, i >= 0, ok)
					}
					if !ok {
						continue
					}
					m, sec := tab.mask(i), tab.second(i)
					if m[words-1] != want.mask || sec[words-1] != want.second || tab.aux(i) != want.aux {
						t.Fatalf("key %x: mask %b second %b aux %d, want %b %b %d", h, m, sec, tab.aux(i), want.mask, want.second, want.aux)
					}
					for j := range words - 1 {
						if m[j] != 0 || sec[j] != 0 {
							t.Fatalf("key %x: word %d of the masks %b %b, want 0", h, j, m[j], sec[j])
						}
					}
				}
			},
		})
	})
}
