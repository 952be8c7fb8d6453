package router

// Active blocks: the prompt blocks of requests in flight, per worker, kept per trace block
// like the prefix-cache index (cached.go). A request holds a whole prefix of its prompt,
// so the sub-blocks of a trace block active on a worker are always its first few, and a
// second worker mask of the trace blocks wholly active lets Route's walk skip the
// per-worker look-up for them.

// counts returns the g refcounts of record rec on worker w — how many in-flight requests
// on w hold each sub-block — or nil when none does. Up to 64 workers they are a row of the
// dense slab; wider fleets find their row through refCounts, one probe per trace block.
func (r *Router) counts(rec uint32, w int) []uint32 {
	if r.refCounts == nil {
		i := (int(rec)*r.workers + w) * r.g
		return r.denseCounts[i : i+r.g]
	}
	k := r.refCounts.find(refKey(rec, w))
	if k < 0 {
		return nil
	}
	i := int(*r.refCounts.word(k)-1) * r.g
	return r.wideCounts[i : i+r.g]
}

// newCounts returns the refcounts of record rec on worker w, giving a wider fleet's pair
// a zeroed row first if it has none.
func (r *Router) newCounts(rec uint32, w int) []uint32 {
	if c := r.counts(rec, w); c != nil {
		return c
	}
	row := takeRow(&r.freeRows, &r.wideCounts, r.g)
	*r.refCounts.word(r.refCounts.insert(refKey(rec, w))) = uint64(row) + 1
	return r.wideCounts[row*r.g : (row+1)*r.g]
}

// dropCounts gives back a wider fleet's row of record rec on worker w, all zero now.
func (r *Router) dropCounts(rec uint32, w int) {
	if r.refCounts == nil {
		return
	}
	k := r.refCounts.find(refKey(rec, w))
	r.freeRows = append(r.freeRows, uint32(*r.refCounts.word(k)-1))
	r.refCounts.del(k)
}

// bookBlocks books the first nk sub-blocks of the trace block keyed key for a request on
// worker w and returns the trace block's record.
func (r *Router) bookBlocks(w int, key uint64, nk int) uint32 {
	t := r.active
	k := t.insert(key)
	if !t.used(k) {
		t.setAux(k, r.newRecord(key))
	}
	rec := t.aux(k)
	var c, totals []uint32
	if r.refCounts == nil {
		c = r.counts(rec, w)
	} else {
		// A wider fleet's trace block held by one worker keeps that worker's refcounts
		// only as the record's totals; a second holder gives the first its own row.
		totals = r.totals(rec)
		c = totals
		if v, n := t.holder(k); n > 1 || n == 1 && v != w {
			if n == 1 {
				copy(r.newCounts(rec, v), totals)
			}
			c = r.newCounts(rec, w)
			for s := range nk {
				totals[s]++
			}
		}
	}
	grew := 0
	for s := range nk {
		if c[s]++; c[s] == 1 {
			grew++
		}
	}
	if grew > 0 {
		r.load[w].ActiveBlocks += grew
		if r.refCounts == nil {
			t.addDense(k, w, nk == r.g)
		} else {
			t.addWide(k, w, nk == r.g)
		}
	}
	return rec
}

// totals is a wider fleet's record rec's refcounts summed over its workers.
func (r *Router) totals(rec uint32) []uint32 {
	i := int(rec) * r.g
	return r.activeTotals[i : i+r.g]
}

// unbook releases what bookBlocks booked. The sub-blocks no longer held on w are the last
// ones of its active prefix, since the requests left all hold prefixes.
func (r *Router) unbook(w int, rec uint32, nk int) {
	t := r.active
	k := -1
	var c []uint32
	sole := true // w is the trace block's one holder (wider fleets)
	if r.refCounts == nil {
		c = r.counts(rec, w)
	} else {
		k = t.find(r.activeKey[rec])
		totals := r.totals(rec)
		c = totals
		if _, n := t.holder(k); n > 1 {
			sole = false
			c = r.counts(rec, w)
			for s := range nk {
				totals[s]--
			}
		}
	}
	dropped := 0
	for s := range nk {
		if c[s]--; c[s] == 0 {
			dropped++
		}
	}
	if dropped == 0 {
		return
	}
	r.load[w].ActiveBlocks -= dropped
	if k < 0 {
		k = t.find(r.activeKey[rec])
	}
	if r.refCounts == nil {
		t.clearSecondDense(k, w)
	} else {
		t.clearSecondWide(k, w)
	}
	if c[0] != 0 {
		return
	}
	if !sole || r.refCounts == nil {
		r.dropCounts(rec, w)
	}
	if empty := t.words == 1 && t.clearBitDense(k, w) || t.words > 1 && t.clearBitWide(k, w); empty {
		t.del(k)
		r.freeRecs = append(r.freeRecs, rec)
		return
	}
	if v, n := t.holder(k); r.refCounts != nil && n == 1 {
		// One holder left: its refcounts are the totals again.
		clear(r.counts(rec, v))
		r.dropCounts(rec, v)
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
	} else {
		r.activeTotals = append(r.activeTotals, make([]uint32, r.g)...)
	}
	return uint32(len(r.activeKey) - 1)
}

// scanActive fills r.activePrefix: per worker, how many of the request's leading blocks are
// already active there (active blocks are prefix-closed, so the rest are new to it).
func (r *Router) scanActive(hashes []uint64) {
	r.scanPrefix(r.active, r.liveActive, hashes, r.activePrefix, r.activeSubs)
}

// activeSubs is how many of trace block rec's first nk sub-blocks lead w's active prefix.
func (r *Router) activeSubs(k int, rec uint32, w, nk int) int {
	var c []uint32
	if _, n := r.active.holder(k); r.refCounts != nil && n == 1 {
		c = r.totals(rec) // w is the one holder: scanPrefix asks holders only
	} else {
		c = r.counts(rec, w)
	}
	a := 0
	for a < nk && c[a] != 0 {
		a++
	}
	return a
}
