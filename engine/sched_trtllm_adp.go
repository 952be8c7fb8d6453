package engine

// TensorRT-LLM's attention-DP balancing (attention_dp_config.enable_balance, with its
// timeout_iters and batching_wait_iters; PyExecutor._balance_adp_requests in
// tensorrt_llm/_torch/pyexecutor/py_executor.py, in the 1.1 and 1.2 releases' form). Each
// step the ranks of a worker share how many contexts and generation requests they scheduled,
// and all take the same decision: when every rank has a context and room for it, the
// contexts run (after batching_wait_iters steps more if every rank also has generation
// requests); otherwise no rank runs its contexts, and a counter of such steps lets them run
// when it reaches timeout_iters or as soon as some rank has no generation request. The
// counter runs on every step that is not all-context, so a lone context waits for the rest of
// the counter's cycle. TensorRT-LLM skips batch waiting (sched_trtllm.go) under attention DP.

// adpCounts are attention-DP balancing's counters of one worker: the steps not every rank
// had a context (adp_ctx_waiting_iters_count) and the steps waited to batch them
// (adp_ctx_batching_wait_iters_count).
type adpCounts struct{ waiting, batching int }

// scheduleTRTLLMRanks fills the batches of a lockstep step of one worker's attention ranks
// at t under attention-DP balancing: every rank takes its generation requests, and their
// contexts only when the balance lets them.
func (s *Sim) scheduleTRTLLMRanks(group []worker, t int64) {
	plans := s.trtRanks[:0]
	allFree, allCtx, allGen, work := true, true, true, false
	for i := range group {
		w := &group[i]
		p := s.trtGenerations(w)
		n := 0
		if !p.full {
			n, _ = s.trtContexts(w, t, p, false)
		}
		plans = append(plans, p)
		allFree = allFree && p.gens < s.cfg.Worker.MaxNumSeqs
		allCtx, allGen = allCtx && n > 0, allGen && p.gens > 0
		work = work || n > 0 || p.gens > 0
	}
	s.trtRanks = plans
	if !work || !s.adpRelease(&s.trtADP[group[0].id], allFree, allCtx, allGen) {
		return // no step, or the contexts held
	}
	for i := range group {
		if !plans[i].full {
			s.trtContexts(&group[i], t, plans[i], true)
		}
	}
}

// adpRelease is _balance_adp_requests' decision for a step whose ranks all have a free
// context slot (allFree), a context (allCtx), a generation request (allGen): whether the
// contexts run; c counts the steps.
func (s *Sim) adpRelease(c *adpCounts, allFree, allCtx, allGen bool) bool {
	sc := &s.cfg.Scheduler
	if allFree && allCtx {
		c.waiting = 0
		if allGen {
			if c.batching < sc.TRTLLMADPBatchingWaitIters {
				c.batching++
				return false
			}
			c.batching = 0
		}
		return true
	}
	if c.waiting++; c.waiting >= sc.TRTLLMADPTimeoutIters || !allGen {
		c.waiting = 0
		return true
	}
	return false
}
