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
	d := &s.cfg.Worker
	chunking := s.cfg.Scheduler.TRTLLMChunkedPrefill
	budget := int32(d.MaxNumBatchedTokens)
	free := w.pool.available()
	for _, ri := range w.running {
		free -= s.trtRemaining(&s.reqs[ri])
	}
	clear(s.trtContrib)

	// Generation requests, one token each; a running context (chunked prefill) after them.
	batch := 0
	for _, ri := range w.running {
		r := &s.reqs[ri]
		if !decoding(r) {
			continue
		}
		if budget < 1 || batch >= d.MaxNumSeqs {
			return
		}
		r.fl.blocks = w.pool.alloc(r.fl.blocks, int(s.blocksFor(r.fl.computed+1))-len(r.fl.blocks))
		w.sched = append(w.sched, sched{ri, 1})
		budget--
		batch++
	}
	for _, ri := range w.running {
		r := &s.reqs[ri]
		if decoding(r) {
			continue
		}
		if r.fl.stored < int32(len(r.fl.hashes)) {
			s.trtContrib[s.blockID(w, r, r.fl.stored)] = struct{}{}
		}
		n := s.trtChunk(r.fl.tokens-r.fl.computed, budget)
		if n == 0 || batch >= d.MaxNumSeqs {
			return
		}
		r.fl.blocks = w.pool.alloc(r.fl.blocks, int(s.blocksFor(r.fl.computed+n))-len(r.fl.blocks))
		w.sched = append(w.sched, sched{ri, n})
		budget -= n
		batch++
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
			return
		}
		n, cost := r.fl.tokens-hit*s.blockSize, r.isl
		if chunking {
			if n = s.trtChunk(n, budget); n == 0 {
				return
			}
			cost = n
		} else if cost > budget {
			return
		}
		w.waiting.removeAt(i)
		s.admit(w, ri, n, t)
		free -= need
		budget -= cost
		batch++
	}
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
