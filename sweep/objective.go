package sweep

import (
	"fmt"
	"math"
	"strings"

	"github.com/routerlab/routerlab/config"
)

// Metrics are the means, over an evaluation's seeds, of the summary numbers a goal can name.
type Metrics struct {
	E2EMS       float64 `json:"mean_e2e_latency_ms"`
	TTFTMS      float64 `json:"mean_ttft_ms"`
	TPOTMS      float64 `json:"mean_tpot_ms"`
	OutputTokS  float64 `json:"output_throughput_tok_s"`
	PrefixReuse float64 `json:"prefix_cache_reused_ratio"`
	// BusyRejected is the share of a run's requests rejected because every worker was busy
	// (the router's busy thresholds): a violation like an SLA bound's, so a point cannot look
	// fast by turning requests away.
	BusyRejected float64 `json:"busy_rejected_share,omitempty"`
}

func meanMetrics(ms []Metrics) Metrics {
	var s Metrics
	for _, m := range ms {
		s.E2EMS += m.E2EMS
		s.TTFTMS += m.TTFTMS
		s.TPOTMS += m.TPOTMS
		s.OutputTokS += m.OutputTokS
		s.PrefixReuse += m.PrefixReuse
		s.BusyRejected += m.BusyRejected
	}
	n := float64(len(ms))
	return Metrics{s.E2EMS / n, s.TTFTMS / n, s.TPOTMS / n, s.OutputTokS / n, s.PrefixReuse / n, s.BusyRejected / n}
}

// Objective turns metrics into a ranking: the goal's target (a mean latency to minimise, or
// output throughput to maximise), optionally subject to SLA bounds on mean latencies.
type Objective struct {
	Target    string // e2e_latency | ttft | tpot | throughput
	MaxTTFTMS float64
	MaxTPOTMS float64
	MaxE2EMS  float64
}

// NewObjective reads a file's goal.
func NewObjective(g config.Goal) (Objective, error) {
	switch g.Target {
	case "e2e_latency", "ttft", "tpot", "throughput":
	default:
		return Objective{}, fmt.Errorf("sweep: goal.target %q (want e2e_latency, ttft, tpot or throughput)", g.Target)
	}
	return Objective{Target: g.Target, MaxTTFTMS: g.MaxTTFTMS, MaxTPOTMS: g.MaxTPOTMS, MaxE2EMS: g.MaxE2EMS}, nil
}

// Maximise reports whether larger target values are better.
func (o Objective) Maximise() bool { return o.Target == "throughput" }

// Value is the target metric in its own units.
func (o Objective) Value(m Metrics) float64 {
	switch o.Target {
	case "ttft":
		return m.TTFTMS
	case "tpot":
		return m.TPOTMS
	case "throughput":
		return m.OutputTokS
	}
	return m.E2EMS
}

// Violation is the summed relative excess over the SLA bounds, plus the share of requests
// rejected as every worker was busy; 0 when feasible.
func (o Objective) Violation(m Metrics) float64 {
	v := m.BusyRejected
	for _, b := range [...]struct{ got, max float64 }{{m.TTFTMS, o.MaxTTFTMS}, {m.TPOTMS, o.MaxTPOTMS}, {m.E2EMS, o.MaxE2EMS}} {
		if b.max > 0 && b.got > b.max {
			v += (b.got - b.max) / b.max
		}
	}
	return v
}

// Better reports whether a ranks before b: feasible before infeasible, feasible ones by the
// target, infeasible ones by smaller violation.
func (o Objective) Better(a, b Metrics) bool {
	va, vb := o.Violation(a), o.Violation(b)
	if va > 0 || vb > 0 {
		if va != vb {
			return va < vb
		}
	}
	if o.Maximise() {
		return o.Value(a) > o.Value(b)
	}
	return o.Value(a) < o.Value(b)
}

// violationPenalty converts relative SLA violation into the units of the score: a 1 %
// violation costs as much as a 10 % worse target.
const violationPenalty = 10

// Score is the scalar the Gaussian process minimises: the signed target, made worse in
// proportion to the SLA violation so that infeasible regions look bad to the model.
func (o Objective) Score(m Metrics) float64 {
	s := o.Value(m)
	if o.Maximise() {
		s = -s
	}
	return s + math.Abs(s)*violationPenalty*o.Violation(m)
}

// String describes the goal, e.g. "maximise output throughput s.t. mean TTFT ≤ 500 ms".
func (o Objective) String() string {
	s := "minimise mean " + map[string]string{"e2e_latency": "e2e latency", "ttft": "TTFT", "tpot": "TPOT"}[o.Target]
	if o.Maximise() {
		s = "maximise output throughput"
	}
	var c []string
	for _, b := range [...]struct {
		name string
		max  float64
	}{{"TTFT", o.MaxTTFTMS}, {"TPOT", o.MaxTPOTMS}, {"e2e latency", o.MaxE2EMS}} {
		if b.max > 0 {
			c = append(c, fmt.Sprintf("mean %s ≤ %g ms", b.name, b.max))
		}
	}
	if len(c) > 0 {
		s += " s.t. " + strings.Join(c, ", ")
	}
	return s
}

// Unit is the target's unit.
func (o Objective) Unit() string {
	if o.Maximise() {
		return "tok/s"
	}
	return "ms"
}
