package router

import "math/bits"

// blockIndex is the router's view of every worker's blocks, keyed by chained block hash.
//
// Because hashes are chained (equal hash at position i means equal prompt prefix through
// i), a flat map hash → per-worker bitmask is an exact flattened radix tree: walking a
// request's hashes from the front and keeping the workers whose bit stays set gives each
// worker's longest matching prefix, and a block removed in the middle stops the walk there.
//
// Each block has two masks: cached (the worker's prefix cache, fed only by KV events) and
// active (prompt blocks of requests in flight on the worker, from the router's own
// bookings). Active blocks also need per-worker refcounts, since several in-flight requests
// can share a prefix; those live in a small side slab of records, because only a few
// thousand blocks are active at a time while hundreds of thousands are cached.
//
// The route path is bound by cache misses, so a block is one 32-byte slot of an
// open-addressing table (linear probing, backward-shift deletion) holding its hash and
// both masks: looking a block up, storing or evicting it costs one cache line. Slots move
// when the table grows or a block is deleted; refcount records are stable, so a booking
// keeps its blocks' record ids and Finished only hashes the blocks that go inactive.
type blockIndex struct {
	workers int

	tab   []slot // len is a power of two, at most maxLoad full
	shift uint   // 64 − log2(len(tab))
	n     int    // occupied slots
	grows int    // how many times tab was reallocated; slot positions die with it

	// Refcount records: record r is refHash[r] and, for worker w, refCount[r*workers+w]
	// in-flight requests on w whose prompt holds the block.
	refHash  []uint64
	refCount []uint32
	freeRefs []uint32

	sink uint32 // keeps touch's loads alive
}

type slot struct {
	hash   uint64
	cached uint64 // bit w: block in w's prefix cache
	active uint64 // bit w: block in the prompt of a request in flight on w
	ref    uint32 // refcount record + 1 while active on some worker, else 0
	used   uint32 // 1 when the slot holds a block
}

// maxLoad bounds the table's fill (as n/len) to keep probe runs short.
const (
	maxLoadNum = 5
	maxLoadDen = 8
)

func newBlockIndex(workers int) *blockIndex {
	x := &blockIndex{workers: workers}
	x.resize(1 << 12)
	return x
}

// home is the preferred slot of a hash; Fibonacci hashing spreads even sequential ids.
func (x *blockIndex) home(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> x.shift }

// find returns the slot holding h, or -1.
func (x *blockIndex) find(h uint64) int {
	m := uint64(len(x.tab) - 1)
	for i := x.home(h); ; i = (i + 1) & m {
		s := &x.tab[i]
		if s.used == 0 {
			return -1
		}
		if s.hash == h {
			return int(i)
		}
	}
}

// getOrAdd returns the slot holding h, adding an empty block if h is new.
func (x *blockIndex) getOrAdd(h uint64) int {
	m := uint64(len(x.tab) - 1)
	i := x.home(h)
	for ; x.tab[i].used != 0; i = (i + 1) & m {
		if x.tab[i].hash == h {
			return int(i)
		}
	}
	if maxLoadDen*(x.n+1) > maxLoadNum*len(x.tab) {
		x.resize(2 * len(x.tab))
		return x.getOrAdd(h)
	}
	x.tab[i] = slot{hash: h, used: 1}
	x.n++
	return int(i)
}

func (x *blockIndex) resize(size int) {
	old := x.tab
	x.tab = make([]slot, size)
	x.shift = uint(64 - bits.Len(uint(size-1)))
	x.grows++
	m := uint64(size - 1)
	for k := range old {
		if old[k].used == 0 {
			continue
		}
		i := x.home(old[k].hash)
		for x.tab[i].used != 0 {
			i = (i + 1) & m
		}
		x.tab[i] = old[k]
	}
}

// releaseIfUnused forgets the block in slot i once no worker caches or uses it.
func (x *blockIndex) releaseIfUnused(i int) {
	if s := &x.tab[i]; s.cached|s.active != 0 {
		return
	}
	m := uint64(len(x.tab) - 1)
	hole := uint64(i)
	// Backward-shift deletion keeps every probe run unbroken without tombstones.
	for j := hole; ; {
		j = (j + 1) & m
		s := &x.tab[j]
		if s.used == 0 {
			break
		}
		k := x.home(s.hash)
		// The block at j may move into the hole unless its home lies cyclically in (hole, j].
		if (hole <= j && hole < k && k <= j) || (hole > j && (hole < k || k <= j)) {
			continue
		}
		x.tab[hole] = *s
		hole = j
	}
	x.tab[hole] = slot{}
	x.n--
}

// addRef counts one more in-flight request on w using the block in slot i. It returns
// the block's refcount record and whether the block just became active on w.
func (x *blockIndex) addRef(i, w int) (rec uint32, activated bool) {
	s := &x.tab[i]
	if s.ref == 0 {
		if k := len(x.freeRefs); k > 0 {
			rec = x.freeRefs[k-1]
			x.freeRefs = x.freeRefs[:k-1]
			x.refHash[rec] = s.hash
		} else {
			rec = uint32(len(x.refHash))
			x.refHash = append(x.refHash, s.hash)
			x.refCount = append(x.refCount, make([]uint32, x.workers)...)
		}
		s.ref = rec + 1
	}
	rec = s.ref - 1
	c := &x.refCount[int(rec)*x.workers+w]
	*c++
	if *c == 1 {
		s.active |= 1 << w
		return rec, true
	}
	return rec, false
}

// dropRef undoes addRef for record rec; it reports whether the block stopped being active
// on w, and then also forgets the block if nothing else holds it.
func (x *blockIndex) dropRef(rec uint32, w int) bool {
	c := &x.refCount[int(rec)*x.workers+w]
	*c--
	if *c != 0 {
		return false
	}
	i := x.find(x.refHash[rec])
	s := &x.tab[i]
	s.active &^= 1 << w
	if s.active == 0 {
		s.ref = 0
		x.freeRefs = append(x.freeRefs, rec)
		x.releaseIfUnused(i)
	}
	return true
}

// touch loads the home slots of hashes in a tight loop with no dependence between
// iterations, so the processor overlaps the cache misses the real pass would otherwise
// take one at a time.
func (x *blockIndex) touch(hashes []uint64) {
	var sink uint32
	for _, h := range hashes {
		sink += x.tab[x.home(h)].used
	}
	x.sink = sink
}

// len is the number of distinct blocks known to the index.
func (x *blockIndex) len() int { return x.n }
