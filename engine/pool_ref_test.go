package engine

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// refPool is the block pool as it was before it stopped keeping per-block objects: one
// record per physical block (refs, cache entry, LRU stamp), a stack of plain free blocks and
// a FIFO of released cached blocks. TestPoolMatchesPerBlockPool drives it and blockPool with
// the same requests and checks that they agree on everything the simulation observes.
type refPool struct {
	// blk holds the blocks handed out so far, ids 0…len(blk)-1; the rest of the n blocks
	// are plain free and untouched. A pool allocates as it is used, not at its capacity, so a
	// fleet of 1,024 workers that each use a few hundred of their 52k blocks costs megabytes.
	blk []refMeta
	n   int32

	// LRU order of cached free blocks: a FIFO of (block, release stamp) in release order.
	// A hit does not unlink its block; the entry just goes stale (the block is in use or
	// was released again later) and eviction skips it. This avoids pointer chasing through
	// a linked list; popped and stale entries are dropped when the FIFO's buffer is full.
	lru    []refLRUEntry
	lruPos int // head of the FIFO
	lruLen int // cached free blocks
	stamp  uint32

	plain []int32 // stack of plain free blocks released so far (above the untouched ones)
	inUse int

	g         int32 // sub-blocks per group
	groups    hashTable
	recMask   []uint32 // per group record: which sub-blocks are cached
	recKey    []uint64
	recBlocks []int32  // per group record: G block ids
	recHash   []uint64 // per group record: G engine-block hashes
	recFree   []int32

	removed kvBlocks // evicted blocks not yet published as a KV event
}

// refMeta is 12 bytes so that the pool's per-block traffic stays in cache.
type refMeta struct {
	refs  int32
	entry int32  // cache entry: (group record + 1) << 5 | sub-block; 0: none
	stamp uint32 // release stamp of its live LRU entry
}

type refLRUEntry struct {
	b     int32
	stamp uint32
}

func newRefPool(n int, g int32) refPool {
	return refPool{n: int32(n), g: g, groups: newHashTable(0), lru: make([]refLRUEntry, 0, min(2*n, 1024))}
}

// plainFree is how many plain free blocks there are: released ones and untouched ones.
func (p *refPool) plainFree() int { return len(p.plain) + int(p.n) - len(p.blk) }

// available is how many blocks an allocation could obtain right now (plain + evictable).
func (p *refPool) available() int { return p.plainFree() + p.lruLen }

// alloc returns a block with refs = 1 and no cache entry, evicting the LRU cached block if
// needed. The caller has checked available() > 0.
func (p *refPool) alloc() int32 {
	var b int32
	// Released plain blocks first, then untouched ones in id order (0, 1, 2, …), as a stack
	// holding every block from the start would give them.
	if k := len(p.plain); k > 0 {
		b = p.plain[k-1]
		p.plain = p.plain[:k-1]
	} else if len(p.blk) < int(p.n) {
		b = int32(len(p.blk))
		p.blk = append(p.blk, refMeta{})
	} else {
		b = p.lruPop()
		e := p.blk[b].entry
		p.removed.add(p.hashOf(b), p.recKey[e>>5-1], e&31)
		p.uncache(b)
	}
	p.blk[b].refs = 1
	p.inUse++
	return b
}

// uncache drops b's cache entry.
func (p *refPool) uncache(b int32) {
	m := &p.blk[b]
	rec, sub := m.entry>>5-1, m.entry&31
	p.recMask[rec] &^= 1 << sub
	if p.recMask[rec] == 0 {
		p.groups.del(p.recKey[rec])
		p.recFree = append(p.recFree, rec)
	}
	m.entry = 0
}

// hashOf is the engine-block hash block b caches, or 0.
func (p *refPool) hashOf(b int32) uint64 {
	if e := p.blk[b].entry; e != 0 {
		return p.recHash[(e>>5-1)*p.g+e&31]
	}
	return 0
}

// touch takes a reference on a cached block found by a prefix hit.
func (p *refPool) touch(b int32) {
	m := &p.blk[b]
	if m.refs == 0 {
		p.lruLen-- // its FIFO entry is now stale
		p.inUse++
	}
	m.refs++
}

// release drops one reference; an unreferenced block becomes cached-free (LRU tail) or plain.
func (p *refPool) release(b int32) {
	m := &p.blk[b]
	m.refs--
	if m.refs > 0 {
		return
	}
	p.inUse--
	if m.entry != 0 {
		p.lruPush(b)
	} else {
		p.plain = append(p.plain, b)
	}
}

