package planner

import (
	"fmt"
	"math"
)

// Capabilities are what the planner learns of an engine from its runtime config.
type Capabilities struct {
	MaxNumBatchedTokens int
	MaxKVTokens         int // num_gpu_blocks × block_size
	MaxNumSeqs          int
	ContextLength       int // max_model_len: a prefill pool's easy-mode queue threshold
	GPUs                int // per replica
}

// Traffic is the frontend's traffic over one throughput interval (TrafficObservation):
// requests started, their mean ISL and OSL, the prefix-cache hit rate, the window's length.
type Traffic struct {
	NumReq, ISL, OSL, KVHitRate, DurationS float64
}

// Tick is the next time the planner wants to run, and which loops run then.
type Tick struct {
	AtS              float64
	Load, Throughput bool
}

// Input is what the adapter hands the planner at a tick. Ready, Expected and FPMs are the
// aggregated pool's, or a disaggregated fleet's decode pool's; the Prefill fields its
// prefill pool's.
type Input struct {
	NowS     float64
	Ready    int   // workers serving
	Expected int   // workers asked for (ready + starting)
	FPMs     []FPM // one per ready engine, at a load tick
	Traffic  *Traffic

	PrefillReady, PrefillExpected int
	PrefillFPMs                   []FPM
}

// Decision is a tick's outcome: Replicas ≥ 0 when the planner scales the aggregated (or
// decode) pool, -1 when it does not, and Prefill the same for a disaggregated prefill pool
// (always -1 when aggregated); the Reasons are the loops' diagnostics.
type Decision struct {
	Replicas      int
	Reason        string
	Prefill       int
	PrefillReason string
}

// none is a decision that changes nothing, for reason.
func none(reason string) Decision { return Decision{Replicas: -1, Prefill: -1, Reason: reason} }

// Planner is PlannerStateMachine for an aggregated pool.
type Planner struct {
	cfg  Config
	caps Capabilities
	easy bool
	reg  *aggRegression

	numReq, isl, osl predictor
	kvHit            float64 // the last observed KV hit rate (sticky between throughput ticks)
	hasHit           bool

	ready, expected int
	lowerBound      int // throughput lower bound on the decode (agg) pool
	nextLoad        float64
	nextThroughput  float64

	// A disaggregated fleet's: the prefill pool's engines, models, counts and lower bound;
	// caps and ready/expected are then the decode pool's.
	disagg            bool
	pcaps             Capabilities
	preg              *prefillRegression
	dreg              *decodeRegression
	pReady, pExpected int
	lowerBoundP       int
}

// Pricer is a timing model's duration (seconds) of a forward pass scheduling what f
// schedules.
type Pricer func(f FPM) float64

// New builds the planner for cfg (defaulted and valid) and an aggregated pool of engines of
// caps. bootstrap, when not nil, prices the forward passes of the pre-deployment sweep that
// seeds the regression (pre_deployment_sweeping_mode rapid).
func New(cfg Config, caps Capabilities, bootstrap Pricer) (*Planner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if caps.GPUs < 1 || caps.MaxKVTokens < 1 || caps.MaxNumBatchedTokens < 1 {
		return nil, fmt.Errorf("planner: engine capabilities %+v incomplete", caps)
	}
	p := newPlanner(cfg, caps)
	if !p.easy {
		p.reg = newAggRegression(cfg.MaxFPMSamples, cfg.MinObservations, cfg.FPMBucketSize)
		if bootstrap != nil {
			for _, f := range bootstrapFPMs(caps, bootstrap) {
				p.reg.add(f)
			}
		}
	}
	return p, nil
}

// newPlanner is a planner's state before its first tick: no tick due, lower bounds of one
// worker, and (sla) the load predictors.
func newPlanner(cfg Config, caps Capabilities) *Planner {
	p := &Planner{cfg: cfg, caps: caps, easy: cfg.Target != TargetSLA, lowerBound: 1, lowerBoundP: 1,
		nextLoad: math.Inf(1), nextThroughput: math.Inf(1)}
	if !p.easy {
		p.numReq, p.isl, p.osl = newPredictor(cfg.Predictor), newPredictor(cfg.Predictor), newPredictor(cfg.Predictor)
	}
	return p
}

