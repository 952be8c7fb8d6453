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
// Finished touch only the small active table, which stays in cache.

// maskTable is an open-addressing hash table (linear probing, backward-shift deletion)
// from block hash to V. A slot is empty exactly when its value is V's zero value, so
// callers keep a value nonzero for as long as the block belongs in the table.
type maskTable[V comparable] struct {
	s     []maskSlot[V] // len is a power of two, at most maxLoad full
	shift uint          // 64 − log2(len(s))
	n     int           // occupied slots
}

type maskSlot[V comparable] struct {
	hash uint64
	val  V
}

// A table grows past maxLoadNum/maxLoadDen full, which keeps probe runs short.
const (
	maxLoadNum = 3
	maxLoadDen = 4
)

func newMaskTable[V comparable](size int) *maskTable[V] {
	t := &maskTable[V]{}
	t.resize(size)
	return t
}

// home is the preferred slot of a hash; Fibonacci hashing spreads even sequential ids.
func (t *maskTable[V]) home(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> t.shift }

// find returns the slot holding h, or -1.
func (t *maskTable[V]) find(h uint64) int {
	var zero V
	m := uint64(len(t.s) - 1)
	for i := t.home(h); ; i = (i + 1) & m {
		s := &t.s[i]
		if s.val == zero {
			return -1
		}
		if s.hash == h {
			return int(i)
		}
	}
}

// insert returns the slot holding h, claiming an empty one if h is absent; the caller
// must then give the slot a nonzero value before the next call.
func (t *maskTable[V]) insert(h uint64) int {
	var zero V
	m := uint64(len(t.s) - 1)
	i := t.home(h)
	for ; t.s[i].val != zero; i = (i + 1) & m {
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

func (t *maskTable[V]) resize(size int) {
	var zero V
	old := t.s
	t.s = make([]maskSlot[V], size)
	t.shift = uint(64 - bits.Len(uint(size-1)))
	m := uint64(size - 1)
	for k := range old {
		if old[k].val == zero {
			continue
		}
		i := t.home(old[k].hash)
		for t.s[i].val != zero {
			i = (i + 1) & m
		}
		t.s[i] = old[k]
	}
}

// del empties slot i. Backward-shift deletion keeps every probe run unbroken without
// tombstones.
func (t *maskTable[V]) del(i int) {
	var zero V
	m := uint64(len(t.s) - 1)
	hole := uint64(i)
	for j := hole; ; {
		j = (j + 1) & m
		s := &t.s[j]
		if s.val == zero {
			break
		}
		k := t.home(s.hash)
		// The slot at j may move into the hole unless its home lies cyclically in (hole, j].
		if (hole <= j && hole < k && k <= j) || (hole > j && (hole < k || k <= j)) {
			continue
		}
		t.s[hole] = *s
		hole = j
	}
	t.s[hole] = maskSlot[V]{}
	t.n--
}

// activeBlock is a block in the prompt of at least one in-flight request.
type activeBlock struct {
	mask uint64 // bit w: in flight on worker w
	rec  uint32 // refcount record
}
