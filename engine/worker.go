package engine

import (
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
)

// worker is one vLLM engine: a block pool, a FIFO waiting queue, the running requests in
// admission order, and the step in progress.
type worker struct {
	id      int
	spec    *poolSpec // its pool's scheduling limits and step timer (disagg.go)
	pool    blockPool
	running []int32
	waiting deque
	// receiving: slots held by handed-off requests whose KV is in flight to this decode
	// worker (disagg.go); they join running when it lands, so admission counts them.
	receiving int

	busy         bool      // a step is in progress (its StepEnd event is queued)
	startPending bool      // a StepStart event is queued
	api          apiServer // text prompts' tokenisation (apiserver.go)
	gen          uint32
	sched        []sched // the step in progress
	lastStart    int64   // start of the step in progress (or the last one)
	batch        model.Batch
	hit          []int32 // admission scratch: prefix-hit cache entries
	stored       kvBlocks

	// Decode fast path (see planFast): the steps in flight, not yet applied.
	fast     bool
	fastEnds []int64 // end time of each planned step
	fastDur  []int64

	requests     int
	promptTokens int64
	reusedTokens int64
	peakBlocks   int
	preemptions  int
	winPrompt    int64 // prompt and prefix-hit tokens admitted since the last snapshot
	winCached    int64
	// Config.LoadReport: Σ decode sequences × µs and Σ KV blocks in use × µs (stall.go).
	decodeUS, blockUS int64
	fastBlocks        []int // KV blocks in use in each step of the decode stretch
}

type sched struct {
	req    int32
	tokens int32
}

// reuse makes w a new worker (id, a pool of blocks in groups of group) in w's memory: its
// queues and buffers keep their capacity, emptied.
func (w *worker) reuse(id, blocks int, group int32) {
	pool := w.pool
	pool.reuse(blocks, group)
	stored := w.stored
	stored.reset()
	*w = worker{
		id:       id,
		pool:     pool,
		running:  w.running[:0],
		waiting:  deque{buf: w.waiting.buf},
		api:      apiServer{batch: w.api.batch[:0]},
		sched:    w.sched[:0],
		batch:    model.Batch{Prefill: w.batch.Prefill[:0]},
		hit:      w.hit[:0],
		stored:   stored,
		fastEnds: w.fastEnds[:0],
		fastDur:  w.fastDur[:0],

		fastBlocks: w.fastBlocks[:0],
	}
}

// startStep schedules w's next step at time t (its engine's scheduler, sched.go) and queues
// its end. With nothing to run the worker goes idle.
func (s *Sim) startStep(w *worker, t int64) {
	if s.ranks.on {
		if p, base := s.ranks.rankPoolOf(w.id); p.ranks > 1 {
			s.rankStep(w, p, base, t)
			return
		}
	}
	// The decode fast path plans steps ahead without arrivals, which async scheduling needs.
	if !s.stepwise && !s.cfg.Worker.AsyncScheduling && s.fastPath() && s.planFast(w, t) {
		return
	}
	w.sched = w.sched[:0]
	s.schedule(w, t)
	s.launch(w, t)
}

// scheduleVLLM fills w.sched as vLLM V1 schedules a step with chunked prefill and prefix
// caching.
func (s *Sim) scheduleVLLM(w *worker, t int64) {
	budget := int32(w.spec.batched)
	preempted := false
	if s.tiers != nil {
		m := s.tiers.m[w.id]
		m.Advance(t)
		s.settleLoads(w, m, t)
		s.emitTiers(w.id, m)
	}

	// Running requests first, in admission order: a decode takes one token, a partial
	// prefill continues with as much of its prompt as the budget allows.
	for i := 0; i < len(w.running) && budget > 0; i++ {
		ri := w.running[i]
		r := &s.reqs[ri]
		if s.tiers != nil && r.fl.loadUntil > t {
			continue // its lower-tier blocks are still arriving
		}
		n := min(r.fl.tokens-r.fl.computed, budget)
		need := int(s.blocksFor(r.fl.computed+n)) - len(r.fl.blocks)
		self := false
		for need > w.pool.available() && !self {
			// Victims come from the tail, so index i stays valid.
			preempted = true
			self = s.preempt(w, len(w.running)-1, t, true) == ri
		}
		if self {
			break
		}
		r.fl.blocks = w.pool.alloc(r.fl.blocks, need)
		w.sched = append(w.sched, sched{ri, n})
		budget -= n
	}

	visibleBefore := s.visibleBefore(w, t)

	// Then waiting requests, FIFO, while budget, sequence slots and blocks allow; none after
	// a preemption in this step, as in vLLM.
	for !preempted && w.waiting.len() > 0 && budget > 0 && len(w.running)+w.receiving < w.spec.seqs {
		ri := w.waiting.front()
		r := &s.reqs[ri]
		if r.fl.queued >= visibleBefore {
			break
		}
		// Prefix hit: the longest run of cached full blocks, leaving at least the last
		// token to compute.
		lim := s.maxHit(r)
		hitFree := s.prefixHit(w, r, lim)
		hit := int32(len(w.hit))
		if s.tiers != nil && hit < lim && !s.cfg.Worker.NoPrefixCaching {
			if n2, n3 := s.tiers.m[w.id].Lookup(t, r.fl.hashes, hit, lim, w.pool.g); n2+n3 > 0 {
				if !s.onboard(w, ri, t, hitFree, n2, n3) {
					break
				}
				continue
			}
		}
		n := min(r.fl.tokens-hit*s.blockSize, budget)
		need := int(s.blocksFor(hit*s.blockSize+n) - hit)
		if need > w.pool.available()-hitFree {
			break
		}
		w.waiting.popFront()
		s.admit(w, ri, n, t)
		budget -= n
	}
}

