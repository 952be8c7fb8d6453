package engine

import (
	"math"

	"github.com/routerlab/routerlab/router"
)

// SGLang's disaggregated serving (PD), as Dynamo runs it (ai-dynamo/dynamo
// docs/backends/sglang/sglang-disaggregation.md: the request is routed to a decode worker and
// a prefill worker and sent to both) and as SGLang's two servers handle it
// (sgl-project/sglang python/sglang/srt/disaggregation/decode.py and prefill.py at 278e503a).
// It differs from vLLM's handoff (disagg.go) in three ways:
//   - the decode worker pre-allocates first: the request waits in its PreallocQueue until
//     the pool can take its prompt plus num_reserved_decode_tokens, the allocatable tokens
//     being the free ones less max(reserved tokens × requests it holds (running and in
//     transfer), the most any running request could still need with every other one
//     retracted); only then does the prefill worker's bootstrap queue release the request
//     to its scheduler, so a full decode pool holds back prefills;
//   - the prefill worker's forward produces the first token, which travels with the KV
//     (the metadata buffer): the decode worker does not compute the prompt's last token;
//   - the decode worker takes a landed request into its running batch at its next
//     scheduling point (a PrebuiltExtendBatch, no forward pass), and streams the first token
//     then; a request of one output token finishes there.
// Not modelled: SGLang's decode-side radix cache (the decode server runs a chunk cache:
// nothing is cached there), its retraction to host memory (a retracted decode request is
// recomputed as on an aggregated worker), the pre-allocation slots beyond max_running_requests
// (running plus pre-allocated requests stay within max_num_seqs).

// sglangReservedDecodeTokens is num_reserved_decode_tokens (SGLANG_NUM_RESERVED_DECODE_TOKENS,
// default 512): decode room the pre-allocation keeps per request it holds.
const sglangReservedDecodeTokens = 512

// sglangPD is the SGLang flow's state beside the disaggregated fleet's.
type sglangPD struct {
	// Per request: the decode worker (decode-pool index) and its pre-allocated blocks,
	// held from the pre-allocation until the handoff.
	dst       []int32
	dstBlocks [][]int32
	// Per decode worker: requests whose KV landed while a step ran, for its next step.
	landed [][]int32
}

func newSGLangPD(requests, decodeWorkers int) *sglangPD {
	return &sglangPD{dst: make([]int32, requests), dstBlocks: make([][]int32, requests), landed: make([][]int32, decodeWorkers)}
}

// bootstrap routes request i, which the frontend sent to prefill worker r.worker, to a decode
// worker at t and queues it for that worker's pre-allocation; the prefill worker sees it
// once the pre-allocation is done.
func (s *Sim) bootstrap(i int, t int64) {
	d := s.dis
	r := &s.reqs[i]
	s.rreq = router.Request{ID: int64(i), InputLength: int(r.isl), BlockHashes: r.fl.hashes}
	dw := d.rt.Route(&s.rreq)
	d.pd.dst[i] = int32(dw)
	d.pending[dw].pushBack(int32(i))
	s.preallocate(&s.workers[d.first+dw], t)
}

