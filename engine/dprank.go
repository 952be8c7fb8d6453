package engine

import (
	"fmt"

	"github.com/routerlab/routerlab/model"
)

// Attention data parallelism (model/attentiondp.go): a worker of attention_dp ranks. Each
// rank is an engine worker of its own — its scheduler, waiting queue and KV block pool —
// and a target of its own for the router, as Dynamo's KV router indexes and routes to
// (worker, dp_rank) pairs (ai-dynamo/dynamo lib/kv-router/src/protocols.rs at cfa22544,
// WorkerWithDpRank) and its mocker builds one grouped engine with a scheduler handle and a KV
// block count per attention-DP rank behind one group barrier (lib/mocker/src/
// grouped_scheduler.rs at 0894f5c6, lib/mocker/src/engine.rs at 1740c2a0). The ranks of one
// worker step together, as vLLM's data-parallel engine cores do for a MoE model (an idle rank
// runs a dummy batch so the experts' collectives stay in step): a step starts when no rank of
// the worker is busy and any has work, every rank schedules its own batch, and all of them
// end at the same time, the step's duration priced on all the batches at once
// (model.Worker.RanksStepUS). The decode fast path is not taken: it plans one rank alone.

// RanksStepTimer prices a lockstep step of a worker's ranks; *model.Worker is one.
type RanksStepTimer interface {
	model.StepTimer
	Ranks() int
	RanksStepUS(batches []model.Batch) int64
}

// rankSteps is the lockstep state of a fleet whose workers have several attention ranks:
// the aggregated fleet's, or each pool's of a disaggregated one.
type rankSteps struct {
	on    bool        // some pool's workers have several ranks
	pools [2]rankPool // the fleet (a disaggregated fleet's prefill pool), the decode pool
	// decodeFirst is the decode pool's first engine worker (a disaggregated fleet's).
	decodeFirst int
	batches     []model.Batch
	dur         int64 // the duration launch gives every rank of the step being launched
}

// rankPool is one pool's lockstep ranks: ranks engine workers per worker (0 or 1: none).
type rankPool struct {
	ranks int
	timer RanksStepTimer
}

// setupRanks prepares the lockstep steps for c (called before the workers are built): a
// pool's engine workers are its ranks, attention_dp per worker. In a disaggregated fleet each
// pool has its own: Dynamo's prefill router and decode router both pick a (worker, dp_rank)
// pair (ai-dynamo/dynamo lib/llm/src/kv_router/prefill_router/execution.rs at 0243c51b:
// PrefillQueryOutcome::Routed carries the prefill worker's dp_rank, the decode choice is a
// WorkerWithDpRank), so every rank of either pool is a routing target of its own.
func (c *Config) setupRanks(timer model.StepTimer) (rankSteps, error) {
	if c.Disagg == nil {
		p, err := c.rankPool(c.Worker, timer)
		if err != nil || p.ranks <= 1 {
			return rankSteps{}, err
		}
		return rankSteps{on: true, pools: [2]rankPool{p}, batches: make([]model.Batch, p.ranks)}, nil
	}
	pt, ok := timer.(PoolTimers)
	if !ok {
		return rankSteps{}, nil // validateDisagg says what is missing
	}
	prefill, err := c.rankPool(c.Worker, pt.Prefill)
	if err != nil {
		return rankSteps{}, fmt.Errorf("prefill pool: %w", err)
	}
	decode, err := c.rankPool(c.Disagg.Decode, pt.Decode)
	if err != nil {
		return rankSteps{}, fmt.Errorf("decode pool: %w", err)
	}
	n := max(prefill.ranks, decode.ranks)
	if n <= 1 {
		return rankSteps{}, nil
	}
	switch {
	case c.Worker.Backend.OrDefault() == model.BackendSGLang:
		return rankSteps{}, fmt.Errorf("attention_dp %d: attention data parallelism in a disaggregated fleet is modelled for vLLM workers only (SGLang's pre-allocation per DP rank is not)", n)
	case c.Disagg.Conditional != nil:
		return rankSteps{}, fmt.Errorf("attention_dp %d: router_conditional_disagg is not modelled with attention data parallelism", n)
	}
	return rankSteps{on: true, pools: [2]rankPool{prefill, decode}, batches: make([]model.Batch, n)}, nil
}

// rankPool reads the lockstep ranks of workers of deployment d priced by timer.
func (c *Config) rankPool(d model.Deployment, timer model.StepTimer) (rankPool, error) {
	if d.AttentionDP <= 1 {
		return rankPool{}, nil
	}
	rt, ok := timer.(RanksStepTimer)
	switch {
	case !ok || rt.Ranks() != d.AttentionDP:
		return rankPool{}, fmt.Errorf("attention_dp %d: the step timer does not price %d lockstep ranks", d.AttentionDP, d.AttentionDP)
	case c.Fleet != nil:
		return rankPool{}, fmt.Errorf("attention_dp %d: attention data parallelism is modelled in a static fleet only (no planner, scaling or failures)", d.AttentionDP)
	case c.KVTiers != nil:
		return rankPool{}, fmt.Errorf("attention_dp %d: KV tiers are not modelled with attention data parallelism; set num_g2_blocks 0", d.AttentionDP)
	}
	return rankPool{ranks: d.AttentionDP, timer: rt}, nil
}

// applyRanks makes c's worker counts count engine workers (ranks): the router's targets and
// the engine's workers are the ranks. The caller's Disagg is left as it was.
func (c *Config) applyRanks(rs *rankSteps) {
	if p := rs.pools[0].ranks; p > 1 {
		c.Workers *= p
	}
	if c.Disagg == nil {
		return
	}
	rs.decodeFirst = c.Workers
	if d := rs.pools[1].ranks; d > 1 {
		dg := *c.Disagg
		dg.DecodeWorkers *= d
		c.Disagg = &dg
	}
}

// rankPoolOf is the lockstep pool of engine worker w and the first engine worker of that
// pool, or ranks <= 1 when w's pool has none.
func (rs *rankSteps) rankPoolOf(w int) (rankPool, int) {
	if rs.decodeFirst > 0 && w >= rs.decodeFirst {
		return rs.pools[1], rs.decodeFirst
	}
	return rs.pools[0], 0
}

// rankStep starts the lockstep step of w's worker at t, unless one of its ranks is still
// in the step before (the last rank to finish starts the next).
func (s *Sim) rankStep(w *worker, p rankPool, base int, t int64) {
	rs := &s.ranks
	first := w.id - (w.id-base)%p.ranks
	group := s.workers[first : first+p.ranks]
	for i := range group {
		if group[i].busy {
			return
		}
	}
	work := false
	for i := range group {
		group[i].sched = group[i].sched[:0]
	}
	if s.kind == schedTRTLLM && s.cfg.Scheduler.TRTLLMADPBalance {
		s.scheduleTRTLLMRanks(group, t) // the ranks decide on their contexts together
	} else {
		for i := range group {
			s.schedule(&group[i], t)
		}
	}
	for i := range group {
		work = work || len(group[i].sched) > 0
	}
	if work {
		for i := range group {
			s.fillBatch(&group[i])
			rs.batches[i] = group[i].batch
		}
		rs.dur = max(1, p.timer.RanksStepUS(rs.batches[:p.ranks]))
	}
	for i := range group {
		r := &group[i]
		s.launch(r, t)
		if work && len(r.sched) == 0 {
			// The dummy batch: the rank is busy until the step ends.
			r.lastStart = t
			s.queueStepEnd(r, t+rs.dur)
		}
	}
	rs.dur = 0
}
