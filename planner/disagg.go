package planner

import (
	"fmt"
	"math"
)

// A disaggregated fleet's planner: the prefill pool scaled on TTFT (its queued prompt
// tokens), the decode pool on ITL (its decode KV), each from its own regression, as
// PlannerStateMachine does in disagg mode: load_scaling.py _advance_load_disagg (0c6da1ec),
// throughput_scaling.py _throughput_disagg (0c9050c9), state_machine.py
// _apply_global_budget (0272cbdd). One departure: the state machine at 0c6da1ec takes a
// disaggregated load decision while a scale is still in progress, but Dynamo's disagg
// load loop (core/disagg.py, 0cf77149) applies each decision with
// set_component_replicas(blocking=True), waiting until the deployment is ready; so here,
// as for an aggregated pool, the load loop only observes while either pool's expected
// count differs from its ready one.

// NewDisagg builds the planner for cfg (defaulted and valid) and a disaggregated fleet of
// prefill engines of pcaps and decode engines of dcaps. pricePrefill and priceDecode, when
// not nil, price each pool's passes of the pre-deployment sweep that seeds its regression.
func NewDisagg(cfg Config, pcaps, dcaps Capabilities, pricePrefill, priceDecode Pricer) (*Planner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, c := range []Capabilities{pcaps, dcaps} {
		if c.GPUs < 1 || c.MaxKVTokens < 1 || c.MaxNumBatchedTokens < 1 {
			return nil, fmt.Errorf("planner: engine capabilities %+v incomplete", c)
		}
	}
	p := newPlanner(cfg, dcaps)
	p.pcaps, p.disagg = pcaps, true
	if !p.easy {
		p.preg = newPrefillRegression(cfg.MaxFPMSamples, cfg.MinObservations, cfg.FPMBucketSize)
		p.dreg = newDecodeRegression(cfg.MaxFPMSamples, cfg.MinObservations, cfg.FPMBucketSize)
		if pricePrefill != nil {
			for _, f := range prefillBootstrap(pcaps, pricePrefill) {
				p.preg.add(f)
			}
		}
		if priceDecode != nil {
			for _, f := range decodeBootstrap(dcaps, priceDecode) {
				p.dreg.add(f)
			}
		}
	}
	return p, nil
}

// prefillBootstrap are a prefill engine's sweep passes: one prompt of ⅛, ¼, … all of
// max_num_batched_tokens.
func prefillBootstrap(c Capabilities, price Pricer) []FPM {
	var out []FPM
	for i := 1; i <= 8; i++ {
		f := FPM{PrefillTokens: int64(c.MaxNumBatchedTokens) * int64(i) / 8, PrefillRequests: 1}
		f.WallS = price(f)
		out = append(out, f)
	}
	return out
}

// decodeBootstrap are a decode engine's sweep passes: 1, ¼, ½ and all of max_num_seqs
// requests at contexts of 512, 2,048 and 8,192 tokens, within the KV capacity — batch
// size and KV varied apart, so the two features are not collinear.
func decodeBootstrap(c Capabilities, price Pricer) []FPM {
	var out []FPM
	for _, n := range []int{1, max(1, c.MaxNumSeqs/4), max(1, c.MaxNumSeqs/2), max(1, c.MaxNumSeqs)} {
		for _, ctx := range []int64{512, 2048, 8192} {
			kv := min(int64(n)*ctx, int64(c.MaxKVTokens))
			f := FPM{DecodeRequests: n, DecodeKVTokens: kv}
			f.WallS = price(f)
			out = append(out, f)
		}
	}
	return out
}

// observeDisagg feeds each pool's passes to its regression (_observe_fpm).
func (p *Planner) observeDisagg(pf, df []FPM) {
	if p.easy {
		return
	}
	for _, f := range pf {
		p.preg.add(f)
	}
	for _, f := range df {
		p.dreg.add(f)
	}
}

