package router

import (
	"math/bits"
)

// The prefix-cache index per trace block. A trace names prompts in trace blocks of G engine
// blocks (512 tokens against 64 for the seed), and two prompts share engine block j exactly
// when they share the trace blocks up to the one j ends in. So the index keeps one entry
// per trace block — keyed by its first engine block's hash, which names the whole prefix
// through that trace block — instead of G: a worker mask of the workers caching any of its
// sub-blocks, a second mask of those caching all G, and per (entry, worker) a mask of the
// cached sub-blocks. Route's walk then probes once per trace block and looks at a worker's
// sub-block mask only where the worker holds part of the block, and a KV event probes once
// per trace block it touches.
//
// The sub-block masks keep every hole exactly: evictions may leave sub-block s out while
// s+1 stays (an engine frees a request's blocks tail first, so within one request the
// cached part of a trace block stays a prefix, but a block computed twice concurrently
// breaks that), and the overlap of a worker is still the first missing engine block,
// wherever it is. The index answers exactly what a table keyed by engine-block hash would
// (TestGroupedIndexerMatchesNaiveModel).

// cachedSubs returns the sub-block mask of record rec, in slot k of the cached table, on
// worker w (0: none cached). A wide fleet keeps the masks of a trace block held by one worker
// nowhere: they are the sub-blocks whose holder count is not zero (heldSubs).
func (r *Router) cachedSubs(k int, rec uint32, w int) uint32 {
	if r.subsWide == nil {
		return r.record(rec)[r.g+w]
	}
	switch v, n := r.cached.holder(k); {
	case n == 0:
		return 0
	case n == 1 && v != w:
		return 0
	case n == 1:
		return r.heldSubs(rec)
	}
	if i := r.subsWide.find(refKey(rec, w)); i >= 0 {
		return uint32(*r.subsWide.word(i))
	}
	return 0
}

// heldSubs is the mask of the sub-blocks of record rec that some worker caches. Only wide
// fleets (subsWide) keep it, in the record after the holder counts, as the counts change;
// in a narrow fleet's record that word is worker 0's mask, so this is for wide fleets only.
func (r *Router) heldSubs(rec uint32) uint32 { return r.record(rec)[r.g] }

// setCachedSubs stores the sub-block mask of record rec on worker w (wider fleets' masks of
// trace blocks held by two or more workers).
func (r *Router) setCachedSubs(rec uint32, w int, m uint32) {
	if r.subsWide == nil {
		r.record(rec)[r.g+w] = m
		return
	}
	t := r.subsWide
	if m == 0 {
		if i := t.find(refKey(rec, w)); i >= 0 {
			t.del(i)
		}
		return
	}
	*t.word(t.insert(refKey(rec, w))) = uint64(m)
}

// newCachedRecord returns a record for a trace block entering the index; its sub-block
// masks and holder counts are all zero.
func (r *Router) newCachedRecord() uint32 {
	if k := len(r.freeCached); k > 0 {
		rec := r.freeCached[k-1]
		r.freeCached = r.freeCached[:k-1]
		return rec
	}
	rec := uint32(r.cachedRecs)
	r.cachedRecs++
	if int(rec>>recChunkShift) == len(r.recs) {
		r.recs = append(r.recs, make([]uint32, r.recStride<<recChunkShift))
	}
	return rec
}

// recChunkShift: a chunk of cached records holds 1,024 of them.
const recChunkShift = 10

// record is cached record rec's counts.
func (r *Router) record(rec uint32) []uint32 {
	i := int(rec&(1<<recChunkShift-1)) * r.recStride
	return r.recs[rec>>recChunkShift][i : i+r.recStride]
}

// blockAt is the trace-block key and sub-block of an event's i-th block.
func (ev *KVEvent) blockAt(i int) (uint64, uint32) {
	if ev.Keys == nil {
		return ev.Hashes[i], 0
	}
	return ev.Keys[i], uint32(ev.Subs[i])
}

// runEnd is the end of the run of blocks from i on that share i's trace block.
func (ev *KVEvent) runEnd(i int) int {
	if ev.Keys == nil {
		return i + 1
	}
	j := i + 1
	for j < len(ev.Keys) && ev.Keys[j] == ev.Keys[i] {
		j++
	}
	return j
}

// store adds the sub-blocks of ev's blocks [i, j), all of one trace block, to worker w.
func (r *Router) store(ev *KVEvent, i, j int) {
	w := ev.Worker
	key, _ := ev.blockAt(i)
	t := r.cached
	k := t.insert(key)
	if !t.used(k) {
		t.setAux(k, r.newCachedRecord())
	}
	rec := t.aux(k)
	m := r.cachedSubs(k, rec, w)
	sole := true // w is (or becomes) the trace block's one holder
	if r.subsWide != nil {
		if v, n := t.holder(k); n > 1 || n == 1 && v != w {
			sole = false
			if n == 1 {
				// A second holder: the first one's mask, implicit until now, is kept.
				r.setCachedSubs(rec, v, r.heldSubs(rec))
			}
		}
	}
	counts := r.record(rec)
	for ; i < j; i++ {
		_, sub := ev.blockAt(i)
		if b := uint32(1) << sub; m&b == 0 {
			m |= b
			h := &counts[sub]
			if *h == 0 {
				r.cachedN++
				if r.subsWide != nil {
					counts[r.g] |= b
				}
			}
			*h++
		}
	}
	if r.subsWide == nil || !sole {
		r.setCachedSubs(rec, w, m)
	}
	if r.subsWide == nil {
		t.addDense(k, w, m == r.wholeSubs)
	} else {
		t.addWide(k, w, m == r.wholeSubs)
	}
}

