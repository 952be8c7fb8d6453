package engine

import (
	"slices"

	"github.com/routerlab/routerlab/model"
)

// Where decode time goes and how even the load is (Config.LoadReport).
//
//   - Decode stall behind prefill: a step that carries prompt chunks as well as decodes lasts
//     longer than the same decodes alone; each decoding request in it waits that difference
//     (the step's time − the timing model's time of a decode-only step of the same decodes).
//   - Decode stall in queues: a request preempted after its first token waits in its worker's
//     queue until it is admitted again (its recompute then runs as a prefill).
//   - Per worker over time: decode sequences and KV blocks in use, integrated over every step
//     (count × step time), so their means over the run weigh each step by its length; the
//     fleet's imbalance is the busiest worker's mean over the workers' mean (1: even).
//
// Only mixed steps pay one extra price (the decode-only step); everything else is integer
// adds on events the simulation has anyway.

// LoadSummary is the report's decode-stall and load-balance section.
type LoadSummary struct {
	// MeanDecodeStallMS: per completed request, the time its decode tokens waited behind
	// prompt chunks in mixed steps, mean over requests.
	MeanDecodeStallMS float64 `json:"mean_decode_stall_ms"`
	// MeanQueueStallMS: per completed request, the time it waited in its worker's queue after a
	// preemption with tokens already generated, mean over requests.
	MeanQueueStallMS float64 `json:"mean_queue_stall_ms"`
	// MeanTPOTStallMS is the stall's part of TPOT: per request with ≥ 2 output tokens, (both
	// stalls) ÷ (output_length − 1), mean over those requests; TPOTStallShare = it ÷ mean TPOT.
	MeanTPOTStallMS float64 `json:"mean_tpot_stall_ms"`
	TPOTStallShare  float64 `json:"tpot_stall_share"`
	// MixedSteps is the share of steps that carried both prompt chunks and decodes.
	MixedSteps float64 `json:"mixed_step_share"`
	// DecodeImbalance and BlockImbalance: max ÷ mean over workers of their mean decode
	// sequences and mean KV blocks in use over the run.
	DecodeImbalance float64 `json:"decode_imbalance"`
	BlockImbalance  float64 `json:"kv_block_imbalance"`
	// RouterQueued is how many requests waited in the router queue (router_queue_threshold).
	RouterQueued int               `json:"router_queued,omitempty"`
	Workers      []WorkerLoadShare `json:"workers"`
}

// WorkerLoadShare is one worker's time-weighted load over the run.
type WorkerLoadShare struct {
	MeanDecodes  float64 `json:"mean_decode_sequences"`
	MeanKVBlocks float64 `json:"mean_kv_blocks"`
}

// stallAccounts is the simulation's running sums for LoadSummary.
type stallAccounts struct {
	on         bool
	decodeOnly model.Batch // scratch: a mixed step's decodes alone
	steps      int64
	mixed      int64
	// Per trace request (kept only when on): decode stall and queue stall (µs).
	stall, queueStall []int64
	preemptedAt       []int64 // when a decoding request was preempted (0: not waiting)
}

// mixedStep charges each decode of w's step starting at t (priced dur) with its stall.
func (s *Sim) mixedStep(w *worker, b *model.Batch, dur int64) {
	a := &s.stalls
	a.steps++
	if len(b.Prefill) == 0 || b.Decodes == 0 {
		return
	}
	a.mixed++
	a.decodeOnly.Decodes, a.decodeOnly.DecodeContextTokens = b.Decodes, b.DecodeContextTokens
	extra := dur - stepTime(w.spec.timer, &a.decodeOnly)
	if extra <= 0 {
		return
	}
	for _, sc := range w.sched {
		if r := &s.reqs[sc.req]; r.fl.generated > 0 && r.fl.tokens-r.fl.computed == 1 {
			a.stall[sc.req] += extra
		}
	}
}

// integrate adds a stretch of dur µs with decodes sequences and blocks KV blocks in use to
// w's integrals (negative dur takes a planned stretch's unrun part back).
func (w *worker) integrate(decodes, blocks int, dur int64) {
	w.decodeUS += int64(decodes) * dur
	w.blockUS += int64(blocks) * dur
}

// planStalls integrates a planned decode stretch of n requests: each step with the blocks in
// use while it runs (those of its tokens allocated), as the step-by-step loop would. A
// request takes a new block at the step whose token first overflows its blocks, then every
// block_size steps: one pass over the requests, one over the steps.
func (s *Sim) planStalls(w *worker, n int) {
	m := len(w.fastDur)
	s.stalls.steps += int64(m)
	w.fastBlocks = slices.Grow(w.fastBlocks[:0], m)[:m]
	clear(w.fastBlocks)
	for _, ri := range w.running {
		r := &s.reqs[ri]
		for j := int(int32(len(r.fl.blocks))*s.blockSize - r.fl.computed); j < m; j += int(s.blockSize) {
			if j >= 0 {
				w.fastBlocks[j]++
			}
		}
	}
	b := w.pool.inUse
	for j, d := range w.fastDur {
		b += w.fastBlocks[j]
		w.fastBlocks[j] = b
		w.integrate(n, b, d)
	}
}

// cutStalls takes back what planStalls integrated for the steps after step k of w's stretch,
// which now ends at step k.
func (s *Sim) cutStalls(w *worker, k int) {
	for j := k + 1; j < len(w.fastDur); j++ {
		w.integrate(len(w.running), w.fastBlocks[j], -w.fastDur[j])
	}
	s.stalls.steps -= int64(len(w.fastDur) - 1 - k)
}

// loadSummary summarises the accounts over a run of dur µs.
func (s *Sim) loadSummary(dur int64, meanTPOTMS float64) *LoadSummary {
	a := &s.stalls
	ls := &LoadSummary{RouterQueued: s.routerQueued, Workers: make([]WorkerLoadShare, len(s.workers))}
	var stall, queue int64
	var perTok float64
	n, nTok := 0, 0
	for i := range s.reqs {
		r := &s.reqs[i]
		if !r.finished {
			continue
		}
		n++
		stall += a.stall[i]
		queue += a.queueStall[i]
		if r.out >= 2 {
			perTok += float64(a.stall[i]+a.queueStall[i]) / float64(r.out-1)
			nTok++
		}
	}
	if n > 0 {
		ls.MeanDecodeStallMS = ms(float64(stall) / float64(n))
		ls.MeanQueueStallMS = ms(float64(queue) / float64(n))
	}
	if nTok > 0 {
		ls.MeanTPOTStallMS = ms(perTok / float64(nTok))
		if meanTPOTMS > 0 {
			ls.TPOTStallShare = round(perTok/float64(nTok)/1000/meanTPOTMS, 4)
		}
	}
	if a.steps > 0 {
		ls.MixedSteps = round(float64(a.mixed)/float64(a.steps), 4)
	}
	if dur > 0 {
		var maxD, sumD, maxB, sumB float64
		for i := range s.workers {
			w := &s.workers[i]
			d, b := float64(w.decodeUS)/float64(dur), float64(w.blockUS)/float64(dur)
			ls.Workers[i] = WorkerLoadShare{MeanDecodes: round(d, 3), MeanKVBlocks: round(b, 1)}
			maxD, sumD = max(maxD, d), sumD+d
			maxB, sumB = max(maxB, b), sumB+b
		}
		k := float64(len(s.workers))
		if sumD > 0 {
			ls.DecodeImbalance = round(maxD/(sumD/k), 4)
		}
		if sumB > 0 {
			ls.BlockImbalance = round(maxB/(sumB/k), 4)
		}
	}
	return ls
}
