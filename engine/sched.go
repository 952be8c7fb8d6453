package engine

import (
	"fmt"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/specdec"
)

// Each worker forms its batches as the engine it runs does (docs/backend-schedulers.md):
// vLLM V1's scheduler (worker.go), SGLang's (sched_sglang.go) or TensorRT-LLM's
// (sched_trtllm.go). They share the event loop, the block pool with its prefix cache and KV
// events, the step's pricing and its end (tokens, first tokens, completions); they differ
// only in which requests a step runs, how many tokens each, and what happens when the pool
// runs short.

// schedKind is the scheduler a worker runs, from Deployment.Backend.
type schedKind uint8

const (
	schedVLLM schedKind = iota
	schedSGLang
	schedTRTLLM
)

// kindOf maps a deployment's backend to its scheduler ("" is vLLM).
func kindOf(b model.Backend) (schedKind, error) {
	switch b.OrDefault() {
	case model.BackendVLLM:
		return schedVLLM, nil
	case model.BackendSGLang:
		return schedSGLang, nil
	case model.BackendTRTLLM:
		return schedTRTLLM, nil
	}
	_, err := model.ParseBackend(string(b))
	return 0, err
}

// SchedulerConfig holds the engine arguments a backend's scheduler reads beyond the
// deployment's shared ones (max_num_batched_tokens, max_num_seqs, block_size). Its zero
// value is each engine's default, as the versions named in docs/backend-schedulers.md set it.
type SchedulerConfig struct {
	// SGLangPolicy is SGLang's --schedule-policy: SGLangFCFS ("" too, its default) or
	// SGLangLPM (longest cached prefix first).
	SGLangPolicy string `json:",omitempty"`
	// SGLangMaxPrefillTokens is SGLang's --max-prefill-tokens, the prompt tokens one prefill
	// batch takes beyond its first request; 0: 16384.
	SGLangMaxPrefillTokens int `json:",omitempty"`
	// SGLangConservativeness is SGLang's --schedule-conservativeness, the factor on the
	// share of its remaining output a running request is assumed to still need; 0: 1.
	SGLangConservativeness float64 `json:",omitempty"`
	// SGLangRecvInterval is SGLang's --scheduler-recv-interval: the scheduler takes new
	// requests off its socket only every this many decode batches (after a prefill batch or
	// while idle at once); 0 or 1: every batch, its default.
	SGLangRecvInterval int `json:",omitempty"`
	// TRTLLMChunkedPrefill is TensorRT-LLM's enable_chunked_prefill (off by default: a
	// prompt is computed in one step, and one longer than max_num_tokens is refused).
	TRTLLMChunkedPrefill bool `json:",omitempty"`
	// TRTLLMBatchWaitTimeoutIters and TRTLLMBatchWaitMaxTokensRatio are TensorRT-LLM's
	// batch_wait_timeout_iters and batch_wait_max_tokens_ratio (sched_trtllm.go): a step
	// that has generation requests holds its contexts back, up to that many steps, until
	// they and the generation tokens reach that share of max_num_tokens. 0 and 0: off,
	// its default.
	TRTLLMBatchWaitTimeoutIters   int     `json:",omitempty"`
	TRTLLMBatchWaitMaxTokensRatio float64 `json:",omitempty"`
	// TRTLLMADPBalance, TRTLLMADPTimeoutIters and TRTLLMADPBatchingWaitIters are
	// TensorRT-LLM's attention_dp_config enable_balance, timeout_iters and
	// batching_wait_iters (sched_trtllm_adp.go): with attention data parallelism a worker's
	// ranks hold their contexts until every rank has one to run. Off by default.
	TRTLLMADPBalance           bool `json:",omitempty"`
	TRTLLMADPTimeoutIters      int  `json:",omitempty"`
	TRTLLMADPBatchingWaitIters int  `json:",omitempty"`
}

// SGLang's schedule policies (--schedule-policy).
const (
	SGLangFCFS = "fcfs"
	SGLangLPM  = "lpm"
)

