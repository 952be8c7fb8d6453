package engine

import "fmt"

// TensorRT-LLM's scheduler (the PyTorch backend's capacity and micro-batch schedulers over
// the C++ batch manager: cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp,
// microBatchScheduler.cpp, kvCacheManager.cpp; revisions in docs/backend-schedulers.md).
//
// Capacity (GUARANTEED_NO_EVICT, the default policy): a running request keeps its place and
// has reserved the blocks its whole sequence can take, ceil((prompt + max_tokens) /
// tokens_per_block), less those it holds. Waiting requests are admitted in order while the
// free blocks (plain or reusable) cover their whole sequence on top of every reservation;
// the first that does not fit stops admission. Nothing is ever preempted. A waiting request
// whose first uncached prompt block another request scheduled in this step is computing is
// passed over for this step (beneficialToSkip), so it can reuse that block next step.
//
// Micro-batch: generation requests one token each, then context requests while their
// tokens fit max_num_tokens (the deployment's max_num_batched_tokens) and the batch
// max_batch_size (max_num_seqs). Without chunked prefill (the default) a context is computed
// whole, counted at its full prompt length, and a prompt longer than max_num_tokens is
// refused at the API (Config.Admit); with it, contexts take what budget the generation
// requests leave, first come first served, in whole blocks but for the last chunk.
//
// Batch waiting (batch_wait_timeout_iters, batch_wait_max_tokens_ratio; off by default): a
// step with generation requests runs without its contexts, up to batch_wait_timeout_iters
// steps in a row, while their whole prompts and the generation tokens come to less than
// batch_wait_max_tokens_ratio of max_num_tokens (tensorrt_llm/_torch/pyexecutor/
// py_executor.py, _schedule and _waiting_requests, in the 1.1 and 1.2 releases' form: the
// executor counts every scheduled token; docs/backend-schedulers.md). Not with attention data
// parallelism, whose ranks balance their contexts instead (sched_trtllm_adp.go).
//
// Block reuse (enable_block_reuse, on by default): a prompt's full blocks enter the reuse
// tree when its context completes (storeContextBlocks), and the KV events name blocks of
// tokens_per_block tokens (the engine's block size).

// TRTLLMTokensPerBlock is TensorRT-LLM's default KV block size (KvCacheConfig's
// tokens_per_block).
const TRTLLMTokensPerBlock = 32

// overStepReason words TensorRT-LLM's refusal of a prompt of isl tokens (0: any) that one
// step of maxNumTokens cannot hold without chunked prefill (the LLM API's argument check).
func overStepReason(isl, maxNumTokens int) string {
	if isl == 0 {
		return fmt.Sprintf("input_length exceeds max_num_tokens %d (TensorRT-LLM without chunked prefill)", maxNumTokens)
	}
	return fmt.Sprintf("input_length %d exceeds max_num_tokens %d (TensorRT-LLM without chunked prefill)", isl, maxNumTokens)
}

// trtRemaining is how many more blocks running request r can take to its completion
// (getRemainingBlocksToCompletion).
func (s *Sim) trtRemaining(r *request) int {
	return int(s.blocksFor(r.isl+r.out)) - len(r.fl.blocks)
}

// scheduleTRTLLM fills w.sched with TensorRT-LLM's next batch at t.
func (s *Sim) scheduleTRTLLM(w *worker, t int64) {
	p := s.trtGenerations(w)
	if !p.full && s.cfg.Scheduler.trtBatchWaiting() && !s.ranks.on && p.gens > 0 {
		if n, tokens := s.trtContexts(w, t, p, false); n > 0 && s.trtHold(w, tokens+p.gens) {
			return
		}
	}
	if !p.full {
		s.trtContexts(w, t, p, true)
	}
}

// trtPlan is a TensorRT-LLM step after its generation requests: what they left of the token
// budget and the free blocks, how many there are, and whether they filled the step.
type trtPlan struct {
	budget int32
	free   int
	gens   int
	full   bool
}

// trtGenerations schedules w's generation requests, one token each, as the first part of
// TensorRT-LLM's step (the capacity scheduler keeps them; the micro-batch scheduler takes
// them first).
func (s *Sim) trtGenerations(w *worker) trtPlan {
	d := &s.cfg.Worker
	p := trtPlan{budget: int32(d.MaxNumBatchedTokens), free: w.pool.available()}
	for _, ri := range w.running {
		p.free -= s.trtRemaining(&s.reqs[ri])
	}
	for _, ri := range w.running {
		r := &s.reqs[ri]
		if !decoding(r) {
			continue
		}
		if p.budget < 1+s.drafts() || p.gens >= d.MaxNumSeqs {
			p.full = true
			return p
		}
		r.fl.blocks = w.pool.alloc(r.fl.blocks, int(s.blocksFor(min(r.fl.computed+1+s.drafts(), r.isl+r.out)))-len(r.fl.blocks))
		w.sched = append(w.sched, sched{ri, 1})
		p.budget -= 1 + s.drafts()
		p.gens++
	}
	return p
}

