package router

import "math/bits"

// Active blocks: the prompt blocks of requests in flight, per worker, kept per trace block
// like the prefix-cache index (cached.go). A request holds a whole prefix of its prompt,
// so the sub-blocks of a trace block active on a worker are always its first few, and a
// second worker mask of the trace blocks wholly active lets Route's walk skip the
// per-worker look-up for them.

// addRef counts one more in-flight request on worker w holding sub-block sub of record
// rec and reports whether it is the first.
func (r *Router) addRef(rec uint32, sub, w int) bool {
	i := int(rec)*r.g + sub
	if r.refCounts == nil {
		c := &r.denseCounts[i*r.workers+w]
		*c++
		return *c == 1
	}
	n := r.refCounts.word(r.refCounts.insert(refKey(uint32(i), w)))
	*n++
	return *n == 1
}

// dropRef counts one fewer and reports whether it was the last.
func (r *Router) dropRef(rec uint32, sub, w int) bool {
	i := int(rec)*r.g + sub
	if r.refCounts == nil {
		c := &r.denseCounts[i*r.workers+w]
		*c--
		return *c == 0
	}
	t := r.refCounts
	k := t.find(refKey(uint32(i), w))
	n := t.word(k)
	if *n--; *n != 0 {
		return false
	}
	t.del(k)
	return true
}

// held reports whether some in-flight request on w holds sub-block sub of record rec.
func (r *Router) held(rec uint32, sub, w int) bool {
	i := int(rec)*r.g + sub
	if r.refCounts == nil {
		return r.denseCounts[i*r.workers+w] != 0
	}
	return r.refCounts.find(refKey(uint32(i), w)) >= 0
}

// bookBlocks books the first nk sub-blocks of the trace block keyed key for a request on
// worker w and returns the trace block's record.
func (r *Router) bookBlocks(w int, key uint64, nk int) uint32 {
	t := r.active
	k := t.insert(key)
	if !t.used(k) {
		t.aux[k] = r.newRecord(key)
	}
	rec := t.aux[k]
	grew := 0
	for s := range nk {
		if r.addRef(rec, s, w) {
			grew++
		}
	}
	if grew > 0 {
		r.load[w].ActiveBlocks += grew
		t.setBit(k, w)
		if nk == r.g {
			t.setSecond(k, w)
		}
	}
	return rec
}

// unbook releases what bookBlocks booked. The sub-blocks no longer held on w are the last
// ones of its active prefix, since the requests left all hold prefixes.
func (r *Router) unbook(w int, rec uint32, nk int) {
	dropped := 0
	for s := range nk {
		if r.dropRef(rec, s, w) {
			dropped++
		}
	}
	if dropped == 0 {
		return
	}
	r.load[w].ActiveBlocks -= dropped
	t := r.active
	k := t.find(r.activeKey[rec])
	t.clearSecond(k, w)
	if !r.held(rec, 0, w) && t.clearBit(k, w) {
		t.del(k)
		r.freeRecs = append(r.freeRecs, rec)
	}
}

// newRecord returns a record for the trace block keyed key, its counts all zero.
func (r *Router) newRecord(key uint64) uint32 {
	if k := len(r.freeRecs); k > 0 {
		rec := r.freeRecs[k-1]
		r.freeRecs = r.freeRecs[:k-1]
		r.activeKey[rec] = key
		return rec
	}
	r.activeKey = append(r.activeKey, key)
	if r.refCounts == nil {
		r.denseCounts = append(r.denseCounts, make([]uint32, r.g*r.workers)...)
	}
	return uint32(len(r.activeKey) - 1)
}

// scanActive walks hashes one trace block at a time and fills r.newBlocks: per worker, the
// request's blocks not already active there, which is the blocks past w's active prefix
// (active blocks are prefix-closed). The walk stops when no worker matches any more.
func (r *Router) scanActive(hashes []uint64) {
	live := r.liveActive
	copy(live, r.all)
	n, g := len(hashes), r.g
	base, any := 0, true
	for ; base < n && any; base += g {
		k := r.active.find(hashes[base])
		if k < 0 {
			break
		}
		present, whole := r.active.mask(k), r.active.second(k)
		rec := r.active.aux[k]
		nk := min(g, n-base)
		any = false
		for j := range live {
			wb := j << 6
			for lost := live[j] &^ present[j]; lost != 0; lost &= lost - 1 {
				r.newBlocks[wb+bits.TrailingZeros64(lost)] = n - base
			}
			keep := live[j] & present[j]
			// Workers with only part of the trace block active: their active prefix may end in it.
			for part := keep &^ whole[j]; part != 0; part &= part - 1 {
				w := wb + bits.TrailingZeros64(part)
				a := 0
				for a < nk && r.held(rec, a, w) {
					a++
				}
				if a < nk {
					r.newBlocks[w] = n - base - a
					keep &^= 1 << (w & 63)
				}
			}
			live[j] = keep
			any = any || keep != 0
		}
	}
	end := min(base, n)
	for j := range live {
		wb := j << 6
		for m := live[j]; m != 0; m &= m - 1 {
			r.newBlocks[wb+bits.TrailingZeros64(m)] = n - end
		}
	}
}