// bootstrapFPMs are the passes a rapid pre-deployment sweep measures: a grid of prefill
// chunks and decode KV loads across the engine's range, priced by the timing model.
func bootstrapFPMs(c Capabilities, price Pricer) []FPM {
	var out []FPM
	for i := range 4 {
		pre := int64(c.MaxNumBatchedTokens) * int64(i) / 3
		for j := range 4 {
			kv := int64(c.MaxKVTokens) * int64(j) / 4
			if pre == 0 && kv == 0 {
				continue
			}
			f := FPM{PrefillTokens: pre, DecodeKVTokens: kv}
			if pre > 0 {
				f.PrefillRequests = 1
			}
			if kv > 0 {
				f.DecodeRequests = max(1, int(kv/2048))
			}
			f.WallS = price(f)
			out = append(out, f)
		}
	}
	return out
}

// First is the first tick of a planner started at startS.
func (p *Planner) First(startS float64) Tick {
	p.nextLoad = startS + p.cfg.LoadEveryS
	if p.cfg.ThroughputScaling {
		p.nextThroughput = startS + p.cfg.ThroughputEveryS
	}
	return p.next()
}

// mergeS merges the two cadences' ticks when they fall this close (_MERGE_TOLERANCE_S).
const mergeS = 0.5

func (p *Planner) next() Tick {
	at := min(p.nextLoad, p.nextThroughput)
	return Tick{AtS: at, Load: p.nextLoad <= at+mergeS, Throughput: p.nextThroughput <= at+mergeS}
}

// OnTick runs the loops of t on in and returns the decision and the next tick.
func (p *Planner) OnTick(t Tick, in Input) (Decision, Tick) {
	p.ready, p.expected = in.Ready, in.Expected
	p.pReady, p.pExpected = in.PrefillReady, in.PrefillExpected
	d := none("")
	if t.Load {
		switch {
		case in.FPMs == nil:
		case p.disagg:
			p.observeDisagg(in.PrefillFPMs, in.FPMs)
			d = p.loadDisagg(in.PrefillFPMs, in.FPMs)
		default:
			if !p.easy {
				for _, f := range in.FPMs {
					p.reg.add(f)
				}
			}
			d = p.load(in.FPMs)
		}
		p.nextLoad = in.NowS + p.cfg.LoadEveryS
	}
	if t.Throughput {
		if in.Traffic != nil {
			if in.Traffic.NumReq > 0 || p.hasHit {
				p.kvHit, p.hasHit = in.Traffic.KVHitRate, true
			}
			p.numReq.add(in.Traffic.NumReq)
			p.isl.add(in.Traffic.ISL)
			p.osl.add(in.Traffic.OSL)
			throughput := p.throughput
			if p.disagg {
				throughput = p.throughputDisagg
			}
			if td := throughput(in.Traffic); (td.Replicas >= 0 || td.Prefill >= 0) && d.Replicas < 0 && d.Prefill < 0 {
				d = td
			} else if d.Reason == "" {
				d.Reason = td.Reason
			}
		}
		p.nextThroughput = in.NowS + p.cfg.ThroughputEveryS
	}
	return d, p.next()
}

// load is _advance_load_agg.
func (p *Planner) load(fpms []FPM) Decision {
	n := p.ready
	if !p.cfg.LoadScaling {
		return none("disabled")
	}
	if len(fpms) == 0 {
		return none("no_fpm_data")
	}
	if p.expected != n {
		return none("scaling_in_progress")
	}
	if p.easy {
		desired, reason := p.easyDecision(fpms, n)
		if desired < 0 {
			return none(reason)
		}
		orig := desired
		desired = max(desired, p.cfg.MinEndpoint)
		desired = p.budget(desired)
		return Decision{Replicas: desired, Prefill: -1, Reason: reasonOf(desired, orig, n)}
	}
	if !p.reg.sufficient() {
		return none("insufficient_data")
	}
	pre, pRefused := p.aggPrefill(fpms, n)
	dec, dRefused := p.aggDecode(fpms, n)
	var desired int
	switch {
	case pre >= 0 && pre > n:
		desired = pre
	case dec >= 0 && dec > n:
		desired = dec
	case pre < 0 && dec >= 0 && dec < n:
		desired = dec
	case pre >= 0 && pre < n && dec >= 0 && dec < n:
		desired = max(pre, dec)
	default:
		desired = n
	}
	orig := desired
	desired = max(desired, p.cfg.MinEndpoint)
	if p.cfg.ThroughputScaling {
		desired = max(desired, p.lowerBound)
	}
	desired = p.budget(desired)
	floorCapped := desired > orig && orig < n
	if desired == n {
		switch {
		case (pRefused || dRefused) && !floorCapped:
			return none("scale_down_refused_consolidation")
		case floorCapped:
			return none("scale_down_capped_by_throughput")
		}
		return none("no_change")
	}
	if desired < n && floorCapped {
		return Decision{Replicas: desired, Prefill: -1, Reason: "scale_down_capped_by_throughput"}
	}
	return Decision{Replicas: desired, Prefill: -1, Reason: reasonOf(desired, desired, n)}
}

