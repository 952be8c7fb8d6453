package engine

import (
	"math"
	"slices"
)

// SGLang's scheduler (python/sglang/srt/managers/scheduler.py, schedule_policy.py,
// schedule_batch.py; Dynamo's model of it, lib/mocker/src/scheduler/sglang/; revisions in
// docs/backend-schedulers.md). A step is a prefill ("extend") batch or a decode batch,
// never both (enable_mixed_chunk is off by default): whenever a prefill batch can form it
// runs, and the running requests wait. A prefill batch continues the one request in chunked
// prefill, then takes waiting requests (in queue order, or longest cached prefix first under
// LPM) while the PrefillAdder's three budgets allow:
//   - memory: the pool's free and evictable tokens, less each running request's remaining
//     output (clipped at 4096) times new_token_ratio, less what this batch took (its
//     prompts and full outputs);
//   - max_prefill_tokens of prompt beyond the first request;
//   - chunked_prefill_size (the deployment's max_num_batched_tokens): a prompt that does not
//     fit what is left is truncated to it, page-aligned, and continues next step.
//
// A request the memory budget refuses latches the batch full: no prefill is tried again
// until a running request leaves. A decode batch gives every running request one token; if
// the pool cannot hold them, requests are retracted — fewest output tokens first, longest
// prompt among those — until it can: their decode tokens are freed, their prompt pages stay
// in the radix cache, and they queue again at the back. new_token_ratio starts at 0.7 ×
// conservativeness, falls linearly to 0.14 of that over 600 decode batches, and is reset by a
// retraction to the retained requests' decoded share plus 20 steps each.
//
// With --scheduler-recv-interval N > 1 the scheduler takes new requests off its socket only
// when a counter reaches N: every decode batch adds one, a prefill batch or an idle loop
// enough to receive at once (managers/scheduler_recv_skipper.py, SchedulerRecvSkipper). A
// request arriving during a decode stretch waits up to N decode batches before any batch can
// take it.
//
// Pages are the engine's blocks: Dynamo serves SGLang with its page size as the router's
// block size, and SGLang's KV events name pages (the radix tree's entries). The radix cache
// is the shared block pool: a page in use is locked (referenced) and never evicted; free
// cached pages are evicted least recently used first.

// SGLang's defaults (schedule_policy.py, scheduler.py, server_args.py).
const (
	sglangClipMaxNewTokens = 4096  // CLIP_MAX_NEW_TOKENS_ESTIMATION
	sglangMaxPrefillTokens = 16384 // --max-prefill-tokens
	sglangInitRatio        = 0.7   // SGLANG_INIT_NEW_TOKEN_RATIO
	sglangMinRatioFactor   = 0.14  // SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
	sglangRatioDecaySteps  = 600   // SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
	sglangRetractSteps     = 20    // retract_decode_steps
	sglangLPMMaxQueue      = 128   // LPM falls back to FCFS above this queue length
	sglangInBatchTokens    = 32    // IN_BATCH_PREFIX_CACHING_{CHECK,DEPRIORITIZE}_THRESHOLD
)

// sglangWorker is one SGLang engine's scheduler state beyond the shared worker's.
type sglangWorker struct {
	// new_token_ratio is base lowered by decayed decode batches' steps (ratio); one
	// multiplication rather than a subtraction per batch, so a decode stretch of the fast path
	// decays it in one go.
	base    float64
	decayed int64
	fullAt  int   // running requests when the batch was latched full; -1: not latched
	chunked int32 // the request in chunked prefill; -1: none
	// The receive counter (SchedulerRecvSkipper), the arrival bound of the requests taken
	// off the socket so far, and what the last batch was.
	recvCount int
	recvBound int64
	last      sglangBatch
}

// sglangBatch is the kind of a worker's last batch, the weight SchedulerRecvSkipper counts.
type sglangBatch uint8

const (
	sglangIdle sglangBatch = iota
	sglangExtend
	sglangDecodeBatch
)

