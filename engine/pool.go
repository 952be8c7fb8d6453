package engine

import "slices"

// blockPool is one worker's KV cache: numGPUBlocks fixed-size blocks with vLLM-style prefix
// caching.
//
// A block is in exactly one of three states:
//   - in use: held by running requests (it may also be a cache entry);
//   - cached and free: a cache entry no running request holds, on the LRU list, reusable by
//     a prefix hit and evictable;
//   - plain free: neither (never a full prompt block, or a decode block).
//
// Allocation takes plain blocks first and evicts the least recently freed cached block only
// when no plain block is left, so cached content survives until space is really needed.
//
// Which physical block holds what is never observable (no result names a block), so the
// pool keeps no per-block objects: plain blocks, free or in use, are counts, and a cache
// entry is a slot of its trace block's record. Engine block j of a prompt is sub-block
// j mod G of group j / G, where a group is one trace block (G = trace block size / engine
// block size, see hash.go), keyed by the hash of its first engine block; a record holds its
// key, a mask of its cached sub-blocks and, per sub-block, the requests holding it and its
// release stamp, side by side in 8-byte slots (80 bytes for G = 8), so that what a store, a
// prefix hit or an eviction reads of a trace block is one short stretch of memory; an
// entry's engine-block hash follows from the key (subBlockHash). One hash-table probe thus
// serves G engine blocks, with exactly the semantics of per-block entries keyed by engine-block hash (the two keys are in
// bijection; TestPoolMatchesPerBlockPool checks the pool against a per-block one).
//
// A request's block table lists, per block, the cache entry it holds (entryRef) or 0 for a
// plain block.
type blockPool struct {
	n     int32 // num_gpu_blocks
	inUse int   // blocks held by running requests
	plain int   // plain free blocks

	// LRU order of cached free blocks: a FIFO of release stamps in release order, in runs
	// (a request frees its blocks tail first, so a trace block's sub-blocks are released
	// one after another, descending: one run). A hit does not unlink its entry; that block of
	// the run just goes stale (it is in use or was released again later) and eviction skips
	// it. Popped and stale blocks are dropped when the FIFO's buffer is full.
	lru    []lruRun
	spare  []lruRun // compaction's other buffer
	lruPos int      // head of the FIFO
	lruLen int      // cached free blocks
	// fifoN is how many blocks the FIFO's runs from the head on stand for: lruLen live ones,
	// the rest stale.
	fifoN int
	stamp uint32

	g      int32 // sub-blocks per group
	groups hashTable
	// recs: per group record G+recHead slots, its head then one entry slot per sub-block, in
	// chunks of 128 records. Chunks never move, so a growing pool neither copies its slots
	// nor touches (and faults in) more memory than it uses.
	recs       [][]entrySlot
	nrec       int32 // records made so far (free ones included)
	chunkShift uint8 // log2 of the records a chunk holds (recChunkShift; tests take smaller chunks)
	recFree    []int32
	emptied    []int32 // records evict emptied, until dropGroups deletes their groups
	popCur     int32   // lruPop's last record (+1, as in entry refs; 0: none) and its slots
	popRec     record
	sink       uint64 // what dropGroups' reads loaded, kept so they are not dropped

	removed kvBlocks // evicted blocks not yet published as a KV event

	// shareActive: a block a request computes whose entry already exists is shared, not
	// kept as a duplicate (Dynamo's mocker, timing_reference dynosim; see storeIn).
	shareActive bool
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

// entrySlot is what the pool keeps of one cache entry: 8 bytes, so that a trace block's
// record (its head and G entries) is 80 bytes for the seed's G = 8. The entry's
// engine-block hash is not kept: it follows from the record's key (subBlockHash).
type entrySlot struct {
	refs  int32  // running requests holding the block
	stamp uint32 // release stamp of its live FIFO entry
}

// entryRef names the cache entry of sub-block sub of group record rec in a block table;
// 0 is a plain block.
func entryRef(rec, sub int32) int32 { return (rec+1)<<5 | sub }

// recChunkShift: one chunk of recs holds the slots of 128 records.
const recChunkShift = 7

// recHead is the number of slots a record's head takes before its entries: the group key
// in their refs (low half, then high half), the mask of cached sub-blocks in the first's
// stamp.
const recHead = 2

// record is a group record's slots: its head, then one entry slot per sub-block. The hot
// loops take it once per trace block and index it per sub-block, rather than locating the
// record's chunk again for every block.
type record []entrySlot

// record is group record rec's slots.
func (p *blockPool) record(rec int32) record {
	n := p.g + recHead
	i := (rec & (1<<p.chunkShift - 1)) * n
	return record(p.recs[rec>>p.chunkShift][i : i+n : i+n])
}

// key is the record's group key.
func (r record) key() uint64 { return uint64(uint32(r[0].refs)) | uint64(uint32(r[1].refs))<<32 }

// mask is the record's mask of cached sub-blocks.
func (r record) mask() *uint32 { return &r[0].stamp }

// entry is the slot of the record's sub-block sub.
func (r record) entry(sub int32) *entrySlot { return &r[recHead+sub] }

// key is group record rec's key.
func (p *blockPool) key(rec int32) uint64 { return p.record(rec).key() }

// setKey makes key group record rec's key.
func (p *blockPool) setKey(rec int32, key uint64) {
	r := p.record(rec)
	r[0].refs, r[1].refs = int32(uint32(key)), int32(uint32(key>>32))
}

// mask is group record rec's mask of cached sub-blocks.
func (p *blockPool) mask(rec int32) *uint32 { return p.record(rec).mask() }

// hash is the engine-block hash of sub-block sub of group record rec.
func (p *blockPool) hash(rec, sub int32) uint64 { return subBlockHash(p.key(rec), sub) }

// entry is the slot of sub-block sub of group record rec.
func (p *blockPool) entry(rec, sub int32) *entrySlot { return p.record(rec).entry(sub) }

// slot is the slot of entry ref e.
func (p *blockPool) slot(e int32) *entrySlot { return p.entry(e>>5-1, e&31) }

// lruRun is n cache entries released one after another: entry e (an entryRef) at stamp,
// then the sub-block below it at stamp+1, and so on.
type lruRun struct {
	e     int32
	stamp uint32
	n     int32
}

func newBlockPool(n int, g int32) blockPool {
	return blockPool{n: int32(n), plain: n, g: g, groups: newHashTable(0), lru: make([]lruRun, 0, 64), chunkShift: recChunkShift}
}

// reuse makes p a new pool of n blocks in groups of g (newBlockPool) in p's memory (p may
// be the zero pool): its tables, FIFO and slot chunks keep their capacity, emptied, so a new
// record's slots are zero as in a new chunk.
func (p *blockPool) reuse(n int, g int32) {
	if p.groups.slots == nil {
		*p = newBlockPool(n, g)
		return
	}
	groups := p.groups
	clear(groups.slots)
	groups.n = 0
	chunks := p.recs
	if g != p.g || p.chunkShift != recChunkShift {
		chunks = nil
	}
	for _, c := range chunks {
		clear(c)
	}
	removed := p.removed
	removed.reset()
	*p = blockPool{
		n: int32(n), plain: n, g: g, groups: groups,
		lru: p.lru[:0], spare: p.spare[:0],
		recs: chunks, chunkShift: recChunkShift,
		recFree: p.recFree[:0], emptied: p.emptied[:0], removed: removed,
	}
}

// plainFree is how many plain free blocks there are.
func (p *blockPool) plainFree() int { return p.plain }

// available is how many blocks an allocation could obtain right now (plain + evictable).
func (p *blockPool) available() int { return p.plain + p.lruLen }

// alloc appends k new blocks (plain, in use) to the block table t, evicting LRU cached
// blocks when no plain block is left. The caller has checked available() >= k.
func (p *blockPool) alloc(t []int32, k int) []int32 {
	if k <= 0 {
		return t
	}
	p.inUse += k
	take := min(k, p.plain)
	p.plain -= take
	if k > take {
		for range k - take {
			p.evict()
		}
		p.dropGroups()
	}
	n := len(t)
	t = slices.Grow(t, k)[:n+k]
	clear(t[n:])
	return t
}

// evict drops the least recently released cached block's entry (its block is then handed
// out by alloc) and lists it for the BlocksRemoved event.
func (p *blockPool) evict() {
	e, r := p.lruPop()
	rec, sub := e>>5-1, e&31
	key, m := r.key(), r.mask()
	p.removed.add(subBlockHash(key, sub), key, sub)
	if *m &^= 1 << sub; *m == 0 {
		p.emptied = append(p.emptied, rec)
	}
}

// dropGroups deletes the groups whose last entries evict dropped from the group table and
// frees their records. Their table slots are read first, all at once (hashTable.touch),
// so that the deletions' probes do not each wait for a cache miss in turn.
func (p *blockPool) dropGroups() {
	if len(p.emptied) == 0 {
		return
	}
	for _, rec := range p.emptied {
		p.sink += p.groups.touch(p.key(rec))
	}
	for _, rec := range p.emptied {
		p.groups.del(p.key(rec))
		p.recFree = append(p.recFree, rec)
	}
	p.emptied = p.emptied[:0]
}

// touchAll takes a reference on each cached entry a prefix hit found (hit: entry refs, a
// trace block's in a row, so one record look-up serves its sub-blocks).
func (p *blockPool) touchAll(hit []int32) {
	var r record
	cur := int32(0)
	for _, e := range hit {
		if e>>5 != cur {
			cur = e >> 5
			r = p.record(cur - 1)
		}
		s := r.entry(e & 31)
		if s.refs == 0 {
			p.lruLen-- // its FIFO entry is now stale
			p.inUse++
		}
		s.refs++
	}
}

// freeAll releases a request's blocks tail first, as vLLM does, so that a prompt's last
// (least shared) blocks are evicted before its first ones. An entry no request holds any
// more becomes cached-free (LRU tail); a plain block becomes plain free.
func (p *blockPool) freeAll(t []int32) {
	var r record
	cur := int32(0) // entries of r are entry refs e with e>>5 == cur
	for i := len(t) - 1; i >= 0; i-- {
		e := t[i]
		if e == 0 {
			p.plain++
			p.inUse--
			continue
		}
		if e>>5 != cur {
			cur = e >> 5
			r = p.record(cur - 1)
		}
		s := r.entry(e & 31)
		if s.refs--; s.refs == 0 {
			p.inUse--
			p.lruPush(e, s)
		}
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

// groupRec returns the record of the group keyed key, creating an empty one if needed.
func (p *blockPool) groupRec(key uint64) int32 {
	s := p.groups.claim(key)
	if s.key != 0 {
		return s.val
	}
	var rec int32
	if k := len(p.recFree); k > 0 {
		rec = p.recFree[k-1]
		p.recFree = p.recFree[:k-1]
	} else {
		rec = p.nrec
		p.nrec++
		if int(rec>>p.chunkShift) == len(p.recs) {
			p.recs = append(p.recs, make([]entrySlot, int32(1)<<p.chunkShift*(p.g+recHead)))
		}
	}
	p.setKey(rec, key)
	*s = hashSlot{key, rec}
	p.groups.n++
	return rec
}

// storeIn makes the block at t[j] (a plain block in use) the cache entry of sub-block sub of
// group record rec (from groupRec), whose slots are r. If the entry already exists (two
// requests computed the same prefix concurrently) the block stays plain, as in vLLM, or,
// with shareActive, the request gives its block back and holds the existing entry instead,
// as Dynamo's mocker does (lib/mocker/src/kv_manager/kvbm_backend.rs process_use at 4343a8e0:
// a full block whose hash is held or cached is taken, never allocated a second time). It reports whether an
// entry was created. (A new record always receives its first entry at once, so none stays
// empty.)
func (p *blockPool) storeIn(r record, rec, sub int32, t []int32, j int32) bool {
	m := r.mask()
	if *m&(1<<sub) != 0 {
		if p.shareActive {
			p.share(r.entry(sub), rec, sub, t, j)
		}
		return false
	}
	*m |= 1 << sub
	r.entry(sub).refs = 1
	t[j] = entryRef(rec, sub)
	return true
}

// share frees the plain block at t[j] and makes t[j] hold the existing entry s (sub-block
// sub of record rec) instead; a cached free entry leaves the LRU (its FIFO entry goes stale).
func (p *blockPool) share(s *entrySlot, rec, sub int32, t []int32, j int32) {
	p.plain++
	if s.refs == 0 {
		p.lruLen--
	} else {
		p.inUse--
	}
	s.refs++
	t[j] = entryRef(rec, sub)
}

func (p *blockPool) lruPush(e int32, s *entrySlot) {
	p.stamp++
	s.stamp = p.stamp
	p.lruLen++
	p.fifoN++
	// The sub-block below the tail run's last one, released right after it: extend the run.
	if k := len(p.lru) - 1; k >= p.lruPos {
		if l := &p.lru[k]; e == l.e-l.n && e>>5 == l.e>>5 && l.stamp+uint32(l.n) == p.stamp {
			l.n++
			return
		}
	}
	if len(p.lru) == cap(p.lru) {
		if p.lruPos >= len(p.lru)/2 {
			// Evictions popped half the FIFO: slide the rest down. Its stale runs stay until
			// they reach the head; checking them now would cost a cache miss per run that
			// the pop checks again anyway.
			p.lru = p.lru[:copy(p.lru, p.lru[p.lruPos:])]
			p.lruPos = 0
		} else {
			// Drop stale runs only when at least half the blocks are stale: compaction checks
			// every block's slot, a cache miss per run, so it must pay for itself. Otherwise,
			// or when live runs still fill half, grow: the FIFO then stands for at most twice
			// the cached free blocks.
			if 2*(p.fifoN-p.lruLen) >= p.fifoN {
				p.lruCompact()
			}
			if c := cap(p.lru); len(p.lru) > c/2 {
				p.lru = append(make([]lruRun, 0, 2*c), p.lru...)
			}
		}
	}
	p.lru = append(p.lru, lruRun{e, p.stamp, 1})
}

// live reports whether cache entry e released at stamp is still cached free since then:
// no request took it, and it was not released again later. (An evicted entry needs no
// check: eviction popped its live FIFO entry, and every older one of that slot before it,
// and a slot gets a FIFO entry again only once stored again and released, with a new stamp.)
func (p *blockPool) live(e int32, stamp uint32) bool {
	s := p.slot(e)
	return s.refs == 0 && s.stamp == stamp
}

// lruPop removes and returns the least recently released cached free block's entry, and
// its record's slots.
func (p *blockPool) lruPop() (int32, record) {
	for {
		l := &p.lru[p.lruPos]
		e, stamp := l.e, l.stamp
		if l.n--; l.n == 0 {
			p.lruPos++
		} else {
			l.e, l.stamp = e-1, stamp+1
		}
		p.fifoN--
		// live(e, stamp), with the record kept for the caller and the next pop: a run's
		// blocks are one record's. (A record's slots never move, so the view stays valid
		// whoever holds the record later.)
		if e>>5 != p.popCur {
			p.popCur, p.popRec = e>>5, p.record(e>>5-1)
		}
		r := p.popRec
		if s := r.entry(e & 31); s.refs == 0 && s.stamp == stamp {
			p.lruLen--
			return e, r
		}
	}
}

// lruCompact drops stale entries, keeping the order of the live ones (a run with stale
// blocks inside splits, so it compacts into the spare buffer).
func (p *blockPool) lruCompact() {
	keep := p.spare[:0]
	for _, l := range p.lru[p.lruPos:] {
		for i := range l.n {
			e, stamp := l.e-i, l.stamp+uint32(i)
			if !p.live(e, stamp) {
				continue
			}
			if k := len(keep) - 1; k >= 0 && e == keep[k].e-keep[k].n && keep[k].stamp+uint32(keep[k].n) == stamp {
				keep[k].n++
			} else {
				keep = append(keep, lruRun{e, stamp, 1})
			}
		}
	}
	p.spare, p.lru, p.lruPos, p.fifoN = p.lru[:0], keep, 0, p.lruLen
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

// prefetch reads the home slots of the keys hashes[0], hashes[g], hashes[2g], … and returns
// a value that depends on them: the loads are independent, so their cache misses overlap,
// and the probes that follow, one per trace block, find their slots in cache.
func (t *hashTable) prefetch(hashes []uint64, g int32) uint64 {
	var x uint64
	for i := 0; i < len(hashes); i += int(g) {
		x += t.touch(hashes[i])
	}
	return x
}

// touch reads key's home slot (see prefetch).
func (t *hashTable) touch(key uint64) uint64 { return t.slots[key>>t.shift].key }

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

// claim returns the slot of key or, when key is absent, the empty slot it goes in (key 0):
// the caller then fills it and counts it in n. One probe serves the look-up and the insert.
func (t *hashTable) claim(key uint64) *hashSlot {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]hashSlot, 2*len(old))
		t.shift--
		for _, s := range old {
			if s.key != 0 {
				*t.claim(s.key) = s
			}
		}
	}
	m := uint64(len(t.slots) - 1)
	for i := key >> t.shift; ; i = (i + 1) & m {
		if s := &t.slots[i]; s.key == key || s.key == 0 {
			return s
		}
	}
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

// cachedBlocks lists every block of p's prefix cache into out, for the KV events of a
// worker that leaves the fleet.
func (p *blockPool) cachedBlocks(out *kvBlocks) {
	out.reset()
	for rec := range p.nrec {
		r := p.record(rec)
		m := *r.mask()
		for sub := int32(0); sub < p.g; sub++ {
			if m&(1<<sub) != 0 {
				out.add(subBlockHash(r.key(), sub), r.key(), sub)
			}
		}
	}
}
