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

// rankSteps is the lockstep state of a fleet whose workers have several attention ranks.
type rankSteps struct {
	ranks   int // engine workers (ranks) per worker; 0: no attention data parallelism
	timer   RanksStepTimer
	batches []model.Batch
	dur     int64 // the duration launch gives every rank of the step being launched
}

// setupRanks prepares the lockstep steps for c (called before the workers are built):
// the fleet's engine workers are its ranks, attention_dp per worker.
func (c *Config) setupRanks(timer model.StepTimer) (rankSteps, error) {
	d := c.Worker
	if d.AttentionDP <= 1 {
		return rankSteps{}, nil
	}
	rt, ok := timer.(RanksStepTimer)
	switch {
	case !ok || rt.Ranks() != d.AttentionDP:
		return rankSteps{}, fmt.Errorf("attention_dp %d: the step timer does not price %d lockstep ranks", d.AttentionDP, d.AttentionDP)
	case c.Disagg != nil:
		return rankSteps{}, fmt.Errorf("attention_dp %d: attention data parallelism is modelled in an aggregated fleet only (deployment_mode agg)", d.AttentionDP)
	case c.Fleet != nil:
		return rankSteps{}, fmt.Errorf("attention_dp %d: attention data parallelism is modelled in a static fleet only (no planner, scaling or failures)", d.AttentionDP)
	case c.KVTiers != nil:
		return rankSteps{}, fmt.Errorf("attention_dp %d: KV tiers are not modelled with attention data parallelism; set num_g2_blocks 0", d.AttentionDP)
	}
	return rankSteps{ranks: d.AttentionDP, timer: rt, batches: make([]model.Batch, d.AttentionDP)}, nil
}

// rankStep starts the lockstep step of w's worker at t, unless one of its ranks is still
// in the step before (the last rank to finish starts the next).
func (s *Sim) rankStep(w *worker, t int64) {
	rs := &s.ranks
	first := w.id - w.id%rs.ranks
	group := s.workers[first : first+rs.ranks]
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
		rs.dur = max(1, rs.timer.RanksStepUS(rs.batches))
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
