package router

import "math/bits"

// The router's view of the fleet's blocks is two hash tables keyed by chained block hash,
// each mapping a block to a per-worker bitmask (one bit per worker, in ⌈workers/64⌉ words):
//
//   - cached: the worker's prefix cache, fed only by KV events (hundreds of thousands of
//     blocks in a replay);
//   - active: prompt blocks of requests in flight on the worker, from the router's own
//     bookings (a few thousand), each with a record id whose per-worker refcounts live in
//     a third, small table keyed by (record, worker), since several in-flight requests can
//     share a prefix. Keying refcounts by pair keeps memory proportional to what is in
//     flight, not to records × workers, so a fleet of a thousand workers costs no more.
//
// Because hashes are chained (equal hash at position i means equal prompt prefix through
// i), a flat map hash → bitmask is an exact flattened radix tree: walking a request's
// hashes from the front and keeping the workers whose bit stays set gives each worker's
// longest matching prefix, and a block removed in the middle stops the walk there.
//
// The route path is bound by cache and TLB misses, so the big cached table is kept small
// (hash and mask words inline, no refcounts: 16 bytes a slot up to 64 workers) and only
// Route's walk and KV events touch it; bookings and Finished touch only the small active
// and refcount tables, which stay in cache.

// maskTable is an open-addressing hash table (linear probing, backward-shift deletion)
// from a 64-bit key to a mask of `words` words, optionally with a uint32 payload per key. A
// slot is empty exactly when its mask is all zero: a block leaves the table when its last
// worker does. Slots are stored flat, key first, so one slot is one cache line or a few.
// Wide masks (more than one word) carry the count of their set bits after the key, so
// the probe loop tests one word whatever the fleet size.
type maskTable struct {
	s      []uint64 // slots of stride words: key, [bit count,] mask, [second mask]; slots a power of two
	aux    []uint32 // payload of each slot, moved along with it; nil if unused
	words  int      // mask words per slot
	head   int      // offset of the mask in a slot: 1, or 2 with a bit count
	stride int      // head + words, or head + 2·words with a second mask
	shift  uint     // 64 − log2(slots)
	last   int      // slots − 1, the probe wrap mask
	n      int      // occupied slots
}

// A table grows past maxLoadNum/maxLoadDen full, which keeps probe runs short.
const (
	maxLoadNum = 3
	maxLoadDen = 4
)

// newMaskTable builds a table of masks of words words; withSecond adds a second mask of
// as many words to each slot (its bits are the caller's; only the first mask says whether
// a slot is used).
func newMaskTable(size, words int, withAux, withSecond bool) *maskTable {
	head := 1
	if words > 1 {
		head = 2
	}
	t := &maskTable{words: words, head: head, stride: head + words}
	if withSecond {
		t.stride += words
	}
	if withAux {
		t.aux = []uint32{}
	}
	t.resize(size)
	return t
}

// slots is the table's capacity in slots.
func (t *maskTable) slots() int { return t.last + 1 }

// home is the preferred slot of a key; Fibonacci hashing spreads even sequential ids.
func (t *maskTable) home(h uint64) int { return int((h * 0x9e3779b97f4a7c15) >> t.shift) }

// key and mask are slot i's key and mask words.
func (t *maskTable) key(i int) uint64 { return t.s[i*t.stride] }
func (t *maskTable) mask(i int) []uint64 {
	k := i*t.stride + t.head
	return t.s[k : k+t.words]
}

// second is slot i's second mask (tables built withSecond).
func (t *maskTable) second(i int) []uint64 {
	k := i*t.stride + t.head + t.words
	return t.s[k : k+t.words]
}

// used reports whether slot i holds a key: its one mask word, or its bit count, is nonzero.
func (t *maskTable) used(i int) bool { return t.s[i*t.stride+1] != 0 }