// sglangParams are the scheduler's arguments, resolved from SchedulerConfig.
type sglangParams struct {
	lpm                            bool
	maxPrefill                     int32
	recvInterval                   int
	initRatio, minRatio, decayStep float64
}

func newSGLangParams(c SchedulerConfig) sglangParams {
	cons := c.SGLangConservativeness
	if cons == 0 {
		cons = 1
	}
	p := sglangParams{lpm: c.SGLangPolicy == SGLangLPM, maxPrefill: int32(c.SGLangMaxPrefillTokens), recvInterval: c.SGLangRecvInterval}
	if p.maxPrefill == 0 {
		p.maxPrefill = sglangMaxPrefillTokens
	}
	p.initRatio = min(sglangInitRatio*cons, 1)
	p.minRatio = min(p.initRatio*sglangMinRatioFactor, 1)
	p.decayStep = (p.initRatio - p.minRatio) / sglangRatioDecaySteps
	return p
}

// scheduleSGLang fills w.sched with SGLang's next batch at t.
func (s *Sim) scheduleSGLang(w *worker, t int64) {
	g := &s.sg[w.id]
	if g.fullAt >= 0 && len(w.running) < g.fullAt {
		g.fullAt = -1
	}
	if s.sglangPrefill(w, g, t, s.sglangRecv(w, g, t)) {
		g.last = sglangExtend
		return
	}
	s.sglangDecode(w, g, t)
	g.last = sglangDecodeBatch
	if len(w.sched) == 0 {
		// Nothing to run: the idle loop takes what arrived at once.
		g.last = sglangIdle
		if s.sgp.recvInterval > 1 && w.waiting.len() > 0 && s.sglangPrefill(w, g, t, s.sglangRecv(w, g, t)) {
			g.last = sglangExtend
		}
	}
}

// sglangRecv is the arrival bound of the requests SGLang's scheduler holds when it forms the
// batch starting at t: all that arrived before it without a receive interval, else those
// taken at the last receive (SchedulerRecvSkipper.handle, weighted by g's last batch).
func (s *Sim) sglangRecv(w *worker, g *sglangWorker, t int64) int64 {
	visible := t + 1
	if s.cfg.Worker.AsyncScheduling && len(w.running) > 0 {
		visible = w.lastStart // scheduled while the previous step ran (worker.go)
	}
	if s.sgp.recvInterval <= 1 {
		return visible
	}
	if g.last == sglangDecodeBatch {
		g.recvCount++
	} else {
		g.recvCount = s.sgp.recvInterval // a prefill batch weighs 1,000; an idle loop spins
	}
	if g.recvCount >= s.sgp.recvInterval {
		g.recvCount, g.recvBound = 0, visible
	}
	return g.recvBound
}