func reasonOf(desired, orig, n int) string {
	switch {
	case desired < n && desired > orig:
		return "scale_down_capped_by_throughput"
	case desired < n:
		return "scale_down"
	case desired > n:
		return "scale_up"
	}
	return "no_change"
}

// Easy-mode thresholds on (scheduled + queued decode KV + queued prefill) / max KV tokens
// (load_scaling.py: _DECODE_THROUGHPUT_SCALE_UP/DOWN, _DECODE_LATENCY_SCALE_UP/DOWN).
const (
	throughputUp, throughputDown = 1.0, 0.6
	latencyUp, latencyDown       = 0.4, 0.1
)

// easyThresholds are the easy targets' KV-utilisation bounds for scaling up and down (the load
// target's are the user's KV rates).
func (p *Planner) easyThresholds() (up, down float64) {
	switch p.cfg.Target {
	case TargetLatency:
		return latencyUp, latencyDown
	case TargetLoad:
		return p.cfg.DecodeScaleUpKV / 100, p.cfg.DecodeScaleDownKV / 100
	}
	return throughputUp, throughputDown
}

// easyDecision is _agg_easy_decision.
func (p *Planner) easyDecision(fpms []FPM, n int) (int, string) {
	up, down := p.easyThresholds()
	anyUp, allDown := false, true
	for _, f := range fpms {
		u := float64(f.DecodeKVTokens+f.QueuedDecodeKV+f.QueuedPrefillTokens) / float64(p.caps.MaxKVTokens)
		anyUp = anyUp || u > up
		allDown = allDown && u < down
	}
	if anyUp {
		return n + 1, "scale_up"
	}
	if n > 1 && allDown {
		return max(n-1, p.cfg.MinEndpoint), "scale_down"
	}
	return -1, "no_change"
}

// scaleDecision is _scale_decision: up when every estimate is over the target, down when
// the consolidation check allowed it.
func (p *Planner) scaleDecision(est []float64, target float64, n int, canDown bool) int {
	if len(est) == 0 {
		return -1
	}
	all := true
	for _, e := range est {
		all = all && e > target
	}
	if all {
		return n + 1
	}
	if n > 1 && canDown {
		return max(n-1, p.cfg.MinEndpoint)
	}
	return -1
}

// consolidation is the scale-down sensitivity as a share, and the factor N ÷ (N − 1) by which
// the surviving engines' load grows when one of n leaves.
func (p *Planner) consolidation(n int) (sens, cons float64) {
	sens, cons = float64(p.cfg.DownSensitivity)/100, 1
	if n > 1 {
		cons = float64(n) / float64(n-1)
	}
	return sens, cons
}

