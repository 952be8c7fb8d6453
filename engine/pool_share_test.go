package engine

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// cachedFree is the set of p's cached free blocks (engine-block hashes).
func (p *blockPool) cachedFree() map[uint64]bool {
	free := map[uint64]bool{}
	for rec := range p.nrec {
		for sub := range p.g {
			if p.cached(rec, sub) && p.entry(rec, sub).refs == 0 {
				free[p.hash(rec, sub)] = true
			}
		}
	}
	return free
}

// With shareActive (timing_reference dynosim) the pool evicts as Dynamo's mocker's default
// Lineage backend does (kvbm-logical pools/inactive/backends/lineage.rs at 14eb663c: the
// oldest leaf of the inactive graph, a parent only once no inactive child is left): every
// evicted block is cached free, and none of its children is still cached free. Its counts
// stay exact and every entry's references equal its holders.
func TestSharedPoolEvictsLeavesFirst(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := rapid.SampledFrom([]int32{1, 2, 4, 8}).Draw(t, "g")
		n := rapid.IntRange(4, 300).Draw(t, "blocks")
		p := newBlockPool(n, g)
		p.shareActive = true
		prompts := drawPrompts(t, g, 30, 6)
		parent := map[uint64]uint64{}
		for _, hs := range prompts {
			for j := 1; j < len(hs); j++ {
				parent[hs[j]] = hs[j-1]
			}
		}
		var running []*poolReq
		check := func(op string) {
			held := map[int32]int32{}
			plainHeld := 0
			for _, r := range running {
				for _, e := range r.table {
					if e == 0 {
						plainHeld++
					} else {
						held[e]++
					}
				}
			}
			inUse := plainHeld
			for rec := range p.nrec {
				for sub := range p.g {
					e, s := entryRef(rec, sub), p.entry(rec, sub)
					if s.refs != held[e] {
						t.Fatalf("%s: entry %d/%d: refs %d, held by %d", op, rec, sub, s.refs, held[e])
					}
					if held[e] > 0 {
						inUse++
					}
				}
			}
			if p.inUse != inUse || p.inUse+p.plain+p.lruLen != n || len(p.cachedFree()) != p.lruLen {
				t.Fatalf("%s: in use %d (tables %d), plain %d, cached free %d (%d), %d blocks", op, p.inUse, inUse, p.plain, p.lruLen, len(p.cachedFree()), n)
			}
			if err := p.checkFIFO(); err != nil {
				t.Fatalf("%s: %v", op, err)
			}
		}
		// alloc allocates k blocks and checks what it evicted, in order, against the
		// cached free blocks before it.
		alloc := func(table []int32, k int) []int32 {
			free := p.cachedFree()
			p.removed.reset()
			table = p.alloc(table, k)
			for _, h := range p.removed.hashes {
				if !free[h] {
					t.Fatalf("evicted %x, not a cached free block", h)
				}
				for c := range free {
					if parent[c] == h {
						t.Fatalf("evicted %x while its child %x is cached free", h, c)
					}
				}
				delete(free, h)
			}
			return table
		}
		for range rapid.IntRange(1, 150).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op == 0 || len(running) == 0: // admit: prefix hit, then new blocks
				hs := prompts[rapid.IntRange(0, len(prompts)-1).Draw(t, "prompt")]
				var hit []int32
				hitFree := 0
				rec := int32(-1)
				for j := range hs {
					sub := int32(j) % g
					if sub == 0 {
						rec = p.group(hs[j])
					}
					if !p.cached(rec, sub) {
						break
					}
					if p.entry(rec, sub).refs == 0 {
						hitFree++
					}
					hit = append(hit, entryRef(rec, sub))
				}
				need := len(hs) - len(hit)
				if need > p.available()-hitFree {
					break
				}
				r := &poolReq{hashes: hs, stored: int32(len(hit))}
				p.touchAll(hit)
				r.table = alloc(append(r.table, hit...), need)
				running = append(running, r)
				check("admit")
			case op == 1: // register full prompt blocks up to m (an existing entry is shared)
				r := running[rapid.IntRange(0, len(running)-1).Draw(t, "req")]
				m := rapid.Int32Range(r.stored, int32(len(r.hashes))).Draw(t, "full")
				for j := r.stored; j < m; j++ {
					sub := j % g
					p.store(p.groupRec(r.hashes[j-sub]), sub, r.table, j)
					if r.table[j] == 0 {
						t.Fatalf("block %d registered but still plain", j)
					}
				}
				r.stored = m
				check("store")
			case op == 2: // grow by decode blocks
				r := running[rapid.IntRange(0, len(running)-1).Draw(t, "req")]
				r.table = alloc(r.table, min(rapid.IntRange(1, 3).Draw(t, "grow"), p.available()))
				check("grow")
			default: // complete or preempt: free tail first
				i := rapid.IntRange(0, len(running)-1).Draw(t, "req")
				p.freeAll(running[i].table)
				running = slices.Delete(running, i, i+1)
				check("free")
			}
		}
	})
}

// Two requests compute the same prefix at once and then their own tails. vLLM's pool keeps
// the second copy plain, so the prefix entries are released with the first request and are
// older than the second request's tail, their child: LRU evicts the prefix first. Dynamo's
// mocker shares the registered blocks instead, so the prefix is released last and the tails
// go first: the prefix survives for a third request of the group.
func TestSharedPrefixSurvivesWhereLRUDropsIt(t *testing.T) {
	const traceBlock = 512
	hashes := func(ids ...int64) []uint64 {
		return blockHashes(nil, ids, 0, len(ids)*traceBlock, traceBlock, traceBlock)
	}
	a, b, c := hashes(1, 2, 3), hashes(1, 2, 4), hashes(1, 2, 5)
	for _, share := range []bool{false, true} {
		p := newBlockPool(6, 1)
		p.shareActive = share
		ta, tb := p.alloc(nil, 3), p.alloc(nil, 3)
		for j := range int32(3) {
			p.store(p.groupRec(a[j]), 0, ta, j)
			p.store(p.groupRec(b[j]), 0, tb, j)
		}
		p.freeAll(ta)
		p.freeAll(tb)
		p.removed.reset()
		p.alloc(nil, 4) // a fresh request: two blocks come from the cache
		hit := 0
		for _, h := range c {
			if rec := p.group(h); !p.cached(rec, 0) {
				break
			}
			hit++
		}
		want, evicted := 2, []uint64{a[2], b[2]}
		if !share {
			want, evicted = 1, []uint64{a[2], a[1]}
		}
		if hit != want || !slices.Equal(p.removed.hashes, evicted) {
			t.Errorf("shareActive %v: third request hits %d blocks (want %d), evicted %x (want %x)", share, hit, want, p.removed.hashes, evicted)
		}
	}
}
