package router

import "math/bits"

// The router's view of the fleet's blocks is two hash tables keyed by chained block hash,
// each mapping a block to a per-worker bitmask:
//
//   - cached: the worker's prefix cache, fed only by KV events (hundreds of thousands of
//     blocks in a replay);
//   - active: prompt blocks of requests in flight on the worker, from the router's own
//     bookings (a few thousand), with per-worker refcounts in a side slab since several
//     in-flight requests can share a prefix.
//
// Because hashes are chained (equal hash at position i means equal prompt prefix through
// i), a flat map hash → bitmask is an exact flattened radix tree: walking a request's
// hashes from the front and keeping the workers whose bit stays set gives each worker's
// longest matching prefix, and a block removed in the middle stops the walk there.
//
// The route path is bound by cache and TLB misses, so the big cached table is kept small
// (16-byte slots, no refcounts) and only Route's walk and KV events touch it; bookings and
// Finished touch only the small active table (its payload is the refcount record), which
// stays in cache.

// maskTable is an open-addressing hash table (linear probing, backward-shift deletion)
// from block hash to a per-worker bitmask, optionally with a uint32 payload per block. A
// slot is empty exactly when its mask is 0: a block leaves the table when its last worker
// does.
type maskTable struct {
	s     []maskSlot // len is a power of two, at most maxLoad full
	aux   []uint32   // payload of each slot, moved along with it; nil if unused
	shift uint       // 64 − log2(len(s))
	n     int        // occupied slots
}

type maskSlot struct {
	hash uint64
	mask uint64
}

// A table grows past maxLoadNum/maxLoadDen full, which keeps probe runs short.
const (
	maxLoadNum = 3
	maxLoadDen = 4
)

func newMaskTable(size int, withAux bool) *maskTable {
	t := &maskTable{}
	if withAux {
		t.aux = []uint32{}
	}
	t.resize(size)
	return t
}

// home is the preferred slot of a hash; Fibonacci hashing spreads even sequential ids.
func (t *maskTable) home(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> t.shift }

// find returns the slot holding h, or -1.
func (t *maskTable) find(h uint64) int {
	m := uint64(len(t.s) - 1)
	for i := t.home(h); ; i = (i + 1) & m {
		s := &t.s[i]
		if s.mask == 0 {
			return -1
		}
		if s.hash == h {
			return int(i)
		}
	}
}

// insert returns the slot holding h, claiming an empty one if h is absent; the caller
// must then give the slot a nonzero mask before the next call.
func (t *maskTable) insert(h uint64) int {
	m := uint64(len(t.s) - 1)
	i := t.home(h)
	for ; t.s[i].mask != 0; i = (i + 1) & m {
		if t.s[i].hash == h {
			return int(i)
		}
	}
	if maxLoadDen*(t.n+1) > maxLoadNum*len(t.s) {
		t.resize(2 * len(t.s))
		return t.insert(h)
	}
	t.s[i].hash = h
	t.n++
	return int(i)
}

func (t *maskTable) resize(size int) {
	old, oldAux := t.s, t.aux
	t.s = make([]maskSlot, size)
	if t.aux != nil {
		t.aux = make([]uint32, size)
	}
	t.shift = uint(64 - bits.Len(uint(size-1)))
	m := uint64(size - 1)
	for k := range old {
		if old[k].mask == 0 {
			continue
		}
		i := t.home(old[k].hash)
		for t.s[i].mask != 0 {
			i = (i + 1) & m
		}
		t.s[i] = old[k]
		if t.aux != nil {
			t.aux[i] = oldAux[k]
		}
	}
}

// del empties slot i. Backward-shift deletion keeps every probe run unbroken without
// tombstones.
func (t *maskTable) del(i int) {
	m := uint64(len(t.s) - 1)
	hole := uint64(i)
	for j := hole; ; {
		j = (j + 1) & m
		s := &t.s[j]
		if s.mask == 0 {
			break
		}
		k := t.home(s.hash)
		// The slot at j may move into the hole unless its home lies cyclically in (hole, j].
		if (hole <= j && hole < k && k <= j) || (hole > j && (hole < k || k <= j)) {
			continue
		}
		t.s[hole] = *s
		if t.aux != nil {
			t.aux[hole] = t.aux[j]
		}
		hole = j
	}
	t.s[hole] = maskSlot{}
	t.n--
}