// remove drops the sub-blocks of ev's blocks [i, j), all of one trace block, from worker w.
// Blocks the index does not hold on w are ignored.
func (r *Router) remove(ev *KVEvent, i, j int) {
	w := ev.Worker
	key, _ := ev.blockAt(i)
	t := r.cached
	k := t.find(key)
	if k < 0 {
		return
	}
	rec := t.aux(k)
	m := r.cachedSubs(k, rec, w)
	if m == 0 {
		return
	}
	_, holders := t.holder(k)
	counts := r.record(rec)
	for ; i < j; i++ {
		_, sub := ev.blockAt(i)
		if b := uint32(1) << sub; m&b != 0 {
			m &^= b
			h := &counts[sub]
			if *h--; *h == 0 {
				r.cachedN--
				if r.subsWide != nil {
					counts[r.g] &^= b
				}
			}
		}
	}
	if r.subsWide == nil || holders > 1 {
		r.setCachedSubs(rec, w, m)
	}
	if r.subsWide == nil {
		t.clearSecondDense(k, w)
	} else {
		t.clearSecondWide(k, w)
	}
	if m != 0 {
		return
	}
	if empty := t.words == 1 && t.clearBitDense(k, w) || t.words > 1 && t.clearBitWide(k, w); empty {
		t.del(k)
		r.freeCached = append(r.freeCached, rec)
		return
	}
	if v, n := t.holder(k); r.subsWide != nil && n == 1 {
		// One holder left: its mask is implicit again.
		r.setCachedSubs(rec, v, 0)
	}
}

// scanCached fills r.overlap: each worker's count of leading engine blocks in its prefix
// cache.
func (r *Router) scanCached(hashes []uint64) {
	r.scanPrefix(r.cached, r.liveCached, hashes, r.overlap, r.cachedLead)
}

// cachedLead is how many of trace block rec's first nk sub-blocks lead w's cached prefix.
func (r *Router) cachedLead(k int, rec uint32, w, nk int) int {
	need := uint32(1)<<nk - 1
	if m := r.cachedSubs(k, rec, w); m&need != need {
		return bits.TrailingZeros32(^m)
	}
	return nk
}

// scanPrefix walks hashes one trace block at a time through t and sets prefix[w] to the
// number of the request's leading engine blocks each worker holds there. A worker that holds
// only part of a trace block (t's second mask lacks it) is asked lead for how far its
// prefix reaches into it. The walk stops when no worker matches any more; live is scratch.
func (r *Router) scanPrefix(t *maskTable, live []uint64, hashes []uint64, prefix []int, lead func(k int, rec uint32, w, nk int) int) {
	copy(live, r.all)
	// Every prefix starts at 0 and only longer ones are written: a wide fleet's workers that
	// hold not even the first trace block (most of them) cost one clear, not a write each.
	clear(prefix)
	n, g := len(hashes), r.g
	base := 0
	// live's words outside [lo, hi) are zero: past the first trace block a wide fleet's walk
	// looks only at the words of the workers still matching.
	lo, hi := 0, len(live)
	for ; base < n && lo < hi; base += g {
		k := t.find(hashes[base])
		if k < 0 {
			break
		}
		var present, whole []uint64
		if t.words == 1 {
			present, whole = t.s[k*t.stride+1:k*t.stride+2], t.s[k*t.stride+2:k*t.stride+3]
		} else {
			present, whole = t.wideMask(k), t.wideSecond(k)
		}
		rec := t.aux(k)
		nk := min(g, n-base)
		nlo, nhi := hi, lo
		for j := lo; j < hi; j++ {
			wb := j << 6
			if base > 0 {
				for lost := live[j] &^ present[j]; lost != 0; lost &= lost - 1 {
					prefix[wb+bits.TrailingZeros64(lost)] = base
				}
			}
			keep := live[j] & present[j]
			for part := keep &^ whole[j]; part != 0; part &= part - 1 {
				w := wb + bits.TrailingZeros64(part)
				if a := lead(k, rec, w, nk); a < nk {
					prefix[w] = base + a
					keep &^= 1 << (w & 63)
				}
			}
			live[j] = keep
			if keep != 0 {
				nlo, nhi = min(nlo, j), j+1
			}
		}
		lo, hi = nlo, nhi
	}
	end := min(base, n)
	if end == 0 {
		return
	}
	for j := lo; j < hi; j++ {
		wb := j << 6
		for m := live[j]; m != 0; m &= m - 1 {
			prefix[wb+bits.TrailingZeros64(m)] = end
		}
	}
}