// check validates the arguments for kind.
func (c SchedulerConfig) check() error {
	switch {
	case c.SGLangPolicy != "" && c.SGLangPolicy != SGLangFCFS && c.SGLangPolicy != SGLangLPM:
		return fmt.Errorf("sglang schedule_policy: %q is not modelled (want %s or %s)", c.SGLangPolicy, SGLangFCFS, SGLangLPM)
	case c.SGLangMaxPrefillTokens < 0:
		return fmt.Errorf("sglang max_prefill_tokens: %d must be >= 0 (0: SGLang's default 16384)", c.SGLangMaxPrefillTokens)
	case c.SGLangConservativeness < 0 || c.SGLangConservativeness != c.SGLangConservativeness:
		return fmt.Errorf("sglang schedule_conservativeness: %v must be >= 0 (0: SGLang's default 1)", c.SGLangConservativeness)
	case c.SGLangRecvInterval < 0:
		return fmt.Errorf("sglang scheduler_recv_interval: %d must be >= 0 (0: SGLang's default 1)", c.SGLangRecvInterval)
	case c.TRTLLMBatchWaitTimeoutIters < 0:
		return fmt.Errorf("trtllm batch_wait_timeout_iters: %d must be >= 0 (0: TensorRT-LLM's default)", c.TRTLLMBatchWaitTimeoutIters)
	case c.TRTLLMADPTimeoutIters < 0 || c.TRTLLMADPBatchingWaitIters < 0:
		return fmt.Errorf("trtllm attention_dp_config: timeout_iters %d and batching_wait_iters %d must be >= 0", c.TRTLLMADPTimeoutIters, c.TRTLLMADPBatchingWaitIters)
	case !(c.TRTLLMBatchWaitMaxTokensRatio >= 0 && c.TRTLLMBatchWaitMaxTokensRatio <= 1):
		return fmt.Errorf("trtllm batch_wait_max_tokens_ratio: %v must be in [0, 1] (0: TensorRT-LLM's default)", c.TRTLLMBatchWaitMaxTokensRatio)
	}
	return nil
}

// setupScheduler resolves the workers' scheduler and its state (cfg is valid).
func (s *Sim) setupScheduler() {
	s.kind, _ = kindOf(s.cfg.Worker.Backend)
	switch s.kind {
	case schedSGLang:
		s.sgp = newSGLangParams(s.cfg.Scheduler)
		s.sg = make([]sglangWorker, len(s.workers))
		for i := range s.sg {
			s.sg[i] = sglangWorker{base: s.sgp.initRatio, fullAt: -1, chunked: -1}
		}
		s.lpmSeen = map[uint64]struct{}{}
	case schedTRTLLM:
		s.trtContrib = map[uint64]struct{}{}
		s.trtWaited = make([]int, len(s.workers))
		s.trtADP = make([]adpCounts, len(s.workers))
	}
	s.spec = nil
	if sc := s.cfg.Worker.Speculative; sc.On() {
		s.spec = specdec.NewSampler(sc, s.cfg.Seed)
	}
}

// fastPath reports whether the worker's engine may plan decode stretches ahead (fast.go): the
// next arrival cuts a stretch short, which SGLang's receive interval and TensorRT-LLM's batch
// waiting defer to a later step; and a stretch assumes one token a step, which MTP's accepted
// drafts break.
func (s *Sim) fastPath() bool {
	if s.spec != nil {
		return false
	}
	switch s.kind {
	case schedSGLang:
		return s.sgp.recvInterval <= 1
	case schedTRTLLM:
		return !s.cfg.Scheduler.trtBatchWaiting()
	}
	return true
}

// schedule fills w.sched with the step starting at t as w's engine would form it.
func (s *Sim) schedule(w *worker, t int64) {
	switch s.kind {
	case schedSGLang:
		s.scheduleSGLang(w, t)
	case schedTRTLLM:
		s.scheduleTRTLLM(w, t)
	default:
		s.scheduleVLLM(w, t)
	}
}

