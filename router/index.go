package router

// blockIndex is the router's view of every worker's blocks, keyed by chained block hash.
//
// Because hashes are chained (equal hash at position i means equal prompt prefix through
// i), a flat map hash → per-worker bitmask is an exact flattened radix tree: walking a
// request's hashes from the front and keeping the workers whose bit stays set gives each
// worker's longest matching prefix, and a block removed in the middle stops the walk there.
//
// Each entry carries two masks: cached (the worker's prefix cache, fed only by KV events)
// and active (prompt blocks of requests in flight on the worker, from the router's own
// bookings). Active blocks are refcounted per worker, since several in-flight requests
// can share a prefix.
type blockIndex struct {
	workers int
	slot    map[uint64]int32 // hash → entry
	entries []blockEntry
	refs    []int32 // refs[e*workers+w]: in-flight requests on w whose prompt holds entry e
	free    []int32 // recycled entry slots
}

type blockEntry struct {
	cached uint64 // bit w: block in w's prefix cache
	active uint64 // bit w: block in the prompt of a request in flight on w
}

func newBlockIndex(workers int) *blockIndex {
	return &blockIndex{workers: workers, slot: make(map[uint64]int32, 1<<12)}
}

func (x *blockIndex) lookup(h uint64) (int32, bool) {
	e, ok := x.slot[h]
	return e, ok
}

func (x *blockIndex) getOrAdd(h uint64) int32 {
	if e, ok := x.slot[h]; ok {
		return e
	}
	var e int32
	if n := len(x.free); n > 0 {
		e = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		e = int32(len(x.entries))
		x.entries = append(x.entries, blockEntry{})
		for range x.workers {
			x.refs = append(x.refs, 0)
		}
	}
	x.slot[h] = e
	return e
}

// release forgets a block no worker caches or uses any more.
func (x *blockIndex) release(h uint64, e int32) {
	if x.entries[e] != (blockEntry{}) {
		return
	}
	delete(x.slot, h)
	x.free = append(x.free, e)
}

// len is the number of distinct blocks known to the index.
func (x *blockIndex) len() int { return len(x.slot) }
