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
// (hash, mask words and record id inline, no refcounts: 32 bytes a slot up to 64 workers,
// within one cache line) and only Route's walk and KV events touch it; bookings and
// Finished touch only the small active and refcount tables, which stay in cache.

// maskTable is an open-addressing hash table (linear probing, backward-shift deletion)
// from a 64-bit key to a mask of `words` words, optionally with a uint32 payload per key. A
// slot is empty exactly when its mask is all zero: a block leaves the table when its last
// worker does. Slots are stored flat, key first, so one slot is one cache line or a few.
//
// Wide masks (more than one word, fleets past 64 workers) are not kept in the slot: a slot
// is its key, the count of set bits (so the probe loop tests one word whatever the fleet
// size) and a holder word. Most blocks of a wide fleet are held by one worker (a request's
// private tail), so with one bit set the holder word is that worker and its second-mask bit,
// and only blocks held by two or more workers take a row of masks in a slab beside. A slot
// (with its payload) is then 32 bytes at any fleet size, where inline masks made it 280 at
// 1,024 workers, and most look-ups touch one cache line.
type maskTable struct {
	s      []uint64 // slots of stride words: key, mask (one word) or bit count and holder, [second mask], [payload]; slots a power of two
	hasAux bool     // slots end in a uint32 payload word (aux), moved along with the slot
	words  int      // mask words per slot
	stride int      // 2, 3 with a second one-word mask; 3 for wide masks; one more with a payload
	shift  uint     // 64 − log2(slots)
	last   int      // slots − 1, the probe wrap mask
	n      int      // occupied slots

	// Wide masks only: rows of rowWords words (mask, then second mask) for slots with two or
	// more bits set, free rows, and the masks a one-holder slot reads as (mask, second).
	rows     []uint64
	rowWords int
	freeRows []uint32
	scratch  []uint64
}

// A wide slot's holder word with one bit set: the worker, and holderSecond if its bit of the
// second mask is set.
const holderSecond = 1 << 16

// A table grows past maxLoadNum/maxLoadDen full, which keeps probe runs short.
const (
	maxLoadNum = 3
	maxLoadDen = 4
)

// newMaskTable builds a table of masks of words words; withSecond adds a second mask of
// as many words to each slot (its bits are the caller's; only the first mask says whether
// a slot is used).
func newMaskTable(size, words int, withAux, withSecond bool) *maskTable {
	t := &maskTable{words: words, stride: 2}
	switch {
	case words > 1:
		t.stride = 3
		t.rowWords = words
		if withSecond {
			t.rowWords *= 2
		}
		t.scratch = make([]uint64, 2*words)
	case withSecond:
		t.stride = 3
	}
	if withAux {
		// The payload sits in the slot, not in an array beside: a look-up and its record
		// id are then one cache line, where a parallel array cost a second miss.
		t.hasAux = true
		t.stride++
	}
	t.resize(size)
	return t
}

// reuseMaskTable returns t (nil, or built with the same withAux and withSecond) emptied,
// keeping its capacity, when its masks have words words, else a new table of size slots. A
// table answers the same whatever its capacity.
func reuseMaskTable(t *maskTable, size, words int, withAux, withSecond bool) *maskTable {
	if t == nil || t.words != words {
		return newMaskTable(size, words, withAux, withSecond)
	}
	clear(t.s)
	clear(t.scratch)
	t.n = 0
	t.rows, t.freeRows = t.rows[:0], t.freeRows[:0]
	return t
}

// aux is slot i's payload (tables built withAux).
func (t *maskTable) aux(i int) uint32 { return uint32(t.s[i*t.stride+t.stride-1]) }

// setAux sets slot i's payload.
func (t *maskTable) setAux(i int, v uint32) { t.s[i*t.stride+t.stride-1] = uint64(v) }

// slots is the table's capacity in slots.
func (t *maskTable) slots() int { return t.last + 1 }

// home is the preferred slot of a key; Fibonacci hashing spreads even sequential ids.
func (t *maskTable) home(h uint64) int { return int((h * 0x9e3779b97f4a7c15) >> t.shift) }

// key and mask are slot i's key and mask words. A wide one-holder slot's masks are
// written out into scratch, valid until the next call.
func (t *maskTable) key(i int) uint64 { return t.s[i*t.stride] }
func (t *maskTable) mask(i int) []uint64 {
	if t.words == 1 {
		k := i*t.stride + 1
		return t.s[k : k+1]
	}
	return t.wideMask(i)
}

// second is slot i's second mask (tables built withSecond).
func (t *maskTable) second(i int) []uint64 {
	if t.words == 1 {
		k := i*t.stride + 2
		return t.s[k : k+1]
	}
	return t.wideSecond(i)
}