// launch prices the step w.sched holds, starting at t, and queues its end (or idles w).
func (s *Sim) launch(w *worker, t int64) {
	if w.pool.removed.len() > 0 {
		if s.tiers != nil {
			s.offload(w, t)
		}
		s.emit(w.id, router.BlocksRemoved, &w.pool.removed)
		w.pool.removed.reset()
	}
	if len(w.sched) == 0 {
		w.busy = false
		if s.publish {
			s.publishLoad(w)
		}
		return
	}
	w.peakBlocks = max(w.peakBlocks, w.pool.inUse)
	// A lockstep step of attention ranks (dprank.go) has filled and priced every rank's
	// batch already: its duration is set.
	dur, b := s.ranks.dur, &w.batch
	if dur == 0 {
		b = s.fillBatch(w)
		dur = stepTime(w.spec.timer, b)
	}
	if s.dynosim {
		// Dynamo's mocker caches a pass's blocks when it allocates them and its replay shows
		// the router that pass's KV events at the pass's start (RouterEventVisibility::PassStart).
		w.stored.reset()
		for _, sc := range w.sched {
			s.storeFull(w, &s.reqs[sc.req], s.reqs[sc.req].fl.computed+sc.tokens)
		}
		if w.stored.len() > 0 {
			s.emit(w.id, router.BlocksStored, &w.stored)
		}
	}
	w.lastStart = t
	if s.stalls.on {
		s.mixedStep(w, b, dur)
		w.integrate(b.Decodes, w.pool.inUse, dur)
	}
	if s.publish {
		s.publishLoad(w)
	}
	s.queueStepEnd(w, t+dur)
}

// fillBatch sets w.batch to the step w.sched holds and returns it.
func (s *Sim) fillBatch(w *worker) *model.Batch {
	b := &w.batch
	b.Prefill = b.Prefill[:0]
	b.Decodes = 0
	b.DecodeContextTokens = 0
	b.FirstTokens = 0
	b.FirstTokenContextTokens = 0
	for _, sc := range w.sched {
		r := &s.reqs[sc.req]
		if r.fl.tokens-r.fl.computed == 1 && (r.fl.generated > 0 || w.spec.mockerPD && w.spec.decode) {
			b.Decodes++
			b.DecodeContextTokens += int64(r.fl.tokens)
		} else {
			b.Prefill = append(b.Prefill, model.Chunk{NewTokens: int(sc.tokens), CachedTokens: int(r.fl.computed)})
			if r.fl.computed+sc.tokens == r.fl.tokens && !(w.spec.mockerPD && w.spec.prefill) {
				b.FirstTokens++
				b.FirstTokenContextTokens += int64(r.fl.tokens)
			}
		}
	}
	return b
}

// stepTime is the timer's duration, at least 1 µs so the clock always advances.
func stepTime(timer model.StepTimer, b *model.Batch) int64 {
	return max(timer.StepTimeUS(b), 1)
}

func (s *Sim) queueStepEnd(w *worker, end int64) {
	w.busy = true
	w.gen++
	s.heap.push(event{time: end, phase: phaseStepEnd, gen: w.gen, id: int32(w.id)})
}

