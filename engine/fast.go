package engine

import (
	"slices"
	"sort"
)

// The decode fast path. A worker whose waiting queue is empty and whose running requests
// are all decoding runs identical-shape steps until one of them completes: each step decodes
// every running request, no prompt block becomes full, and no KV event is published as long
// as new decode blocks come from plain free blocks. Nothing outside the worker can observe
// those steps until a request completes — except a request routed to it (which joins at the
// next step boundary) and a snapshot. So planFast prices the whole stretch at once and
// queues one event at its end; applyFast later applies the steps actually elapsed, and an
// arrival or snapshot cuts the stretch at the step in progress. Results are identical to the
// step-by-step loop (TestFastPathEquivalence checks it).

// maxFastSteps bounds how far ahead one stretch is priced, so a cut wastes little work.
const maxFastSteps = 32

// planFast starts a decode stretch at t if w qualifies; it reports whether it did.
func (s *Sim) planFast(w *worker, t int64) bool {
	n := len(w.running)
	if n == 0 || w.waiting.len() > 0 || n > w.spec.batched {
		return false
	}
	m := int32(maxFastSteps)
	var ctx int64
	for _, ri := range w.running {
		r := &s.reqs[ri]
		if r.fl.generated == 0 || r.fl.tokens-r.fl.computed != 1 {
			return false
		}
		m = min(m, r.out-r.fl.generated)
		ctx += int64(r.fl.tokens)
	}
	// Keep to steps whose new blocks come from plain free blocks: an eviction would publish
	// a KV event the router must see at its exact time.
	if free := w.pool.plainFree(); s.fastBlocks(w, m) > free {
		m = int32(sort.Search(int(m), func(k int) bool { return s.fastBlocks(w, int32(k)) > free })) - 1
	}
	if m < 2 {
		return false
	}
	w.fastDur = slices.Grow(w.fastDur[:0], int(m))[:m]
	w.fastEnds = slices.Grow(w.fastEnds[:0], int(m))[:m]
	if w.spec.decodeTimer != nil {
		w.spec.decodeTimer.DecodeStepsUS(n, ctx, w.fastDur)
	} else {
		b := &w.batch
		b.Prefill = b.Prefill[:0]
		b.Decodes = n
		b.FirstTokens, b.FirstTokenContextTokens = 0, 0
		for j := range w.fastDur {
			b.DecodeContextTokens = ctx + int64(j)*int64(n)
			w.fastDur[j] = w.spec.timer.StepTimeUS(b)
		}
	}
	end := t
	for j, d := range w.fastDur {
		d = max(d, 1) // as stepTime
		w.fastDur[j] = d
		end += d
		w.fastEnds[j] = end
	}
	w.fast = true
	if s.stalls.on {
		s.planStalls(w, n)
	}
	s.queueStepEnd(w, end)
	return true
}

// fastBlocks is how many new blocks the running requests need for k decode steps.
func (s *Sim) fastBlocks(w *worker, k int32) int {
	need := 0
	for _, ri := range w.running {
		r := &s.reqs[ri]
		need += max(0, int(s.blocksFor(r.fl.computed+k))-len(r.fl.blocks))
	}
	return need
}

// applyFast applies the first k steps of w's stretch and makes step k the step in progress,
// with its blocks allocated, as the step-by-step loop would have it.
func (s *Sim) applyFast(w *worker, k int) {
	n := len(w.running)
	w.sched = w.sched[:0]
	for _, ri := range w.running {
		r := &s.reqs[ri]
		if k > 0 {
			s.itl.add(w.fastEnds[0]-r.fl.lastTok, 1)
			r.fl.computed += int32(k)
			r.fl.generated += int32(k)
			r.fl.tokens += int32(k)
			r.fl.lastTok = w.fastEnds[k-1]
		}
		r.fl.blocks = w.pool.alloc(r.fl.blocks, int(s.blocksFor(r.fl.computed+1))-len(r.fl.blocks))
		w.sched = append(w.sched, sched{ri, 1})
	}
	for j := 1; j < k; j++ {
		s.itl.add(w.fastDur[j], int64(n))
	}
	w.peakBlocks = max(w.peakBlocks, w.pool.inUse)
	w.fast = false
	if s.kind == schedSGLang {
		s.sglangDecay(&s.sg[w.id], k+1) // steps 0..k were scheduled as decode batches
	}
}

// settleFast applies w's stretch up to the step in progress at t: the first step ending
// after t when after is set (a snapshot at t sees steps ending at t done), else the first
// ending at or after t (an arrival at t joins the step starting at the boundary).
func (s *Sim) settleFast(w *worker, t int64, after bool) {
	k := sort.Search(len(w.fastEnds), func(i int) bool {
		if after {
			return w.fastEnds[i] > t
		}
		return w.fastEnds[i] >= t
	})
	last := len(w.fastEnds) - 1
	if s.stalls.on && k < last {
		s.cutStalls(w, k)
	}
	s.applyFast(w, k)
	if k < last {
		s.queueStepEnd(w, w.fastEnds[k])
	}
}

// cutFast makes a request that just arrived at w visible to w's next step boundary.
func (s *Sim) cutFast(w *worker, t int64) {
	if w.fastEnds[len(w.fastEnds)-2] < t {
		return // the stretch's last step is in progress: its end is the boundary anyway
	}
	s.settleFast(w, t, false)
}

// settleAll brings every worker's state to time t (for snapshots and checks).
func (s *Sim) settleAll(t int64) {
	for i := range s.workers {
		if w := &s.workers[i]; w.fast {
			s.settleFast(w, t, true)
		}
	}
}