// freeAll releases a request's blocks tail first, as vLLM does, so that a prompt's last
// (least shared) blocks are evicted before its first ones.
func (p *refPool) freeAll(blocks []int32) {
	for i := len(blocks) - 1; i >= 0; i-- {
		p.release(blocks[i])
	}
}

// group returns the record of the group keyed key, or -1.
func (p *refPool) group(key uint64) int32 {
	rec, ok := p.groups.get(key)
	if !ok {
		return -1
	}
	return rec
}

// cachedAt returns the block caching sub-block sub of group record rec (rec may be -1).
func (p *refPool) cachedAt(rec, sub int32) (int32, bool) {
	if rec < 0 || p.recMask[rec]&(1<<sub) == 0 {
		return 0, false
	}
	return p.recBlocks[rec*p.g+sub], true
}

// groupRec returns the record of the group keyed key, creating an empty one if needed.
func (p *refPool) groupRec(key uint64) int32 {
	if rec, ok := p.groups.get(key); ok {
		return rec
	}
	var rec int32
	if k := len(p.recFree); k > 0 {
		rec = p.recFree[k-1]
		p.recFree = p.recFree[:k-1]
		p.recKey[rec] = key
	} else {
		rec = int32(len(p.recMask))
		p.recMask = append(p.recMask, 0)
		p.recKey = append(p.recKey, key)
		for range p.g {
			p.recBlocks = append(p.recBlocks, -1)
			p.recHash = append(p.recHash, 0)
		}
	}
	*p.groups.claim(key) = hashSlot{key, rec}
	p.groups.n++
	return rec
}

// store makes block b (full, in use) the cache entry of engine-block hash h, sub-block sub
// of group record rec (from groupRec). If the entry already exists (two requests computed
// the same prefix concurrently) b stays plain, as in vLLM; it reports whether an entry was
// created. (A new record always receives its first entry at once, so none stays empty.)
func (p *refPool) store(rec int32, sub int32, b int32, h uint64) bool {
	if p.recMask[rec]&(1<<sub) != 0 {
		return false
	}
	p.recMask[rec] |= 1 << sub
	p.recBlocks[rec*p.g+sub] = b
	p.recHash[rec*p.g+sub] = h
	p.blk[b].entry = (rec+1)<<5 | sub
	return true
}

func (p *refPool) lruPush(b int32) {
	if len(p.lru) == cap(p.lru) {
		// Reuse the room of popped and stale entries; grow only when live ones fill half.
		p.lruCompact()
		if c := cap(p.lru); len(p.lru) > c/2 {
			p.lru = append(make([]refLRUEntry, 0, max(2*c, 1024)), p.lru...)
		}
	}
	p.stamp++
	p.blk[b].stamp = p.stamp
	p.lru = append(p.lru, refLRUEntry{b, p.stamp})
	p.lruLen++
}

// live reports whether a FIFO entry still stands for a cached free block.
func (p *refPool) live(e refLRUEntry) bool {
	m := &p.blk[e.b]
	return m.refs == 0 && m.entry != 0 && m.stamp == e.stamp
}

// lruPop removes and returns the least recently released cached free block.
func (p *refPool) lruPop() int32 {
	for {
		e := p.lru[p.lruPos]
		p.lruPos++
		if p.live(e) {
			p.lruLen--
			return e.b
		}
	}
}

// lruCompact drops stale entries, keeping the order of the live ones.
func (p *refPool) lruCompact() {
	keep := p.lru[:0]
	for _, e := range p.lru[p.lruPos:] {
		if p.live(e) {
			keep = append(keep, e)
		}
	}
	p.lru, p.lruPos = keep, 0
}

// poolReq is one request held by both pools: its prompt's engine-block hashes, its block
// table in each pool and how many leading prompt blocks are registered.
type poolReq struct {
	hashes []uint64
	table  []int32 // blockPool: entries
	blocks []int32 // refPool: block ids
	stored int32
}

