package engine

import (
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
)

// The router's load accounting and admission beyond Dynamo's defaults (router.LoadConfig): the
// engine holds requests the router queues, counts the ones it rejects, publishes each worker's
// load after every step for the busy thresholds, tells the router every generated token for
// output-block tracking, and keeps the router's clock for the AIC prefill-load model.

// admitter is what the simulation needs of a router that admits; *router.Router has it.
type admitter interface {
	Release(d *router.Dispatch) bool
	Published(w int, kvBlocks int, prefillTokens int64)
	Generated(id int64, generated, outputLength int)
	SetNow(t int64)
	SetPrefillPricer(p router.PrefillPricer)
	QueueLen() int
}

// recheckUS is how often the router re-examines its queue when the AIC model decays the
// prefill load between events (router_queue_recheck_interval, config.rs @ 057096c: 100 ms).
const recheckUS = 100_000

// busyReason is the rejection of a request that finds every worker busy.
const busyReason = "every worker busy (busy thresholds: HTTP 503)"

// BusyRejectedShare is the share of a run's requests rejected because every worker was busy.
func BusyRejectedShare(s Summary) float64 {
	total := s.RequestsCompleted + s.RequestsRejected
	for _, rj := range s.Rejections {
		if rj.Reason == busyReason && total > 0 {
			return float64(rj.Requests) / float64(total)
		}
	}
	return 0
}

// setupAdmission wires s to its router's admission when the router's load config is not the
// default. Decode stretches are planned step by step when the router follows every token.
func (s *Sim) setupAdmission() {
	lc := s.cfg.Router.Load
	if lc.Default() {
		return
	}
	a, ok := s.rt.(admitter)
	if !ok {
		return
	}
	s.adm = a
	s.aic = !lc.PrefillLoadModel.None()
	s.publish = lc.ActiveDecodeBlocksThreshold != nil || lc.ActivePrefillTokensThreshold != nil || lc.ActivePrefillTokensThresholdFrac != nil
	s.outputs = lc.TrackOutputBlocks
	if s.outputs {
		s.stepwise = true
	}
	if s.aic {
		a.SetPrefillPricer(s.prefillTime)
	}
}

// prefillTime prices a prompt's prefill alone on a worker, in chunks of
// max_num_batched_tokens as the engine would run it (the AIC model's expected duration); the
// last chunk's first token costs a decode pass except on the mocker's prefill workers.
func (s *Sim) prefillTime(newTokens, cachedTokens int) int64 {
	budget := s.cfg.Worker.MaxNumBatchedTokens
	b := model.Batch{Prefill: make([]model.Chunk, 1)}
	var us int64
	for done := 0; done < newTokens; done += budget {
		n := min(budget, newTokens-done)
		b.Prefill[0] = model.Chunk{NewTokens: n, CachedTokens: cachedTokens + done}
		b.FirstTokens, b.FirstTokenContextTokens = 0, 0
		if done+n == newTokens && !s.specs[0].mockerPD {
			b.FirstTokens, b.FirstTokenContextTokens = 1, int64(cachedTokens+newTokens)
		}
		us += stepTime(s.timer, &b)
	}
	return us
}

// routed handles the router's answer for request i at t: a worker, Queued or Rejected.
func (s *Sim) routed(i, wi int, t int64) {
	switch wi {
	case router.Queued:
		s.routerQueued++
		if s.aic {
			// The decayed load may have freed a worker since the last event: the backlog,
			// this request in it, goes in order at once; the rest waits for the recheck.
			s.release(t)
			if !s.rechecking && s.adm.QueueLen() > 0 {
				s.rechecking = true
				s.heap.push(event{time: t + recheckUS, phase: phaseRouterRecheck})
			}
		}
	case router.Rejected:
		s.refuse(i, t)
	default:
		s.dispatch(i, wi, t)
	}
}

// refuse counts request i as rejected at t: it is answered at once, so a closed loop sends
// its next request.
func (s *Sim) refuse(i int, t int64) {
	r := &s.reqs[i]
	s.flights = append(s.flights, r.fl)
	r.fl = nil
	s.refused++
	if s.busyRejected == 0 {
		s.busyFirst = i
	}
	s.busyRejected++
	if s.sess != nil {
		s.turnDone(i, t)
	}
	if s.cfg.ReplayConcurrency > 0 && s.nextReq < len(s.reqs) {
		s.heap.push(event{time: t + s.streamEndUS, phase: phaseArrival, id: int32(s.nextReq)})
		s.nextReq++
	}
}

// release routes the requests the router queue lets go now that a worker's load fell.
func (s *Sim) release(t int64) {
	var d router.Dispatch
	for s.adm.Release(&d) {
		s.routed(int(d.ID), d.Worker, t)
	}
}

// recheck releases what the decayed load lets go at t, and keeps checking while requests wait.
func (s *Sim) recheck(t int64) {
	s.rechecking = false
	s.adm.SetNow(t)
	s.release(t)
	if s.adm.QueueLen() > 0 {
		s.rechecking = true
		s.heap.push(event{time: t + recheckUS, phase: phaseRouterRecheck})
	}
}

// publishLoad reports worker w's load to the router as its forward-pass metrics would: KV
// blocks in use and prompt tokens still to prefill (waiting and mid-prefill requests).
func (s *Sim) publishLoad(w *worker) {
	var pre int64
	for j := range w.waiting.len() {
		r := &s.reqs[w.waiting.at(j)]
		pre += int64(r.fl.tokens - r.fl.computed)
	}
	for _, ri := range w.running {
		if r := &s.reqs[ri]; r.fl.generated == 0 {
			pre += int64(r.fl.tokens - r.fl.computed)
		}
	}
	s.adm.Published(w.id, w.pool.inUse, pre)
}