// sglangPrefill forms a prefill batch (get_new_batch_prefill with PrefillAdder) and reports
// whether one formed.
// Only requests that arrived before visible are in the scheduler's queue.
func (s *Sim) sglangPrefill(w *worker, g *sglangWorker, t, visible int64) bool {
	maxRunning := w.spec.seqs // the pool's: a disaggregated fleet's pools differ
	if g.chunked < 0 {
		if w.waiting.len() == 0 || g.fullAt >= 0 {
			return false
		}
		if len(w.running) >= maxRunning {
			g.fullAt = len(w.running)
			return false
		}
	}
	if s.sgp.lpm && w.waiting.len() <= sglangLPMMaxQueue {
		s.sortLPM(w)
	}
	B := s.blockSize
	ratio := s.sglangRatio(g)
	remTotal := float64(int64(w.pool.available()) * int64(B))
	for _, ri := range w.running {
		if ri != g.chunked {
			r := &s.reqs[ri]
			remTotal -= float64(min(r.out-r.fl.generated, sglangClipMaxNewTokens)) * ratio
		}
	}
	remInput := s.sgp.maxPrefill
	remChunk := int32(w.spec.batched)

	// The request in chunked prefill continues first (add_chunked_req).
	if ri := g.chunked; ri >= 0 {
		r := &s.reqs[ri]
		rest := r.fl.tokens - r.fl.computed
		n, truncated := rest, rest > remChunk
		if truncated {
			n = remChunk / B * B
		}
		if need := int(s.blocksFor(r.fl.computed+n)) - len(r.fl.blocks); n > 0 && need <= w.pool.available() {
			r.fl.blocks = w.pool.alloc(r.fl.blocks, need)
			w.sched = append(w.sched, sched{ri, n})
			charged := s.pageCeil(n)
			remTotal -= float64(charged)
			if !truncated || s.prefillEnds(r, r.fl.computed+n) {
				remTotal -= float64(min(r.out-r.fl.generated, sglangClipMaxNewTokens))
				g.chunked = -1
			}
			remInput -= charged
			remChunk -= charged
		}
	}

	for i := 0; i < w.waiting.len(); {
		if len(w.running) >= maxRunning {
			g.fullAt = len(w.running)
			break
		}
		if remTotal <= 0 {
			g.latch(len(w.running))
			break
		}
		if remInput <= 0 || remChunk <= 0 {
			break
		}
		ri := w.waiting.at(i)
		r := &s.reqs[ri]
		if r.fl.queued >= visible {
			i++ // not in the engine's queue yet
			continue
		}
		hitFree := s.prefixHit(w, r, s.maxHit(r))
		hit := int32(len(w.hit))
		extend := r.fl.tokens - hit*B
		outRes := min(r.out-r.fl.generated, sglangClipMaxNewTokens)
		total := float64(extend + outRes)
		if total >= remTotal {
			g.latch(len(w.running))
			break
		}
		input := s.pageCeil(extend)
		if input > remInput && len(w.sched) > 0 {
			break
		}
		// Locking the matched prefix takes its free pages out of the evictable ones.
		if total > remTotal-float64(int64(hitFree)*int64(B)) {
			g.latch(len(w.running))
			break
		}
		n, truncated := extend, input > remChunk
		if truncated {
			if n = remChunk / B * B; n <= 0 {
				break
			}
		}
		if need := int(s.blocksFor(hit*B+n) - hit); need > w.pool.available()-hitFree {
			break
		}
		w.waiting.removeAt(i)
		s.admit(w, ri, n, t)
		charged := s.pageCeil(n)
		if truncated && !s.prefillEnds(r, hit*B+n) {
			g.chunked = ri
			remTotal -= float64(charged)
		} else {
			remTotal -= float64(charged + outRes)
		}
		remInput -= charged
		remChunk -= charged
	}
	return len(w.sched) > 0
}

// prefillEnds reports whether a prefill that has computed `computed` tokens of r is over: a
// retracted request recomputes its prompt and output but the last output token, which its
// next decode step feeds (worker.go prices it as a decode, and the decode fast path takes it
// as one), so it is no longer in chunked prefill with one token left.
func (s *Sim) prefillEnds(r *request, computed int32) bool {
	return r.fl.generated > 0 && computed >= r.fl.tokens-1
}

// latch marks the batch full (batch_is_full) when requests are running: no prefill is tried
// until one of them leaves.
func (g *sglangWorker) latch(running int) {
	if running > 0 {
		g.fullAt = running
	}
}

// pageCeil is n tokens rounded up to whole pages.
func (s *Sim) pageCeil(n int32) int32 { return s.blocksFor(n) * s.blockSize }

