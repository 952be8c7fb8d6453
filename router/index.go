package router

import "math/bits"

// blockIndex is the router's view of every worker's blocks, keyed by chained block hash.
//
// Because hashes are chained (equal hash at position i means equal prompt prefix through
// i), a flat map hash → per-worker bitmask is an exact flattened radix tree: walking a
// request's hashes from the front and keeping the workers whose bit stays set gives each
// worker's longest matching prefix, and a block removed in the middle stops the walk there.
//
// Each block has an entry with two masks: cached (the worker's prefix cache, fed only by
// KV events) and active (prompt blocks of requests in flight on the worker, from the
// router's own bookings), plus per-worker refcounts of the active blocks, since several
// in-flight requests can share a prefix.
//
// The route path touches ~3 entries per prompt block, so the layout is tuned for it: an
// open-addressing table (linear probing, backward-shift deletion) maps hash → entry id, and
// an entry is one contiguous run of words [hash, cached, active, refs packed two per word]
// — 56 bytes for 8 workers, one cache line. Entry ids are stable, so a booking keeps the
// ids of its blocks and Finished never hashes.
type blockIndex struct {
	workers int
	stride  int // words per entry

	tab   []slot // len is a power of two, at most half full
	shift uint   // 64 − log2(len(tab))
	n     int    // occupied slots

	ent  []uint64 // entries, stride words each
	free []int32  // recycled entry ids
}

type slot struct {
	hash uint64
	id   int32 // entry id + 1; 0 marks an empty slot
}

const (
	wordHash   = 0
	wordCached = 1
	wordActive = 2
	wordRefs   = 3
)

func newBlockIndex(workers int) *blockIndex {
	x := &blockIndex{workers: workers, stride: wordRefs + (workers+1)/2}
	x.resize(1 << 12)
	return x
}

// home is the preferred slot of a hash; Fibonacci hashing spreads even sequential ids.
func (x *blockIndex) home(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> x.shift }

// lookup returns the entry id of h, or -1.
func (x *blockIndex) lookup(h uint64) int32 {
	m := uint64(len(x.tab) - 1)
	for i := x.home(h); ; i = (i + 1) & m {
		s := &x.tab[i]
		if s.id == 0 {
			return -1
		}
		if s.hash == h {
			return s.id - 1
		}
	}
}

// getOrAdd returns the entry id of h, adding an empty entry if h is new.
func (x *blockIndex) getOrAdd(h uint64) int32 {
	m := uint64(len(x.tab) - 1)
	i := x.home(h)
	for ; x.tab[i].id != 0; i = (i + 1) & m {
		if x.tab[i].hash == h {
			return x.tab[i].id - 1
		}
	}
	var e int32
	if k := len(x.free); k > 0 {
		e = x.free[k-1]
		x.free = x.free[:k-1]
	} else {
		e = int32(len(x.ent) / x.stride)
		x.ent = append(x.ent, make([]uint64, x.stride)...)
	}
	x.ent[int(e)*x.stride+wordHash] = h
	x.tab[i] = slot{hash: h, id: e + 1}
	x.n++
	if 2*x.n > len(x.tab) {
		x.resize(2 * len(x.tab))
	}
	return e
}

func (x *blockIndex) resize(size int) {
	old := x.tab
	x.tab = make([]slot, size)
	x.shift = uint(64 - bits.Len(uint(size-1)))
	m := uint64(size - 1)
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		i := x.home(s.hash)
		for x.tab[i].id != 0 {
			i = (i + 1) & m
		}
		x.tab[i] = s
	}
}

// releaseIfUnused forgets entry e once no worker caches or uses its block.
func (x *blockIndex) releaseIfUnused(e int32) {
	base := int(e) * x.stride
	if x.ent[base+wordCached]|x.ent[base+wordActive] != 0 {
		return
	}
	h := x.ent[base+wordHash]
	m := uint64(len(x.tab) - 1)
	i := x.home(h)
	for x.tab[i].hash != h || x.tab[i].id != e+1 {
		i = (i + 1) & m
	}
	// Backward-shift deletion keeps every probe run unbroken without tombstones.
	for j := i; ; {
		j = (j + 1) & m
		if x.tab[j].id == 0 {
			break
		}
		k := x.home(x.tab[j].hash)
		// The entry at j may move into the hole at i unless its home lies cyclically in (i, j].
		if (i <= j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
			continue
		}
		x.tab[i] = x.tab[j]
		i = j
	}
	x.tab[i] = slot{}
	x.n--
	x.free = append(x.free, e)
}

func (x *blockIndex) cached(e int32) uint64 { return x.ent[int(e)*x.stride+wordCached] }
func (x *blockIndex) active(e int32) uint64 { return x.ent[int(e)*x.stride+wordActive] }

func (x *blockIndex) setCached(e int32, bit uint64)   { x.ent[int(e)*x.stride+wordCached] |= bit }
func (x *blockIndex) clearCached(e int32, bit uint64) { x.ent[int(e)*x.stride+wordCached] &^= bit }

// addRef counts one more in-flight request on w using block e; it reports whether the
// block just became active on w.
func (x *blockIndex) addRef(e int32, w int) bool {
	base := int(e) * x.stride
	word := &x.ent[base+wordRefs+w/2]
	sh := uint(w&1) * 32
	*word += 1 << sh
	if uint32(*word>>sh) == 1 {
		x.ent[base+wordActive] |= 1 << w
		return true
	}
	return false
}

// dropRef undoes addRef; it reports whether the block stopped being active on w.
func (x *blockIndex) dropRef(e int32, w int) bool {
	base := int(e) * x.stride
	word := &x.ent[base+wordRefs+w/2]
	sh := uint(w&1) * 32
	*word -= 1 << sh
	if uint32(*word>>sh) == 0 {
		x.ent[base+wordActive] &^= 1 << w
		return true
	}
	return false
}

// len is the number of distinct blocks known to the index.
func (x *blockIndex) len() int { return x.n }