// wideMask and wideSecond are a wide slot's masks: its row's, or its one holder's written
// out into scratch.
//
//go:noinline
func (t *maskTable) wideMask(i int) []uint64 {
	if row := t.row(i); row != nil {
		return row[:t.words]
	}
	return t.spell(i)[:t.words]
}

//go:noinline
func (t *maskTable) wideSecond(i int) []uint64 {
	if row := t.row(i); row != nil {
		return row[t.words:]
	}
	return t.spell(i)[t.words:]
}

// holder is a wide slot i's count of set bits and, when it is one, the worker whose bit it is.
func (t *maskTable) holder(i int) (w, n int) {
	k := i * t.stride
	return int(t.s[k+2] & (holderSecond - 1)), int(t.s[k+1])
}

// row is wide slot i's row of masks, or nil when it has fewer than two bits set.
func (t *maskTable) row(i int) []uint64 {
	if t.s[i*t.stride+1] < 2 {
		return nil
	}
	r := int(t.s[i*t.stride+2]) * t.rowWords
	return t.rows[r : r+t.rowWords]
}

// spell writes a wide one-holder (or empty) slot's two masks into scratch.
func (t *maskTable) spell(i int) []uint64 {
	clear(t.scratch)
	if t.s[i*t.stride+1] == 1 {
		t.setHolderBits(t.scratch, t.s[i*t.stride+2])
	}
	return t.scratch
}

// setHolderBits sets a one-holder slot's bits, given its holder word h, in masks (a row: the
// mask, then the second mask).
func (t *maskTable) setHolderBits(masks []uint64, h uint64) {
	w := int(h & (holderSecond - 1))
	masks[w>>6] |= 1 << (w & 63)
	if h&holderSecond != 0 {
		masks[t.words+w>>6] |= 1 << (w & 63)
	}
}

// used reports whether slot i holds a key: its one mask word, or its bit count, is nonzero.
func (t *maskTable) used(i int) bool { return t.s[i*t.stride+1] != 0 }

// prefetch reads the home slots of the keys hashes[0], hashes[g], hashes[2g], … and returns
// a value that depends on them: the loads are independent, so their cache misses overlap,
// and the probes that follow find the slots in cache. A table probe is one cache miss into
// megabytes; a walk or a KV event probes once per trace block, one after another.
func (t *maskTable) prefetch(hashes []uint64, g int) uint64 {
	var x uint64
	for i := 0; i < len(hashes); i += g {
		x += t.touch(hashes[i])
	}
	return x
}

// touch reads key h's home slot (see prefetch).
func (t *maskTable) touch(h uint64) uint64 { return t.s[t.home(h)*t.stride] }

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
	old, oldN := t.s, len(t.s)/t.stride
	t.s = make([]uint64, size*t.stride)
	t.last = size - 1
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
	}
}

// del empties slot i. Backward-shift deletion keeps every probe run unbroken without
// tombstones.
func (t *maskTable) del(i int) {
	if t.words > 1 {
		if row := t.row(i); row != nil {
			clear(row)
			t.freeRows = append(t.freeRows, uint32(t.s[i*t.stride+2]))
		}
	}
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
		hole = j
	}
	clear(t.s[hole*t.stride : (hole+1)*t.stride])
	t.n--
}

// move copies slot j over slot i.
func (t *maskTable) move(i, j int) {
	switch t.stride {
	case 2:
		t.s[2*i], t.s[2*i+1] = t.s[2*j], t.s[2*j+1]
	case 4:
		t.s[4*i], t.s[4*i+1], t.s[4*i+2], t.s[4*i+3] = t.s[4*j], t.s[4*j+1], t.s[4*j+2], t.s[4*j+3]
	default:
		copy(t.s[i*t.stride:(i+1)*t.stride], t.s[j*t.stride:])
	}
}

// word is slot i's first mask word: the count of a one-word table used as a counter.
func (t *maskTable) word(i int) *uint64 { return &t.s[i*t.stride+1] }

// setBit and clearBit change worker w's bit in slot i; clearBit reports whether the mask
// is now empty (the caller then deletes the slot).
//
// The hot paths call the one-word (Dense, inlined) or the wide form directly.
func (t *maskTable) setBit(i, w int) {
	if t.words == 1 {
		t.setBitDense(i, w)
		return
	}
	t.setBitWide(i, w)
}

func (t *maskTable) clearBit(i, w int) (empty bool) {
	if t.words == 1 {
		return t.clearBitDense(i, w)
	}
	return t.clearBitWide(i, w)
}