// find returns the slot holding h, or -1. It is every lookup's probe loop, kept small
// enough to inline: offset 1 of a slot is its one mask word or its bit count, nonzero
// exactly when the slot is used.
func (t *maskTable) find(h uint64) int {
	for i := t.home(h); ; i = (i + 1) & t.last {
		k := i * t.stride
		if t.s[k+1] == 0 {
			return -1
		}
		if t.s[k] == h {
			return i
		}
	}
}

// insert returns the slot holding h, claiming an empty one if h is absent; the caller
// must then set a bit of the slot's mask before the next call.
func (t *maskTable) insert(h uint64) int {
	i := t.home(h)
	for ; t.used(i); i = (i + 1) & t.last {
		if t.key(i) == h {
			return i
		}
	}
	if maxLoadDen*(t.n+1) > maxLoadNum*t.slots() {
		t.resize(2 * t.slots())
		return t.insert(h)
	}
	t.s[i*t.stride] = h
	t.n++
	return i
}

func (t *maskTable) resize(size int) {
	old, oldAux, oldN := t.s, t.aux, len(t.s)/t.stride
	t.s = make([]uint64, size*t.stride)
	t.last = size - 1
	if t.aux != nil {
		t.aux = make([]uint32, size)
	}
	t.shift = uint(64 - bits.Len(uint(size-1)))
	for k := range oldN {
		src := old[k*t.stride : (k+1)*t.stride]
		if src[1] == 0 {
			continue
		}
		i := t.home(src[0])
		for t.used(i) {
			i = (i + 1) & t.last
		}
		copy(t.s[i*t.stride:], src)
		if t.aux != nil {
			t.aux[i] = oldAux[k]
		}
	}
}

// del empties slot i. Backward-shift deletion keeps every probe run unbroken without
// tombstones.
func (t *maskTable) del(i int) {
	hole := i
	for j := hole; ; {
		j = (j + 1) & t.last
		if !t.used(j) {
			break
		}
		k := t.home(t.key(j))
		// The slot at j may move into the hole unless its home lies cyclically in (hole, j].
		if (hole <= j && hole < k && k <= j) || (hole > j && (hole < k || k <= j)) {
			continue
		}
		t.move(hole, j)
		if t.aux != nil {
			t.aux[hole] = t.aux[j]
		}
		hole = j
	}
	if t.stride == 2 {
		t.s[2*hole], t.s[2*hole+1] = 0, 0
	} else {
		clear(t.s[hole*t.stride : (hole+1)*t.stride])
	}
	t.n--
}

// move copies slot j over slot i.
func (t *maskTable) move(i, j int) {
	if t.stride == 2 {
		t.s[2*i], t.s[2*i+1] = t.s[2*j], t.s[2*j+1]
		return
	}
	copy(t.s[i*t.stride:(i+1)*t.stride], t.s[j*t.stride:(j+1)*t.stride])
}

// word is slot i's first mask word: the count of a one-word table used as a counter.
func (t *maskTable) word(i int) *uint64 { return &t.s[i*t.stride+1] }

// setBit and clearBit change worker w's bit in slot i; clearBit reports whether the mask
// is now empty (the caller then deletes the slot).
func (t *maskTable) setBit(i, w int) {
	m, b := &t.s[i*t.stride+t.head+w>>6], uint64(1)<<(w&63)
	if t.head == 2 && *m&b == 0 {
		t.s[i*t.stride+1]++
	}
	*m |= b
}

func (t *maskTable) clearBit(i, w int) (empty bool) {
	m, b := &t.s[i*t.stride+t.head+w>>6], uint64(1)<<(w&63)
	if t.head == 2 && *m&b != 0 {
		t.s[i*t.stride+1]--
	}
	*m &^= b
	return !t.used(i)
}

// setSecond and clearSecond change worker w's bit in slot i's second mask.
func (t *maskTable) setSecond(i, w int) { t.s[i*t.stride+t.head+t.words+w>>6] |= 1 << (w & 63) }

func (t *maskTable) clearSecond(i, w int) { t.s[i*t.stride+t.head+t.words+w>>6] &^= 1 << (w & 63) }