// finishStep applies the step that ends at t: computed tokens, newly full prompt blocks
// into the prefix cache ("stored" event), one token for every request whose computed
// tokens caught up with its tokens, completions.
func (s *Sim) finishStep(w *worker, t int64) {
	w.busy = false
	if w.fast {
		s.applyFast(w, len(w.fastEnds)-1)
	}
	if w.spec.decode && s.dis.pd != nil {
		s.adoptLandedPD(w, t) // requests that landed during the step join the next one
	}
	w.stored.reset()
	doneAny := false
	for _, sc := range w.sched {
		r := &s.reqs[sc.req]
		r.fl.computed += sc.tokens
		if r.fl.computed < r.fl.tokens {
			// A partial prefill; TensorRT-LLM stores a prompt's blocks for reuse only once
			// its context is done.
			if s.kind != schedTRTLLM {
				s.storeFull(w, r, r.fl.computed)
			}
			continue
		}
		s.storeFull(w, r, r.fl.computed)
		r.fl.generated++
		r.fl.tokens++
		accepted := int32(0)
		if s.spec != nil && r.fl.generated > 1 {
			accepted = s.acceptDrafts(r) // specdec.go
		}
		if s.outputs {
			s.adm.Generated(int64(sc.req), int(r.fl.generated), int(r.out))
		}
		if r.fl.generated == 1 {
			if w.spec.decode {
				r.firstTok = t
				s.dis.rt.FirstToken(int64(sc.req))
			} else {
				if !w.spec.prefill {
					r.firstTok = t
				}
				if s.aic {
					s.adm.SetNow(t)
				}
				s.rt.FirstToken(int64(sc.req))
				if s.adm != nil {
					s.release(t)
				}
			}
		} else {
			s.itl.add(t-r.fl.lastTok, 1)
			if accepted > 0 {
				s.itl.add(0, int64(accepted)) // streamed with the step's own token
			}
		}
		r.fl.lastTok = t
		if r.fl.generated == r.out || w.spec.prefill {
			doneAny = true
		}
	}
	if w.stored.len() > 0 {
		s.emit(w.id, router.BlocksStored, &w.stored)
	}
	if !doneAny {
		return
	}
	keep := w.running[:0]
	for _, ri := range w.running {
		if r := &s.reqs[ri]; w.spec.prefill && r.fl.generated > 0 {
			s.handoff(w, ri, t)
		} else if r.fl.generated == r.out {
			s.complete(w, ri, t)
		} else {
			keep = append(keep, ri)
		}
	}
	w.running = keep
	if w.spec.decode {
		s.reserve(w, t) // completions freed blocks and slots
	}
}

// storeFull registers r's prompt blocks that computed tokens fill, beyond those already
// registered, in w's prefix cache and lists the newly cached ones in w.stored.
func (s *Sim) storeFull(w *worker, r *request, computed int32) {
	full := min(s.fullBlocks(computed), int32(len(r.fl.hashes)))
	if full <= r.fl.stored || w.spec.noPrefix {
		return
	}
	G := w.pool.g
	rec, sub := int32(-1), r.fl.stored%G
	var rs record
	s.sink += w.pool.groups.prefetch(r.fl.hashes[r.fl.stored-sub:full], G)
	for j := r.fl.stored; j < full; j++ {
		if rec < 0 || sub == 0 {
			rec = w.pool.groupRec(r.fl.hashes[j])
			rs = w.pool.record(rec)
		}
		if w.pool.storeIn(rs, rec, sub, r.fl.blocks, j) {
			key := r.fl.hashes[j]
			w.stored.add(subBlockHash(key, sub), key, sub)
		}
		if sub++; sub == G {
			sub = 0
		}
	}
	r.fl.stored = full
}

// deque is a FIFO of request ids with push-front (for preempted requests), as a ring.
type deque struct {
	buf        []int32
	head, size int
}

func (q *deque) len() int { return q.size }

func (q *deque) front() int32 { return q.buf[q.head] }

func (q *deque) at(i int) int32 { return q.buf[(q.head+i)%len(q.buf)] }

func (q *deque) grow() {
	if q.size < len(q.buf) {
		return
	}
	nb := make([]int32, max(16, 2*len(q.buf)))
	for i := range q.size {
		nb[i] = q.at(i)
	}
	q.buf, q.head = nb, 0
}

func (q *deque) pushBack(x int32) {
	q.grow()
	q.buf[(q.head+q.size)%len(q.buf)] = x
	q.size++
}

func (q *deque) pushFront(x int32) {
	q.grow()
	q.head = (q.head - 1 + len(q.buf)) % len(q.buf)
	q.buf[q.head] = x
	q.size++
}

func (q *deque) popFront() int32 {
	x := q.buf[q.head]
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return x
}

func (q *deque) set(i int, x int32) { q.buf[(q.head+i)%len(q.buf)] = x }

// removeAt takes the i-th request out of the queue, keeping the others' order (the
// schedulers that skip requests admit from inside the queue).
func (q *deque) removeAt(i int) {
	for j := i; j > 0; j-- {
		q.set(j, q.at(j-1))
	}
	q.popFront()
}