// sglangDecode forms a decode batch of every running request but the one in chunked
// prefill (update_running_batch), retracting requests while the pool cannot hold one more
// token each (check_decode_mem, retract_decode).
func (s *Sim) sglangDecode(w *worker, g *sglangWorker, t int64) {
	need := 0
	for _, ri := range w.running {
		if ri != g.chunked {
			r := &s.reqs[ri]
			need += int(s.blocksFor(r.fl.computed+1)) - len(r.fl.blocks)
		}
	}
	retracted := false
	for need > w.pool.available() {
		v := s.retractVictim(w, g)
		if v < 0 {
			// One request left and still no room: the chunked prefill holds it; give way.
			if g.chunked < 0 {
				break
			}
			v = slices.Index(w.running, g.chunked)
			g.chunked = -1
		} else {
			r := &s.reqs[w.running[v]]
			need -= int(s.blocksFor(r.fl.computed+1)) - len(r.fl.blocks)
		}
		s.preempt(w, v, t, false)
		retracted = true
	}
	if retracted {
		var decoded, maxNew int64
		n := 0
		for _, ri := range w.running {
			if ri != g.chunked {
				decoded += int64(s.reqs[ri].fl.generated)
				maxNew += int64(s.reqs[ri].out)
				n++
			}
		}
		if maxNew > 0 {
			g.base, g.decayed = min(1, float64(decoded+int64(sglangRetractSteps*n))/float64(maxNew)), 0
		}
	} else {
		s.sglangDecay(g, 1)
	}
	for _, ri := range w.running {
		if ri == g.chunked {
			continue
		}
		r := &s.reqs[ri]
		r.fl.blocks = w.pool.alloc(r.fl.blocks, int(s.blocksFor(r.fl.computed+1))-len(r.fl.blocks))
		w.sched = append(w.sched, sched{ri, 1})
	}
}

// retractVictim is the index in w.running of the request SGLang retracts first: the fewest
// output tokens, then the longest prompt, then the latest in the batch (its sort is stable and
// it pops from the end); -1 when at most one decoding request is left.
func (s *Sim) retractVictim(w *worker, g *sglangWorker) int {
	v, n := -1, 0
	for i, ri := range w.running {
		if ri == g.chunked {
			continue
		}
		n++
		if v < 0 {
			v = i
			continue
		}
		a, b := &s.reqs[ri], &s.reqs[w.running[v]]
		if a.fl.generated < b.fl.generated || a.fl.generated == b.fl.generated && a.isl >= b.isl {
			v = i
		}
	}
	if n <= 1 {
		return -1
	}
	return v
}

// sglangDecay lowers new_token_ratio for k decode batches.
func (s *Sim) sglangDecay(g *sglangWorker, k int) { g.decayed += int64(k) }

// sglangRatio is g's new_token_ratio: it falls by the decay step per decode batch, to the
// minimum.
func (s *Sim) sglangRatio(g *sglangWorker) float64 {
	return math.Max(g.base-float64(g.decayed)*s.sgp.decayStep, s.sgp.minRatio)
}

// sortLPM orders w's waiting queue longest cached prefix first (a stable sort), as
// SchedulePolicy.calc_priority does under LPM; a request whose cached prefix is at most 32
// tokens but whose first 32 tokens an earlier waiting request shares goes last, so that it
// can hit what that one computes (in-batch prefix caching).
func (s *Sim) sortLPM(w *worker) {
	q := s.lpmBuf[:0]
	clear(s.lpmSeen)
	k := int32(sglangInBatchTokens+s.blockSize-1) / s.blockSize // pages covering 32 tokens
	for i := range w.waiting.len() {
		ri := w.waiting.at(i)
		r := &s.reqs[ri]
		s.prefixHit(w, r, s.maxHit(r))
		e := lpmEntry{req: ri, prefix: int32(len(w.hit))}
		if e.prefix*s.blockSize <= sglangInBatchTokens && int32(len(r.fl.hashes)) >= k {
			h := subBlockHash(r.fl.hashes[k-1], (k-1)%w.pool.g)
			if _, dup := s.lpmSeen[h]; dup {
				e.deprioritized = true
			} else {
				s.lpmSeen[h] = struct{}{}
			}
		}
		q = append(q, e)
	}
	slices.SortStableFunc(q, func(a, b lpmEntry) int {
		switch {
		case a.deprioritized != b.deprioritized:
			if a.deprioritized {
				return 1
			}
			return -1
		case a.deprioritized:
			return 0
		}
		return int(b.prefix - a.prefix)
	})
	for i, e := range q {
		w.waiting.set(i, e.req)
	}
	s.lpmBuf = q
}

type lpmEntry struct {
	req, prefix   int32
	deprioritized bool
}