// prefixHit looks up r's prompt in w's prefix cache: it fills w.hit with the entries of the
// longest run of cached full blocks, at most limit of them, and returns how many of those
// no running request holds (a hit on them takes blocks the pool counts as available).
func (s *Sim) prefixHit(w *worker, r *request, limit int32) (hitFree int) {
	w.hit = w.hit[:0]
	if w.spec.noPrefix {
		return 0
	}
	G := w.pool.g
	s.sink += w.pool.groups.prefetch(r.fl.hashes[:limit], G)
	rec, sub := int32(-1), int32(0)
	var rs record
	for j := int32(0); j < limit; j++ {
		if sub == 0 {
			if rec = w.pool.group(r.fl.hashes[j]); rec < 0 {
				break
			}
			rs = w.pool.record(rec)
		}
		if *rs.mask()&(1<<sub) == 0 {
			break
		}
		if rs.entry(sub).refs == 0 {
			hitFree++
		}
		w.hit = append(w.hit, entryRef(rec, sub))
		if sub++; sub == G {
			sub = 0
		}
	}
	return hitFree
}

// maxHit is how many of r's prompt blocks a prefix hit may cover: full blocks only, and at
// least the last token left to compute (every engine recomputes it to sample from).
func (s *Sim) maxHit(r *request) int32 {
	return min(s.fullBlocks(r.fl.tokens-1), int32(len(r.fl.hashes)))
}

// admit starts waiting request ri (already taken off the queue) on w at t with the prefix
// hit in w.hit and n tokens to compute in this step, allocating the blocks they need.
func (s *Sim) admit(w *worker, ri int32, n int32, t int64) {
	r := &s.reqs[ri]
	hit := int32(len(w.hit))
	cachedTok := hit * s.blockSize
	if s.stalls.on && s.stalls.preemptedAt[ri] > 0 {
		s.stalls.queueStall[ri] += t - s.stalls.preemptedAt[ri]
		s.stalls.preemptedAt[ri] = 0
	}
	w.pool.touchAll(w.hit)
	r.fl.blocks = append(r.fl.blocks, w.hit...)
	r.fl.blocks = w.pool.alloc(r.fl.blocks, int(s.blocksFor(cachedTok+n)-hit))
	r.fl.computed = cachedTok
	r.fl.stored = hit
	if !r.fl.admitted {
		r.fl.admitted = true
		r.cached = cachedTok
		w.promptTokens += int64(r.isl)
		w.reusedTokens += int64(cachedTok)
		w.winPrompt += int64(r.isl)
		w.winCached += int64(cachedTok)
	}
	w.running = append(w.running, ri)
	w.sched = append(w.sched, sched{ri, n})
}

// preempt takes running request i of w off the engine at t: its blocks are freed (its cached
// prompt blocks stay in the prefix cache, so its recompute may hit them) and it waits again,
// at the queue's front (vLLM) or back (SGLang), to be recomputed from its prompt and the
// tokens generated so far. It returns the request.
func (s *Sim) preempt(w *worker, i int, t int64, front bool) int32 {
	ri := w.running[i]
	w.running = append(w.running[:i], w.running[i+1:]...)
	r := &s.reqs[ri]
	if s.stalls.on && r.fl.generated > 0 {
		s.stalls.preemptedAt[ri] = t
	}
	w.pool.freeAll(r.fl.blocks)
	r.fl.blocks = r.fl.blocks[:0]
	r.fl.computed = 0
	r.fl.stored = 0
	r.fl.loadUntil = 0
	r.preempted++
	w.preemptions++
	if front {
		w.waiting.pushFront(ri)
	} else {
		w.waiting.pushBack(ri)
	}
	return ri
}

// visibleBefore is the arrival bound of the waiting requests a step starting at t may take:
// with vLLM's async scheduling a step that continues running requests was scheduled when the
// previous one started (worker.go).
func (s *Sim) visibleBefore(w *worker, t int64) int64 {
	if s.cfg.Worker.AsyncScheduling && len(w.sched) > 0 {
		return w.lastStart
	}
	return t + 1
}