// loadDisagg is _advance_load_disagg: each pool's decision, the throughput floors,
// min_endpoint and the GPU budget over both pools.
func (p *Planner) loadDisagg(pf, df []FPM) Decision {
	np, nd := p.pReady, p.ready
	switch {
	case !p.cfg.LoadScaling:
		return none("disabled")
	case len(pf) == 0 && len(df) == 0:
		return none("no_fpm_data")
	case p.pExpected != np || p.expected != nd:
		return none("scaling_in_progress")
	}
	fp, fd := np, nd
	var pWhy, dWhy string
	if len(pf) > 0 {
		if d, why := p.prefillDecision(pf, np); d >= 0 {
			fp = d
		} else {
			pWhy = why
		}
	}
	if len(df) > 0 {
		if d, why := p.decodeDecision(df, nd); d >= 0 {
			fd = d
		} else {
			dWhy = why
		}
	}
	origP, origD := fp, fd
	if p.cfg.ThroughputScaling {
		fp, fd = max(fp, p.lowerBoundP), max(fd, p.lowerBound)
	}
	floorP, floorD := fp, fd
	fp, fd = p.globalBudget(max(fp, p.cfg.MinEndpoint), max(fd, p.cfg.MinEndpoint))
	reason := func(final, orig, floor, cur int, why string) string {
		capped := floor > orig && orig < cur
		switch {
		case final > cur:
			return "scale_up"
		case capped:
			return "scale_down_capped_by_throughput"
		case final < cur:
			return "scale_down"
		case why != "":
			return why
		}
		return "no_change"
	}
	d := Decision{Replicas: -1, Prefill: -1,
		PrefillReason: reason(fp, origP, floorP, np, pWhy), Reason: reason(fd, origD, floorD, nd, dWhy)}
	if fp != np || fd != nd {
		d.Prefill, d.Replicas = fp, fd
	}
	return d
}

// prefillDecision is one prefill pool's load decision: the replicas wanted, or -1 and why
// not (_prefill_easy_decision, _prefill_load_decision).
func (p *Planner) prefillDecision(fpms []FPM, n int) (int, string) {
	if n == 0 || p.easy && p.pcaps.ContextLength <= 0 { // no context length: no easy threshold
		return -1, "insufficient_data"
	}
	if p.easy {
		latency := p.cfg.Target == TargetLatency
		up, down := prefillThroughputUp, prefillThroughputDown
		if latency {
			up, down = prefillLatencyUp, prefillLatencyDown
		}
		anyUp, allDown := false, true
		for _, f := range fpms {
			r := float64(f.QueuedPrefillTokens) / float64(p.pcaps.ContextLength)
			anyUp = anyUp || r >= up
			allDown = allDown && (r < down || latency && r <= down)
		}
		return p.easyStep(anyUp, allDown, n)
	}
	if !p.preg.sufficient() {
		return -1, "insufficient_data"
	}
	mt, hit := p.pcaps.MaxNumBatchedTokens, p.kvHit
	sens, cons := p.consolidation(n)
	canDown, refused := n > 1, false
	var budget, own float64
	if canDown {
		o, ok := p.preg.ttft(0, mt, hit)
		own, budget = o*1000, (p.cfg.TTFTMS-o*1000)*sens
		switch {
		case !ok:
			canDown = false
		case budget <= 0:
			canDown, refused = false, true
		}
	}
	var est []float64
	for _, f := range fpms {
		if e, ok := p.preg.ttft(f.QueuedPrefillTokens, mt, hit); ok {
			est = append(est, e*1000)
		}
		if canDown {
			post, ok := p.preg.ttft(int64(float64(f.QueuedPrefillTokens)*cons), mt, hit)
			switch {
			case !ok:
				canDown = false
			case post*1000-own >= budget:
				canDown, refused = false, true
			}
		}
	}
	return p.poolDecision(est, p.cfg.TTFTMS, n, canDown, refused)
}

// decodeDecision is one decode pool's load decision (_decode_easy_decision,
// _decode_load_decision).
func (p *Planner) decodeDecision(fpms []FPM, n int) (int, string) {
	if n == 0 {
		return -1, "insufficient_data"
	}
	maxKV := float64(p.caps.MaxKVTokens)
	if p.easy {
		up, down := p.easyThresholds()
		anyUp, allDown := false, true
		for _, f := range fpms {
			u := float64(f.DecodeKVTokens+f.QueuedDecodeKV) / maxKV
			anyUp = anyUp || u > up
			allDown = allDown && u < down
		}
		return p.easyStep(anyUp, allDown, n)
	}
	if !p.dreg.sufficient() {
		return -1, "insufficient_data"
	}
	sens, cons := p.consolidation(n)
	canDown, refused := n > 1, false
	var est []float64
	for _, f := range fpms {
		sched, queued := float64(f.DecodeKVTokens), float64(f.QueuedDecodeKV)
		if e, ok := p.dreg.itl(sched, queued); ok {
			est = append(est, e*1000)
		}
		if canDown {
			post := float64(int64((sched + queued) * cons))
			if post >= maxKV {
				canDown, refused = false, true
				continue
			}
			e, ok := p.dreg.itl(post, 0)
			switch {
			case !ok:
				canDown = false
			case e*1000 >= p.cfg.ITLMS*sens:
				canDown, refused = false, true
			}
		}
	}
	return p.poolDecision(est, p.cfg.ITLMS, n, canDown, refused)
}