func (t *maskTable) setBitDense(i, w int) { t.s[i*t.stride+1] |= 1 << uint(w) }

func (t *maskTable) clearBitDense(i, w int) (empty bool) {
	m := &t.s[i*t.stride+1]
	*m &^= 1 << uint(w)
	return *m == 0
}

//go:noinline
func (t *maskTable) setBitWide(i, w int) {
	k := i * t.stride
	switch t.s[k+1] {
	case 0:
		t.s[k+1], t.s[k+2] = 1, uint64(w)
		return
	case 1:
		h := t.s[k+2]
		if int(h&(holderSecond-1)) == w {
			return
		}
		// A second holder: the slot takes a row, with the first holder's bits in it.
		r := takeRow(&t.freeRows, &t.rows, t.rowWords)
		row := t.rows[r*t.rowWords : (r+1)*t.rowWords]
		t.setHolderBits(row, h)
		row[w>>6] |= 1 << (w & 63)
		t.s[k+1], t.s[k+2] = 2, uint64(r)
		return
	}
	row := t.row(i)
	if m, b := &row[w>>6], uint64(1)<<(w&63); *m&b == 0 {
		*m |= b
		t.s[k+1]++
	}
}

//go:noinline
func (t *maskTable) clearBitWide(i, w int) (empty bool) {
	k := i * t.stride
	switch t.s[k+1] {
	case 0:
		return true
	case 1:
		if int(t.s[k+2]&(holderSecond-1)) == w {
			t.s[k+1], t.s[k+2] = 0, 0
		}
		return t.s[k+1] == 0
	}
	row := t.row(i)
	m, b := &row[w>>6], uint64(1)<<(w&63)
	if *m&b == 0 {
		return false
	}
	*m &^= b
	if t.s[k+1]--; t.s[k+1] == 1 {
		// One holder left: back into the slot, and the row to the free list.
		var h uint64
		for j, x := range row[:t.words] {
			if x != 0 {
				v := j<<6 + bits.TrailingZeros64(x)
				h = uint64(v)
				if t.rowWords > t.words && row[t.words+v>>6]&(1<<(v&63)) != 0 {
					h |= holderSecond
				}
				break
			}
		}
		clear(row)
		t.freeRows = append(t.freeRows, uint32(t.s[k+2]))
		t.s[k+2] = h
	}
	return false
}

// setSecond and clearSecond change worker w's bit in slot i's second mask; w's bit of the
// first mask must be set.
func (t *maskTable) setSecond(i, w int) {
	if t.words == 1 {
		t.setSecondDense(i, w)
		return
	}
	t.setSecondWide(i, w)
}

func (t *maskTable) clearSecond(i, w int) {
	if t.words == 1 {
		t.clearSecondDense(i, w)
		return
	}
	t.clearSecondWide(i, w)
}

func (t *maskTable) setSecondDense(i, w int) { t.s[i*t.stride+2] |= 1 << uint(w) }

// addDense and addWide set worker w's bit in slot i, and its second-mask bit when whole.
func (t *maskTable) addDense(i, w int, whole bool) {
	t.setBitDense(i, w)
	if whole {
		t.setSecondDense(i, w)
	}
}

func (t *maskTable) addWide(i, w int, whole bool) {
	t.setBitWide(i, w)
	if whole {
		t.setSecondWide(i, w)
	}
}

// takeRow returns a free row of a slab of rows of width elements (zeroed), growing the slab
// when none is free.
func takeRow[T uint32 | uint64](free *[]uint32, slab *[]T, width int) int {
	if n := len(*free); n > 0 {
		r := int((*free)[n-1])
		*free = (*free)[:n-1]
		return r
	}
	*slab = append(*slab, make([]T, width)...)
	return len(*slab)/width - 1
}
func (t *maskTable) clearSecondDense(i, w int) { t.s[i*t.stride+2] &^= 1 << uint(w) }

//go:noinline
func (t *maskTable) setSecondWide(i, w int) {
	if t.s[i*t.stride+1] == 1 {
		t.s[i*t.stride+2] |= holderSecond
		return
	}
	t.row(i)[t.words+w>>6] |= 1 << (w & 63)
}

//go:noinline
func (t *maskTable) clearSecondWide(i, w int) {
	k := i * t.stride
	switch {
	case t.s[k+1] == 1:
		if int(t.s[k+2]&(holderSecond-1)) == w {
			t.s[k+2] &^= holderSecond
		}
	case t.s[k+1] > 1:
		t.row(i)[t.words+w>>6] &^= 1 << (w & 63)
	}
}
