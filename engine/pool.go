package engine

// blockPool is one worker's KV cache: numGPUBlocks fixed-size blocks with vLLM-style prefix
// caching.
//
// A block is in exactly one of three states:
//   - in use: refs > 0 (held by running requests; it may also be a cache entry);
//   - cached and free: refs == 0 and a cache entry, on the LRU list, reusable by a prefix
//     hit and evictable;
//   - plain free: refs == 0 and no cache entry (never a full prompt block, or a decode
//     block), on a stack.
//
// Allocation takes plain blocks first and evicts the least recently freed cached block only
// when no plain block is left, so cached content survives until space is really needed.
//
// Cache entries are found by content: engine block j of a prompt is sub-block j mod G of
// group j / G, where a group is one trace block (G = trace block size / engine block size,
// see hash.go), keyed by the hash of its first engine block. One hash-table probe thus
// serves G engine blocks; the entries themselves stay per engine block, with exactly the
// semantics of a table keyed by engine-block hash (the two keys are in bijection).
type blockPool struct {
	// blk holds the blocks handed out so far, ids 0…len(blk)-1; the rest of the n blocks
	// are plain free and untouched. A pool allocates as it is used, not at its capacity, so a
	// fleet of 1,024 workers that each use a few hundred of their 52k blocks costs megabytes.
	blk []blockMeta
	n   int32

	// LRU order of cached free blocks: a FIFO of (block, release stamp) in release order.
	// A hit does not unlink its block; the entry just goes stale (the block is in use or
	// was released again later) and eviction skips it. This avoids pointer chasing through
	// a linked list; popped and stale entries are dropped when the FIFO's buffer is full.
	lru    []lruEntry
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

// kvBlocks are the blocks of one KV event: engine-block hashes and, for each, the key of
// its trace block (group) and its sub-block there.
type kvBlocks struct {
	hashes, keys []uint64
	subs         []uint8
}

func (k *kvBlocks) len() int { return len(k.hashes) }

func (k *kvBlocks) add(h, key uint64, sub int32) {
	k.hashes = append(k.hashes, h)
	k.keys = append(k.keys, key)
	k.subs = append(k.subs, uint8(sub))
}

func (k *kvBlocks) reset() {
	k.hashes, k.keys, k.subs = k.hashes[:0], k.keys[:0], k.subs[:0]
}

// blockMeta is 12 bytes so that the pool's per-block traffic stays in cache.
type blockMeta struct {
	refs  int32
	entry int32  // cache entry: (group record + 1) << 5 | sub-block; 0: none
	stamp uint32 // release stamp of its live LRU entry
}

type lruEntry struct {
	b     int32
	stamp uint32
}

func newBlockPool(n int, g int32) blockPool {
	return blockPool{n: int32(n), g: g, groups: newHashTable(0), lru: make([]lruEntry, 0, min(2*n, 1024))}
}

// plainFree is how many plain free blocks there are: released ones and untouched ones.
func (p *blockPool) plainFree() int { return len(p.plain) + int(p.n) - len(p.blk) }

// available is how many blocks an allocation could obtain right now (plain + evictable).
func (p *blockPool) available() int { return p.plainFree() + p.lruLen }

// alloc returns a block with refs = 1 and no cache entry, evicting the LRU cached block if
// needed. The caller has checked available() > 0.
func (p *blockPool) alloc() int32 {
	var b int32
	// Released plain blocks first, then untouched ones in id order (0, 1, 2, …), as a stack
	// holding every block from the start would give them.
	if k := len(p.plain); k > 0 {
		b = p.plain[k-1]
		p.plain = p.plain[:k-1]
	} else if len(p.blk) < int(p.n) {
		b = int32(len(p.blk))
		p.blk = append(p.blk, blockMeta{})
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
func (p *blockPool) uncache(b int32) {
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
func (p *blockPool) hashOf(b int32) uint64 {
	if e := p.blk[b].entry; e != 0 {
		return p.recHash[(e>>5-1)*p.g+e&31]
	}
	return 0
}

// touch takes a reference on a cached block found by a prefix hit.
func (p *blockPool) touch(b int32) {
	m := &p.blk[b]
	if m.refs == 0 {
		p.lruLen-- // its FIFO entry is now stale
		p.inUse++
	}
	m.refs++
}

// release drops one reference; an unreferenced block becomes cached-free (LRU tail) or plain.
func (p *blockPool) release(b int32) {
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
func (p *blockPool) freeAll(blocks []int32) {
	for i := len(blocks) - 1; i >= 0; i-- {
		p.release(blocks[i])
	}
}

// group returns the record of the group keyed key, or -1.
func (p *blockPool) group(key uint64) int32 {
	rec, ok := p.groups.get(key)
	if !ok {
		return -1
	}
	return rec
}

// cachedAt returns the block caching sub-block sub of group record rec (rec may be -1).
func (p *blockPool) cachedAt(rec, sub int32) (int32, bool) {
	if rec < 0 || p.recMask[rec]&(1<<sub) == 0 {
		return 0, false
	}
	return p.recBlocks[rec*p.g+sub], true
}

// groupRec returns the record of the group keyed key, creating an empty one if needed.
func (p *blockPool) groupRec(key uint64) int32 {
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
	p.groups.put(key, rec)
	return rec
}

// store makes block b (full, in use) the cache entry of engine-block hash h, sub-block sub
// of group record rec (from groupRec). If the entry already exists (two requests computed
// the same prefix concurrently) b stays plain, as in vLLM; it reports whether an entry was
// created. (A new record always receives its first entry at once, so none stays empty.)
func (p *blockPool) store(rec int32, sub int32, b int32, h uint64) bool {
	if p.recMask[rec]&(1<<sub) != 0 {
		return false
	}
	p.recMask[rec] |= 1 << sub
	p.recBlocks[rec*p.g+sub] = b
	p.recHash[rec*p.g+sub] = h
	p.blk[b].entry = (rec+1)<<5 | sub
	return true
}

func (p *blockPool) lruPush(b int32) {
	if len(p.lru) == cap(p.lru) {
		// Reuse the room of popped and stale entries; grow only when live ones fill half.
		p.lruCompact()
		if c := cap(p.lru); len(p.lru) > c/2 {
			p.lru = append(make([]lruEntry, 0, max(2*c, 1024)), p.lru...)
		}
	}
	p.stamp++
	p.blk[b].stamp = p.stamp
	p.lru = append(p.lru, lruEntry{b, p.stamp})
	p.lruLen++
}

// live reports whether a FIFO entry still stands for a cached free block.
func (p *blockPool) live(e lruEntry) bool {
	m := &p.blk[e.b]
	return m.refs == 0 && m.entry != 0 && m.stamp == e.stamp
}

// lruPop removes and returns the least recently released cached free block.
func (p *blockPool) lruPop() int32 {
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
func (p *blockPool) lruCompact() {
	keep := p.lru[:0]
	for _, e := range p.lru[p.lruPos:] {
		if p.live(e) {
			keep = append(keep, e)
		}
	}
	p.lru, p.lruPos = keep, 0
}

// hashTable maps a group key → group record: open addressing with linear probing and
// backward-shift deletion, kept at most half full. Keys are already uniformly mixed
// (hash.go), so their top bits are the home slot. It replaces a Go map because these
// probes are the engine's hottest memory traffic.
type hashTable struct {
	slots []hashSlot
	shift uint
	n     int
}

type hashSlot struct {
	key uint64 // 0: empty (block hashes are never 0)
	val int32
}

// newHashTable sizes the table for about n entries.
func newHashTable(n int) hashTable {
	size, shift := 1024, uint(64-10)
	for size < 2*n {
		size, shift = 2*size, shift-1
	}
	return hashTable{slots: make([]hashSlot, size), shift: shift}
}

func (t *hashTable) get(key uint64) (int32, bool) {
	m := uint64(len(t.slots) - 1)
	for i := key >> t.shift; ; i = (i + 1) & m {
		s := &t.slots[i]
		if s.key == key {
			return s.val, true
		}
		if s.key == 0 {
			return 0, false
		}
	}
}

// put inserts a key that is not present.
func (t *hashTable) put(key uint64, val int32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]hashSlot, 2*len(old))
		t.shift--
		t.n = 0
		for _, s := range old {
			if s.key != 0 {
				t.put(s.key, s.val)
			}
		}
	}
	m := uint64(len(t.slots) - 1)
	i := key >> t.shift
	for t.slots[i].key != 0 {
		i = (i + 1) & m
	}
	t.slots[i] = hashSlot{key, val}
	t.n++
}

func (t *hashTable) del(key uint64) {
	m := uint64(len(t.slots) - 1)
	i := key >> t.shift
	for t.slots[i].key != key {
		i = (i + 1) & m
	}
	// Backward shift: pull later entries of the probe run into the hole unless their home
	// lies cyclically in (hole, j].
	for j := i; ; {
		j = (j + 1) & m
		k := t.slots[j].key
		if k == 0 {
			break
		}
		h := k >> t.shift
		if (i <= j && i < h && h <= j) || (i > j && (i < h || h <= j)) {
			continue
		}
		t.slots[i] = t.slots[j]
		i = j
	}
	t.slots[i] = hashSlot{}
	t.n--
}