// easyStep is an easy-mode pool decision: one more worker when any engine is over the
// scale-up threshold, one fewer when all are under the scale-down one.
func (p *Planner) easyStep(anyUp, allDown bool, n int) (int, string) {
	switch {
	case anyUp:
		return n + 1, ""
	case n > 1 && allDown:
		return max(n-1, p.cfg.MinEndpoint), ""
	}
	return -1, "no_change"
}

// poolDecision is _scale_decision with its diagnostic: up when every estimate is over the
// target, down when the consolidation check allowed it.
func (p *Planner) poolDecision(est []float64, target float64, n int, canDown, refused bool) (int, string) {
	if len(est) == 0 {
		return -1, "insufficient_data"
	}
	if d := p.scaleDecision(est, target, n, canDown); d >= 0 {
		return d, ""
	}
	if refused {
		return -1, "scale_down_refused_consolidation"
	}
	return -1, "no_change"
}

// Easy-mode thresholds on a prefill engine's queued prompt tokens ÷ context length
// (load_scaling.py: _PREFILL_THROUGHPUT_SCALE_UP/DOWN, _PREFILL_LATENCY_SCALE_UP/DOWN).
const (
	prefillThroughputUp, prefillThroughputDown = 1.0, 0.1
	prefillLatencyUp, prefillLatencyDown       = 0.1, 0.0
)

// throughputDisagg is _throughput_disagg: each pool's replicas for the predicted demand;
// with load scaling on they only set the load loop's lower bounds.
func (p *Planner) throughputDisagg(tr *Traffic) Decision {
	demand, isl, osl, hit, why := p.forecast(tr)
	if why != "" {
		return none(why)
	}
	prps, ttft := p.preg.bestRPS(isl*(1-clampHit(hit)), p.pcaps.MaxNumBatchedTokens)
	drps, _ := p.dreg.bestRPS(p.cfg.ITLMS, isl+osl/2, osl, p.caps.MaxKVTokens, p.caps.MaxNumSeqs)
	if prps <= 0 || drps <= 0 {
		return none("model_not_ready")
	}
	floor := 1 // the TTFT one prompt alone takes: more engines to share the queue
	if ttft > p.cfg.TTFTMS {
		floor = int(math.Ceil(ttft / p.cfg.TTFTMS))
	}
	np := max(int(math.Ceil(demand/prps)), floor, p.cfg.MinEndpoint)
	nd := max(int(math.Ceil(demand/drps)), p.cfg.MinEndpoint)
	if p.cfg.LoadScaling {
		p.lowerBoundP, p.lowerBound = np, nd
		return Decision{Replicas: -1, Prefill: -1, Reason: "set_lower_bound", PrefillReason: "set_lower_bound"}
	}
	np, nd = p.globalBudget(np, nd)
	return Decision{Replicas: nd, Prefill: np, Reason: "scale", PrefillReason: "scale"}
}

// globalBudget is _apply_global_budget: both pools within max_gpu_budget, the prefill pool
// scaled down in proportion and the decode pool given the rest, each at least
// min_endpoint (zero for both when the budget cannot hold that).
func (p *Planner) globalBudget(np, nd int) (int, int) {
	budget, pg, dg, me := p.cfg.MaxGPUBudget, p.pcaps.GPUs, p.caps.GPUs, p.cfg.MinEndpoint
	total := np*pg + nd*dg
	if total <= budget {
		return np, nd
	}
	if budget < me*pg+me*dg {
		return 0, 0
	}
	scale := float64(budget) / float64(total)
	np = max(me, min((budget-me*dg)/pg, int(math.Floor(float64(np)*scale))))
	return np, max(me, (budget-np*pg)/dg)
}