// aggPrefill is _agg_prefill_scaling: TTFT estimates per engine, and whether the queue and
// decode KV of N engines absorbed by N−1 keep the queue-induced TTFT within sensitivity ×
// (SLA − own compute). A refused scale-down answers n, not "no signal".
func (p *Planner) aggPrefill(fpms []FPM, n int) (int, bool) {
	sens, cons := p.consolidation(n)
	var est []float64
	canDown, refused := n > 1, false
	mt := p.caps.MaxNumBatchedTokens
	for _, f := range fpms {
		if e, ok := p.reg.ttft(f.QueuedPrefillTokens, mt, float64(f.DecodeKVTokens), p.kvHit); ok {
			est = append(est, e*1000)
		}
		if canDown {
			postQ := int64(float64(f.QueuedPrefillTokens) * cons)
			postKV := float64(int64(float64(f.DecodeKVTokens) * cons))
			own, ok1 := p.reg.ttft(0, mt, postKV, p.kvHit)
			post, ok2 := p.reg.ttft(postQ, mt, postKV, p.kvHit)
			if !ok1 || !ok2 {
				canDown = false
			} else {
				budget := (p.cfg.TTFTMS - own*1000) * sens
				if budget <= 0 || post*1000-own*1000 >= budget {
					canDown, refused = false, true
				}
			}
		}
	}
	d := p.scaleDecision(est, p.cfg.TTFTMS, n, canDown)
	if d < 0 && refused {
		return n, true
	}
	return d, false
}

// aggDecode is _agg_decode_scaling: ITL estimates per engine; a scale-down must fit the
// survivors' KV cache and keep their ITL within sensitivity × the target.
func (p *Planner) aggDecode(fpms []FPM, n int) (int, bool) {
	sens, cons := p.consolidation(n)
	var est []float64
	canDown, refused := n > 1, false
	for _, f := range fpms {
		if e, ok := p.reg.itl(float64(f.DecodeKVTokens), float64(f.QueuedDecodeKV)); ok {
			est = append(est, e*1000)
		}
		if canDown {
			post := float64(int64(float64(f.DecodeKVTokens+f.QueuedDecodeKV+f.QueuedPrefillTokens) * cons))
			if post >= float64(p.caps.MaxKVTokens) {
				canDown, refused = false, true
				continue
			}
			e, ok := p.reg.itl(post, 0)
			switch {
			case !ok:
				canDown = false
			case e*1000 >= p.cfg.ITLMS*sens:
				canDown, refused = false, true
			}
		}
	}
	d := p.scaleDecision(est, p.cfg.ITLMS, n, canDown)
	if d < 0 && refused {
		return n, true
	}
	return d, false
}

// forecast is what _advance_throughput reads before either mode's sizing: the next
// interval's demand (requests/s), ISL and OSL from the predictors and the KV hit rate; why
// names what is missing.
func (p *Planner) forecast(tr *Traffic) (demand, isl, osl, hit float64, why string) {
	if !p.cfg.ThroughputScaling {
		return 0, 0, 0, 0, "disabled"
	}
	nr, isl, osl := p.numReq.next(), p.isl.next(), p.osl.next()
	if tr.DurationS <= 0 {
		return 0, 0, 0, 0, "no_traffic_data"
	}
	if p.hasHit {
		hit = p.kvHit
	}
	return nr / tr.DurationS, isl, osl, hit, ""
}

// throughput is _throughput_agg: the predicted demand over the best engine rate under both
// SLA targets; with load scaling on it only sets the load loop's lower bound.
func (p *Planner) throughput(tr *Traffic) Decision {
	demand, isl, osl, hit, why := p.forecast(tr)
	if why != "" {
		return none(why)
	}
	rps, _, _ := p.reg.bestRPS(isl, osl, p.caps.MaxNumBatchedTokens, p.cfg.TTFTMS, p.cfg.ITLMS, p.caps.MaxKVTokens, p.caps.MaxNumSeqs, hit)
	if rps <= 0 {
		return none("model_not_ready")
	}
	desired := max(int(math.Ceil(demand/rps)), p.cfg.MinEndpoint)
	if p.cfg.LoadScaling {
		p.lowerBound = desired
		return none("set_lower_bound")
	}
	return Decision{Replicas: p.budget(desired), Prefill: -1, Reason: "scale"}
}

// budget is _apply_single_budget: at least min_endpoint, and at most what max_gpu_budget
// holds.
func (p *Planner) budget(desired int) int {
	desired = max(desired, p.cfg.MinEndpoint)
	g := p.caps.GPUs
	if desired*g <= p.cfg.MaxGPUBudget {
		return desired
	}
	if p.cfg.MaxGPUBudget < p.cfg.MinEndpoint*g {
		return 0
	}
	return max(p.cfg.MinEndpoint, p.cfg.MaxGPUBudget/g)
}