// preallocate gives decode worker w's pending requests, in order, their prompt's blocks
// while SGLang's pre-allocation budget (pop_preallocated) allows, and releases each to its
// prefill worker.
func (s *Sim) preallocate(w *worker, t int64) {
	d := s.dis
	k := w.id - d.first
	q := &d.pending[k]
	if q.len() == 0 {
		return
	}
	if w.fast {
		s.settleFast(w, t, false) // the stretch planned its blocks from the free ones
	}
	// The running requests could be retracted to make room for one of them: the budget
	// keeps what the neediest would still take with all the others gone.
	var retractable, single int64
	for _, ri := range w.running {
		r := &s.reqs[ri]
		retractable += int64(r.isl + r.fl.generated)
	}
	for _, ri := range w.running {
		r := &s.reqs[ri]
		single = max(single, int64(r.isl+r.out)-retractable)
	}
	// Held: running, in transfer, and landed but not yet in the running batch (SGLang's
	// waiting queue).
	landed := len(d.pd.landed[k])
	held := int64(len(w.running) + w.receiving + landed)
	allocatable := int64(w.pool.available())*int64(s.blockSize) - max(sglangReservedDecodeTokens*held, single)
	for q.len() > 0 && len(w.running)+w.receiving+landed < w.spec.seqs {
		ri := q.front()
		r := &s.reqs[ri]
		need := int64(r.isl) + sglangReservedDecodeTokens
		blocks := int(s.blocksFor(r.isl))
		if max(need, int64(r.isl+r.out)-retractable) > allocatable || blocks > w.pool.available() {
			break
		}
		allocatable -= need
		q.popFront()
		var tbl []int32
		if n := len(d.spare); n > 0 {
			tbl, d.spare = d.spare[n-1][:0], d.spare[:n-1]
		}
		d.pd.dstBlocks[ri] = w.pool.alloc(tbl, blocks)
		if w.pool.removed.len() > 0 {
			s.emit(w.id, router.BlocksRemoved, &w.pool.removed)
			w.pool.removed.reset()
		}
		w.peakBlocks = max(w.peakBlocks, w.pool.inUse)
		w.receiving++
		d.reserved[ri], d.hit[ri] = t, 0
		s.toEngine(int(ri), t) // the prefill worker's bootstrap queue lets it go
	}
}

// handoffPD sends request ri's KV from prefill worker w, which has just produced its first
// token, to the decode worker that pre-allocated it.
func (s *Sim) handoffPD(w *worker, ri int32, t int64) {
	d := s.dis
	r := &s.reqs[ri]
	w.requests++
	s.rt.Finished(int64(ri))
	d.src[ri], d.srcWorker[ri] = r.fl.blocks, int32(w.id)
	r.fl.blocks, d.pd.dstBlocks[ri] = d.pd.dstBlocks[ri], nil
	d.prefilled[ri] = t
	k := int(d.pd.dst[ri])
	r.worker = int32(d.first + k)
	// The decode worker holds the prompt and the first token; its chunk cache registers
	// nothing, so every prompt block counts as stored.
	r.fl.stored = int32(len(r.fl.hashes))
	d.received[k] += int64(r.isl)
	bytes := float64(r.isl) * float64(d.cfg.KVBytesPerToken)
	d.transferBytes += bytes
	d.transfers++
	var us int64
	if d.cfg.TransferGBps > 0 {
		us = int64(math.Ceil(bytes / (d.cfg.TransferGBps * 1e3)))
	}
	s.heap.push(event{time: t + us, phase: phaseTransferDone, id: ri})
}

// landPD lands request ri's KV on its decode worker at t: the prefill worker frees its copy,
// and the decode worker takes the request at its next scheduling point.
func (s *Sim) landPD(ri int32, t int64) {
	d := s.dis
	r := &s.reqs[ri]
	s.releaseSource(ri, t)
	w := &s.workers[r.worker]
	k := w.id - d.first
	w.receiving--
	if w.fast {
		// Its stretch ends at the step in progress: the stretch planned its peak with these
		// blocks held, and the request joins or frees them now.
		s.settleFast(w, t, false)
	}
	if r.fl.generated == r.out { // max_new_tokens 1: finished at the transfer's end
		s.firstTokenPD(r, ri, t)
		s.complete(w, ri, t)
		s.preallocate(w, t)
		return
	}
	if w.busy {
		d.pd.landed[k] = append(d.pd.landed[k], ri)
		return
	}
	s.adoptPD(w, ri, t)
	s.wake(w, t)
}

// adoptLandedPD takes the requests that landed on decode worker w during the step ending at
// t into its running batch.
func (s *Sim) adoptLandedPD(w *worker, t int64) {
	k := w.id - s.dis.first
	for _, ri := range s.dis.pd.landed[k] {
		s.adoptPD(w, ri, t)
	}
	s.dis.pd.landed[k] = s.dis.pd.landed[k][:0]
}

// adoptPD runs landed request ri on decode worker w from t, streaming its first token then.
func (s *Sim) adoptPD(w *worker, ri int32, t int64) {
	s.firstTokenPD(&s.reqs[ri], ri, t)
	w.running = append(w.running, ri)
}

func (s *Sim) firstTokenPD(r *request, ri int32, t int64) {
	r.firstTok, r.fl.lastTok = t, t
	s.dis.rt.FirstToken(int64(ri))
}
