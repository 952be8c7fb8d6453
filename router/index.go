package router

import "math/bits"

// blockIndex is the router's view of every worker's blocks, keyed by chained block hash.
//
// Because hashes are chained (equal hash at position i means equal prompt prefix through
// i), a flat map hash → per-worker bitmask is an exact flattened radix tree: walking a
// request's hashes from the front and keeping the workers whose bit stays set gives each
// worker's longest matching prefix, and a block removed in the middle stops the walk there.
//
// Each block's entry has two masks: cached (the worker's prefix cache, fed only by KV
// events) and active (prompt blocks of requests in flight on the worker, from the router's
// own bookings). Active blocks also need per-worker refcounts, since several in-flight
// requests can share a prefix; those live in a small side slab, because only a few
// thousand blocks are active at a time while hundreds of thousands are cached.
//
// The layout is tuned for the route path, which is bound by cache misses: an
// open-addressing table of 8-byte slots (32-bit fingerprint + entry id; linear probing,
// backward-shift deletion) points into 32-byte entries with stable ids, so a booking keeps
// its blocks' ids and Finished never hashes.
type blockIndex struct {
	workers int

	tab   []slot // len is a power of two (at most 2^32), at most 3/4 full
	shift uint   // 32 − log2(len(tab))
	n     int    // occupied slots

	ent  []blockEntry
	free []int32 // recycled entry ids

	// Active refcounts: record a holds the entry id in word a*(workers+1) and worker w's
	// count of in-flight requests using the block in word a*(workers+1)+1+w.
	refs     []uint32
	freeRefs []int32

	sink uint32 // keeps touch's loads alive
}

type slot struct {
	fp uint32 // fingerprint of the hash, checked before touching the entry
	id uint32 // entry id + 1; 0 marks an empty slot
}

type blockEntry struct {
	hash   uint64
	cached uint64 // bit w: block in w's prefix cache
	active uint64 // bit w: block in the prompt of a request in flight on w
	ref    int32  // refcount record while active on some worker, else -1
}

func newBlockIndex(workers int) *blockIndex {
	x := &blockIndex{workers: workers}
	x.resize(1 << 12)
	return x
}

// fingerprint mixes a hash (Fibonacci hashing, so even sequential ids spread) and keeps
// the top 32 bits. The table is indexed by the fingerprint's top bits, so a slot's home is
// known from the slot alone: resizing and deletion never touch the entries.
func fingerprint(h uint64) uint32 { return uint32((h * 0x9e3779b97f4a7c15) >> 32) }

// home is the preferred slot of a fingerprint.
func (x *blockIndex) home(fp uint32) uint64 { return uint64(fp) >> x.shift }

// lookup returns the entry id of h, or -1.
func (x *blockIndex) lookup(h uint64) int32 {
	m := uint64(len(x.tab) - 1)
	fp := fingerprint(h)
	for i := x.home(fp); ; i = (i + 1) & m {
		s := x.tab[i]
		if s.id == 0 {
			return -1
		}
		if s.fp == fp && x.ent[s.id-1].hash == h {
			return int32(s.id - 1)
		}
	}
}

// getOrAdd returns the entry id of h, adding an empty entry if h is new.
func (x *blockIndex) getOrAdd(h uint64) int32 {
	m := uint64(len(x.tab) - 1)
	fp := fingerprint(h)
	i := x.home(fp)
	for ; x.tab[i].id != 0; i = (i + 1) & m {
		if s := x.tab[i]; s.fp == fp && x.ent[s.id-1].hash == h {
			return int32(s.id - 1)
		}
	}
	var e int32
	if k := len(x.free); k > 0 {
		e = x.free[k-1]
		x.free = x.free[:k-1]
	} else {
		e = int32(len(x.ent))
		x.ent = append(x.ent, blockEntry{})
	}
	x.ent[e] = blockEntry{hash: h, ref: -1}
	x.tab[i] = slot{fp: fp, id: uint32(e) + 1}
	x.n++
	if 4*x.n > 3*len(x.tab) {
		x.resize(2 * len(x.tab))
	}
	return e
}

func (x *blockIndex) resize(size int) {
	old := x.tab
	x.tab = make([]slot, size)
	x.shift = uint(32 - bits.Len(uint(size-1)))
	m := uint64(size - 1)
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		i := x.home(s.fp)
		for x.tab[i].id != 0 {
			i = (i + 1) & m
		}
		x.tab[i] = s
	}
}

// releaseIfUnused forgets entry e once no worker caches or uses its block.
func (x *blockIndex) releaseIfUnused(e int32) {
	be := &x.ent[e]
	if be.cached|be.active != 0 {
		return
	}
	m := uint64(len(x.tab) - 1)
	i := x.home(fingerprint(be.hash))
	for x.tab[i].id != uint32(e)+1 {
		i = (i + 1) & m
	}
	// Backward-shift deletion keeps every probe run unbroken without tombstones.
	for j := i; ; {
		j = (j + 1) & m
		s := x.tab[j]
		if s.id == 0 {
			break
		}
		k := x.home(s.fp)
		// The slot at j may move into the hole at i unless its home lies cyclically in (i, j].
		if (i <= j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
			continue
		}
		x.tab[i] = s
		i = j
	}
	x.tab[i] = slot{}
	x.n--
	x.free = append(x.free, e)
}

// addRef counts one more in-flight request on w using block e; it reports whether the
// block just became active on w.
func (x *blockIndex) addRef(e int32, w int) bool {
	be := &x.ent[e]
	stride := x.workers + 1
	if be.ref < 0 {
		if k := len(x.freeRefs); k > 0 {
			be.ref = x.freeRefs[k-1]
			x.freeRefs = x.freeRefs[:k-1]
		} else {
			be.ref = int32(len(x.refs) / stride)
			x.refs = append(x.refs, make([]uint32, stride)...)
		}
		x.refs[int(be.ref)*stride] = uint32(e)
	}
	c := &x.refs[int(be.ref)*stride+1+w]
	*c++
	if *c == 1 {
		be.active |= 1 << w
		return true
	}
	return false
}

// dropRef undoes addRef for the block whose refcount record is ref; it reports whether
// the block stopped being active on w, and then also forgets the block if nothing else
// holds it.
func (x *blockIndex) dropRef(ref int32, w int) bool {
	stride := x.workers + 1
	c := &x.refs[int(ref)*stride+1+w]
	*c--
	if *c != 0 {
		return false
	}
	e := int32(x.refs[int(ref)*stride])
	be := &x.ent[e]
	be.active &^= 1 << w
	if be.active == 0 {
		be.ref = -1
		x.freeRefs = append(x.freeRefs, ref)
		x.releaseIfUnused(e)
	}
	return true
}

// len is the number of distinct blocks known to the index.
func (x *blockIndex) len() int { return x.n }

// touch loads the home slots of hashes, then the entries they point at, in two tight
// loops with no dependence between iterations, so the processor overlaps the cache misses
// that the real pass would otherwise take one at a time. Probes that run past the home
// slot, and fingerprint mismatches, just miss the speed-up.
func (x *blockIndex) touch(hashes []uint64) {
	var sink uint32
	for _, h := range hashes {
		sink += x.tab[x.home(fingerprint(h))].id
	}
	for _, h := range hashes {
		if id := x.tab[x.home(fingerprint(h))].id; id != 0 {
			sink += uint32(x.ent[id-1].active)
		}
	}
	x.sink = sink
}