// TestPoolMatchesPerBlockPool drives blockPool and the per-block refPool with the same
// admissions (prefix hit, allocation, evictions), registrations of full prompt blocks
// (duplicates included), growth and tail-first frees, and checks after every operation that
// they agree on what the simulation observes: hit lengths and how many hit blocks were free,
// blocks available, plain and in use, cached free blocks, and every KV event, in order.
func TestPoolMatchesPerBlockPool(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := rapid.SampledFrom([]int32{1, 2, 4, 8}).Draw(t, "g")
		n := rapid.IntRange(1, 400).Draw(t, "blocks")
		p, ref := newBlockPool(n, g), newRefPool(n, g)
		p.chunkShift = uint8(rapid.IntRange(0, recChunkShift).Draw(t, "chunk_shift")) // records past one chunk
		prompts := drawPrompts(t, g, 40, 8)
		var running []*poolReq
		var stored kvBlocks
		storedRef := kvBlocks{}
		check := func(op string) {
			if p.available() != ref.available() || p.plainFree() != ref.plainFree() || p.inUse != ref.inUse || p.lruLen != ref.lruLen {
				t.Fatalf("%s: available %d/%d, plain %d/%d, in use %d/%d, cached free %d/%d", op,
					p.available(), ref.available(), p.plainFree(), ref.plainFree(), p.inUse, ref.inUse, p.lruLen, ref.lruLen)
			}
			if err := p.checkFIFO(); err != nil {
				t.Fatalf("%s: %v", op, err)
			}
			for _, k := range []struct{ a, b *kvBlocks }{{&p.removed, &ref.removed}, {&stored, &storedRef}} {
				if !slices.Equal(k.a.hashes, k.b.hashes) || !slices.Equal(k.a.keys, k.b.keys) || !slices.Equal(k.a.subs, k.b.subs) {
					t.Fatalf("%s: KV events differ: %v %v %v, per-block pool %v %v %v", op, k.a.hashes, k.a.keys, k.a.subs, k.b.hashes, k.b.keys, k.b.subs)
				}
				k.a.reset()
				k.b.reset()
			}
		}
		for range rapid.IntRange(1, 200).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op == 0 || len(running) == 0: // admit a prompt: prefix hit, then new blocks
				hs := prompts[rapid.IntRange(0, len(prompts)-1).Draw(t, "prompt")]
				var hit, hitRef []int32
				hitFree, hitFreeRef := 0, 0
				rec, recRef := int32(-1), int32(-1)
				for j := range hs {
					sub := int32(j) % g
					if sub == 0 {
						rec, recRef = p.group(hs[j]), ref.group(hs[j])
					}
					b, ok := ref.cachedAt(recRef, sub)
					if ok != p.cached(rec, sub) {
						t.Fatalf("block %d of the prompt: cached %v, per-block pool %v", j, p.cached(rec, sub), ok)
					}
					if !ok {
						break
					}
					if p.entry(rec, sub).refs == 0 {
						hitFree++
					}
					if ref.blk[b].refs == 0 {
						hitFreeRef++
					}
					hit, hitRef = append(hit, entryRef(rec, sub)), append(hitRef, b)
				}
				if hitFree != hitFreeRef {
					t.Fatalf("hit of %d blocks: %d free, per-block pool %d", len(hit), hitFree, hitFreeRef)
				}
				need := len(hs) - len(hit) + rapid.IntRange(0, 2).Draw(t, "decode_blocks")
				if need > p.available()-hitFree {
					break
				}
				r := &poolReq{hashes: hs, stored: int32(len(hit))}
				for i := range hit {
					p.touchAll(hit[i : i+1])
					ref.touch(hitRef[i])
				}
				r.table = p.alloc(append(r.table, hit...), need)
				r.blocks = append(r.blocks, hitRef...)
				for range need {
					r.blocks = append(r.blocks, ref.alloc())
				}
				running = append(running, r)
				check("admit")
			case op == 1: // register full prompt blocks up to m
				r := running[rapid.IntRange(0, len(running)-1).Draw(t, "req")]
				m := rapid.Int32Range(r.stored, int32(len(r.hashes))).Draw(t, "full")
				for j := r.stored; j < m; j++ {
					sub := j % g
					rec, recRef := p.groupRec(r.hashes[j-sub]), ref.groupRec(r.hashes[j-sub])
					if p.store(rec, sub, r.table, j) {
						stored.add(r.hashes[j], p.key(rec), sub)
					}
					if ref.store(recRef, sub, r.blocks[j], r.hashes[j]) {
						storedRef.add(r.hashes[j], ref.recKey[recRef], sub)
					}
				}
				r.stored = m
				check("store")
			case op == 2: // grow by decode blocks
				r := running[rapid.IntRange(0, len(running)-1).Draw(t, "req")]
				k := min(rapid.IntRange(1, 3).Draw(t, "grow"), p.available())
				r.table = p.alloc(r.table, k)
				for range k {
					r.blocks = append(r.blocks, ref.alloc())
				}
				check("grow")
			default: // complete or preempt: free tail first
				i := rapid.IntRange(0, len(running)-1).Draw(t, "req")
				p.freeAll(running[i].table)
				ref.freeAll(running[i].blocks)
				running = slices.Delete(running, i, i+1)
				check("free")
			}
		}
	})
}

