package sweep

// Spica's goals (ai-dynamo/dynamo aisimulate/src/aisimulate/sweeper/score.py at 9d05b44d and
// config.py at 253d508a: throughput_per_gpu, throughput_per_user, goodput, goodput_per_gpu,
// pareto), the p95 bounds, and the Pareto front of throughput per GPU against per-user
// throughput that a pareto goal answers with.

import (
	"math"
	"slices"

	"github.com/routerlab/routerlab/engine"
)

// perGPU divides a fleet's rate by its GPUs (a static fleet's GPUs are its time average,
// Spica's avg_gpu).
func perGPU(rate float64, m Metrics) float64 {
	if m.GPUs <= 0 {
		return 0
	}
	return rate / m.GPUs
}

// extended reports whether the goal reads the metrics only Spica's goals and the p95 and ITL
// bounds need; every other goal leaves them unmeasured, so its ledger keeps its bytes.
func (o Objective) extended() bool {
	switch o.Target {
	case "e2e_latency", "ttft", "tpot", "throughput":
		return o.MaxITLMS > 0 || o.MaxP95TTFTMS > 0 || o.MaxP95TPOTMS > 0 || o.MaxP95E2EMS > 0
	}
	return true
}

// prepare asks a run for what measure needs: its per-request records.
func (o Objective) prepare(cfg *engine.Config) {
	if o.extended() {
		cfg.RecordRequests = true
	}
}

// measure is metricsOf, plus, for an extended goal, the fleet's GPUs, the per-user and ITL
// means, goodput in output tokens and the p95s over the run's records.
func (o Objective) measure(cfg engine.Config, rep *engine.Report) Metrics {
	m := metricsOf(rep.Summary)
	if !o.extended() {
		return m
	}
	s := rep.Summary
	m.GPUs = float64(cfg.Workers * cfg.Worker.TP * cfg.Worker.AttentionDP)
	m.OutputTokSPerUser, m.ITLMS = s.MeanOutputTokPerUser, s.MeanITLMS
	recs := rep.Requests
	ttft, tpot, e2e := make([]float64, len(recs)), make([]float64, len(recs)), make([]float64, len(recs))
	var goodTok int
	for i, r := range recs {
		ttft[i], e2e[i] = r.TTFTMS, r.E2EMS
		if r.OutputLength >= 2 {
			tpot[i] = (r.E2EMS - r.TTFTMS) / float64(r.OutputLength-1)
		}
		if o.SLA.Set() && o.SLA.Good(ttft[i], tpot[i], e2e[i]) {
			goodTok += r.OutputLength
		}
	}
	if s.DurationMS > 0 {
		m.GoodputTokS = float64(goodTok) * 1000 / s.DurationMS
	}
	m.P95TTFTMS, m.P95TPOTMS, m.P95E2EMS = p95(ttft), p95(tpot), p95(e2e)
	return m
}

// p95 is the nearest-rank 95th percentile, as the engine's summary ranks its percentiles.
func p95(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[min(max(int(math.Ceil(0.95*float64(len(v))))-1, 0), len(v)-1)]
}

// FrontPoint is one evaluation on the Pareto front.
type FrontPoint struct {
	Key       string  `json:"key"`
	PerGPU    float64 `json:"throughput_per_gpu"`  // output tok/s per GPU
	PerUser   float64 `json:"throughput_per_user"` // mean per-user output tok/s
	GPUs      float64 `json:"gpus"`
	Violation float64 `json:"violation,omitempty"`
}

// ParetoFront is the non-dominated set of the feasible evaluations (the infeasible ones when
// none is feasible) over throughput per GPU and per-user throughput, both maximised, ordered
// by per-user throughput ascending (the x axis, as Spica returns it). Nil when the goal did not
// measure them.
func (s *Search) ParetoFront() []FrontPoint {
	if !s.Objective.extended() {
		return nil
	}
	var pts []FrontPoint
	for _, e := range s.Evaluations {
		pts = append(pts, FrontPoint{Key: e.Key, PerGPU: perGPU(e.Metrics.OutputTokS, e.Metrics), PerUser: e.Metrics.OutputTokSPerUser,
			GPUs: e.Metrics.GPUs, Violation: s.Objective.Violation(e.Metrics)})
	}
	feasible := slices.DeleteFunc(slices.Clone(pts), func(p FrontPoint) bool { return p.Violation > 0 })
	if len(feasible) > 0 {
		pts = feasible
	}
	var front []FrontPoint
	for i, p := range pts {
		dominated := false
		for j, q := range pts {
			if j != i && q.PerGPU >= p.PerGPU && q.PerUser >= p.PerUser && (q.PerGPU > p.PerGPU || q.PerUser > p.PerUser) {
				dominated = true
				break
			}
		}
		if !dominated && !slices.ContainsFunc(front, func(f FrontPoint) bool { return f.Key == p.Key }) {
			front = append(front, p)
		}
	}
	slices.SortStableFunc(front, func(a, b FrontPoint) int {
		switch {
		case a.PerUser < b.PerUser:
			return -1
		case a.PerUser > b.PerUser:
			return 1
		}
		return 0
	})
	return front
}