// trtContexts takes the contexts of TensorRT-LLM's step at t after the generation requests
// of p, with the tokens and free blocks they left: a running context (chunked prefill)
// first, then waiting requests admitted in order. Without commit it only counts them: how
// many, and their tokens as batch waiting counts a context (its whole prompt). The capacity
// and micro-batch schedulers choose them before batch waiting or any allocation, so the
// count is the step's.
func (s *Sim) trtContexts(w *worker, t int64, p trtPlan, commit bool) (n, tokens int) {
	d := &s.cfg.Worker
	budget, free, batch := p.budget, p.free, p.gens
	chunking := s.cfg.Scheduler.TRTLLMChunkedPrefill
	clear(s.trtContrib)
	for _, ri := range w.running {
		r := &s.reqs[ri]
		if decoding(r) {
			continue
		}
		if r.fl.stored < int32(len(r.fl.hashes)) {
			s.trtContrib[s.blockID(w, r, r.fl.stored)] = struct{}{}
		}
		c := s.trtChunk(r.fl.tokens-r.fl.computed, budget)
		if c == 0 || batch >= d.MaxNumSeqs {
			return n, tokens
		}
		if commit {
			r.fl.blocks = w.pool.alloc(r.fl.blocks, int(s.blocksFor(r.fl.computed+c))-len(r.fl.blocks))
			w.sched = append(w.sched, sched{ri, c})
		}
		budget -= c
		batch++
		n, tokens = n+1, tokens+int(r.isl)
	}

	visible := s.visibleBefore(w, t)
	for i := 0; i < w.waiting.len() && batch < d.MaxNumSeqs; {
		ri := w.waiting.at(i)
		r := &s.reqs[ri]
		if r.fl.queued >= visible {
			i++
			continue
		}
		s.prefixHit(w, r, s.maxHit(r))
		hit := int32(len(w.hit))
		if j := s.firstNewBlock(w, r, hit); j >= 0 {
			id := s.blockID(w, r, j)
			if _, taken := s.trtContrib[id]; taken {
				i++ // another context computes it now: reuse it next step
				continue
			}
			s.trtContrib[id] = struct{}{}
		}
		need := int(s.blocksFor(r.isl + r.out))
		if need > free {
			return n, tokens
		}
		c, cost := r.fl.tokens-hit*s.blockSize, r.isl
		if chunking {
			if c = s.trtChunk(c, budget); c == 0 {
				return n, tokens
			}
			cost = c
		} else if cost > budget {
			return n, tokens
		}
		if commit {
			w.waiting.removeAt(i)
			s.admit(w, ri, c, t)
		} else {
			i++
		}
		free -= need
		budget -= cost
		batch++
		n, tokens = n+1, tokens+int(r.isl)
	}
	return n, tokens
}

// trtBatchWaiting reports whether TensorRT-LLM's batch waiting is set (PyExecutor's
// enable_batch_waiting).
func (c SchedulerConfig) trtBatchWaiting() bool {
	return c.TRTLLMBatchWaitTimeoutIters > 0 || c.TRTLLMBatchWaitMaxTokensRatio > 0
}

// trtHold is TensorRT-LLM's batch waiting (PyExecutor._waiting_requests) for a step of w
// whose generation requests and contexts come to tokens: it holds the contexts back, and
// counts the step, until it has held them batch_wait_timeout_iters steps or tokens reach
// batch_wait_max_tokens_ratio of max_num_tokens; then they run and the count restarts.
func (s *Sim) trtHold(w *worker, tokens int) bool {
	c := &s.cfg.Scheduler
	waited := &s.trtWaited[w.id]
	if *waited >= c.TRTLLMBatchWaitTimeoutIters || float64(tokens) >= c.TRTLLMBatchWaitMaxTokensRatio*float64(s.cfg.Worker.MaxNumBatchedTokens) {
		*waited = 0
		return false
	}
	*waited++
	return true
}

// decoding reports whether r is in its generation phase (one token to compute per step).
func decoding(r *request) bool { return r.fl.generated > 0 && r.fl.tokens-r.fl.computed == 1 }

// trtChunk is the tokens a context with rest tokens left computes out of budget under
// chunked prefill: all of them, or whole blocks of what fits.
func (s *Sim) trtChunk(rest, budget int32) int32 {
	if rest <= budget {
		return rest
	}
	return budget / s.blockSize * s.blockSize
}

// firstNewBlock is the first of r's full prompt blocks its prefix hit (hit blocks, capped so
// its last token is computed) leaves uncached in w's pool, or -1 when all are cached
// (findNewContextBlock).
func (s *Sim) firstNewBlock(w *worker, r *request, hit int32) int32 {
	for j := hit; j < int32(len(r.fl.hashes)); j++ {
		rec := w.pool.group(r.fl.hashes[j])
		if rec < 0 || *w.pool.mask(rec)&(1<<(j%w.pool.g)) == 0 {
			return j
		}
	}
	return -1
}

// blockID is the engine-block hash of r's prompt block j: it names the block's content and
// everything before it.
func (s *Sim) blockID(w *worker, r *request, j int32) uint64 {
	return subBlockHash(r.fl.hashes[j], j%w.pool.g)
}