// drawPrompts draws up to maxPrompts prompts that share prefixes: each extends an earlier
// one's trace ids by up to maxFresh fresh ones; hashed in engine blocks of 512 / g tokens.
func drawPrompts(t *rapid.T, g int32, maxPrompts, maxFresh int) [][]uint64 {
	var prompts [][]uint64
	var ids [][]int64
	next := int64(1)
	for range rapid.IntRange(1, maxPrompts).Draw(t, "prompts") {
		var base []int64
		if len(ids) > 0 && rapid.Bool().Draw(t, "extend") {
			b := ids[rapid.IntRange(0, len(ids)-1).Draw(t, "base")]
			base = append(base, b[:rapid.IntRange(0, len(b)).Draw(t, "keep")]...)
		}
		for range rapid.IntRange(1, maxFresh).Draw(t, "fresh") {
			base = append(base, next)
			next++
		}
		ids = append(ids, base)
		const traceBlock = 512
		prompts = append(prompts, blockHashes(nil, base, 0, len(base)*traceBlock, traceBlock/int(g), traceBlock))
	}
	return prompts
}

// BenchmarkBlockPool is the block pool's share of a replay, for blockPool and the
// per-block refPool side by side: a toolagent-like stream of prompts (syntheticTrace, 64-token
// blocks in trace blocks of 8) admitted with their prefix hit, registered, and freed tail
// first 32 requests later, on a pool of 52,163 blocks (the seed worker's), so it fills and
// evicts. One op is one request.
func BenchmarkBlockPool(b *testing.B) {
	tr := syntheticTrace(4000, 7)
	const n, g = 52163, 8
	prompts := make([][]uint64, len(tr.Requests))
	for i, r := range tr.Requests {
		prompts[i] = blockHashes(nil, r.HashIDs, 0, r.InputLength, 64, tr.BlockSize)
	}
	b.Run("per_trace_block", func(b *testing.B) {
		p := newBlockPool(n, g)
		// As the engine's admission and storeFull: a trace block's record once for its blocks.
		streamPool(b, prompts, p.freeAll, func(t []int32, hs []uint64) []int32 {
			rec, sub := int32(-1), int32(0)
			var rs record
			for j := range hs {
				if sub = int32(j) % g; sub == 0 {
					if rec = p.group(hs[j]); rec < 0 {
						break
					}
					rs = p.record(rec)
				}
				if *rs.mask()&(1<<sub) == 0 {
					break
				}
				t = append(t, entryRef(rec, sub))
			}
			p.touchAll(t)
			hit := int32(len(t))
			t = p.alloc(t, len(hs)+3-int(hit))
			for j := hit; j < int32(len(hs)); j++ {
				if sub = j % g; j == hit || sub == 0 {
					rec = p.groupRec(hs[j-sub])
					rs = p.record(rec)
				}
				p.storeIn(rs, rec, sub, t, j)
			}
			p.removed.reset()
			return t
		})
	})
	b.Run("per_block", func(b *testing.B) {
		p := newRefPool(n, g)
		streamPool(b, prompts, p.freeAll, func(t []int32, hs []uint64) []int32 {
			rec, sub := int32(-1), int32(0)
			for j := range hs {
				if sub = int32(j) % g; sub == 0 {
					rec = p.group(hs[j])
				}
				blk, ok := p.cachedAt(rec, sub)
				if !ok {
					break
				}
				p.touch(blk)
				t = append(t, blk)
			}
			hit := int32(len(t))
			for range len(hs) + 3 - len(t) {
				t = append(t, p.alloc())
			}
			for j := hit; j < int32(len(hs)); j++ {
				sub := j % g
				p.store(p.groupRec(hs[j-sub]), sub, t[j], hs[j])
			}
			p.removed.reset()
			return t
		})
	})
}

// streamPool runs BenchmarkBlockPool's stream: each op admits the next prompt (admit fills
// a block table) and frees the table of the request admitted 32 ops before.
func streamPool(b *testing.B, prompts [][]uint64, free func([]int32), admit func([]int32, []uint64) []int32) {
	var ring [32][]int32
	for i := 0; b.Loop(); i++ {
		slot := &ring[i%len(ring)]
		free(*slot)
		*slot = admit((*slot)[:0], prompts[i%len(prompts)])
	}
}

// cached reports whether sub-block sub of group record rec (rec may be -1) is cached.
func (p *blockPool) cached(rec, sub int32) bool {
	return rec >= 0 && *p.mask(rec)&(1<<sub) != 0
}

// store is storeIn for a record given by number.
func (p *blockPool) store(rec, sub int32, t []int32, j int32) bool {
	return p.storeIn(p.record(rec), rec, sub, t, j)
}
