package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
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

	// Spica's goals and the percentile bounds (goals.go) read these; they are measured only
	// when the goal needs them, so the ledger of any other goal keeps its bytes.
	GPUs              float64 `json:"gpus,omitempty"`                       // the fleet's GPUs
	OutputTokSPerUser float64 `json:"mean_output_tok_s_per_user,omitempty"` // engine.Summary.MeanOutputTokPerUser
	GoodputTokS       float64 `json:"goodput_output_tok_s,omitempty"`       // output tokens of requests meeting the SLO ÷ duration
	ITLMS             float64 `json:"mean_itl_ms,omitempty"`
	P95TTFTMS         float64 `json:"p95_ttft_ms,omitempty"`
	P95TPOTMS         float64 `json:"p95_tpot_ms,omitempty"`
	P95E2EMS          float64 `json:"p95_e2e_latency_ms,omitempty"`
}

// fields are m's numbers, every one a mean over seeds.
func (m *Metrics) fields() []*float64 {
	return []*float64{&m.E2EMS, &m.TTFTMS, &m.TPOTMS, &m.OutputTokS, &m.PrefixReuse, &m.BusyRejected,
		&m.GPUs, &m.OutputTokSPerUser, &m.GoodputTokS, &m.ITLMS, &m.P95TTFTMS, &m.P95TPOTMS, &m.P95E2EMS}
}

func meanMetrics(ms []Metrics) Metrics {
	var s Metrics
	sum := s.fields()
	for i := range ms {
		for j, x := range ms[i].fields() {
			*sum[j] += *x
		}
	}
	for _, x := range sum {
		*x /= float64(len(ms))
	}
	return s
}

// Objective turns metrics into a ranking: the goal's target (a mean latency to minimise, or
// a throughput to maximise), optionally subject to SLA bounds on mean and p95 latencies.
type Objective struct {
	Target    string // e2e_latency | ttft | tpot | throughput | throughput_per_gpu | throughput_per_user | goodput | goodput_per_gpu | pareto
	MaxTTFTMS float64
	MaxTPOTMS float64
	MaxE2EMS  float64
	MaxITLMS  float64
	// p95 bounds over requests
	MaxP95TTFTMS, MaxP95TPOTMS, MaxP95E2EMS float64
	// SLA is goal.sla, or config.DefaultSLO without one: the goodput targets count the output
	// tokens of requests meeting it.
	SLA engine.SLO
}

// targets are the goal targets, in the key table's order.
var targets = []string{"e2e_latency", "ttft", "tpot", "throughput", "throughput_per_gpu", "throughput_per_user", "goodput", "goodput_per_gpu", "pareto"}

// NewObjective reads a file's goal.
func NewObjective(g config.Goal) (Objective, error) {
	if !slices.Contains(targets, g.Target) {
		return Objective{}, fmt.Errorf("sweep: goal.target %q (want one of %s)", g.Target, strings.Join(targets, ", "))
	}
	return Objective{Target: g.Target, MaxTTFTMS: g.MaxTTFTMS, MaxTPOTMS: g.MaxTPOTMS, MaxE2EMS: g.MaxE2EMS, MaxITLMS: g.MaxITLMS,
		MaxP95TTFTMS: g.MaxP95TTFTMS, MaxP95TPOTMS: g.MaxP95TPOTMS, MaxP95E2EMS: g.MaxP95E2EMS, SLA: g.ReportSLO()}, nil
}

// Maximise reports whether larger target values are better.
func (o Objective) Maximise() bool {
	switch o.Target {
	case "e2e_latency", "ttft", "tpot":
		return false
	}
	return true
}

// Value is the target metric in its own units; for pareto the geometric mean of its two
// objectives, the scalar the search climbs (goals.go).
func (o Objective) Value(m Metrics) float64 {
	switch o.Target {
	case "ttft":
		return m.TTFTMS
	case "tpot":
		return m.TPOTMS
	case "throughput":
		return m.OutputTokS
	case "throughput_per_gpu":
		return perGPU(m.OutputTokS, m)
	case "throughput_per_user":
		return m.OutputTokSPerUser
	case "goodput":
		return m.GoodputTokS
	case "goodput_per_gpu":
		return perGPU(m.GoodputTokS, m)
	case "pareto":
		return math.Sqrt(perGPU(m.OutputTokS, m) * m.OutputTokSPerUser)
	}
	return m.E2EMS
}

// Violation is the summed relative excess over the SLA bounds, plus the share of requests
// rejected as every worker was busy; 0 when feasible.
func (o Objective) Violation(m Metrics) float64 {
	v := m.BusyRejected
	for _, b := range [...]struct{ got, max float64 }{{m.TTFTMS, o.MaxTTFTMS}, {m.TPOTMS, o.MaxTPOTMS}, {m.E2EMS, o.MaxE2EMS},
		{m.ITLMS, o.MaxITLMS}, {m.P95TTFTMS, o.MaxP95TTFTMS}, {m.P95TPOTMS, o.MaxP95TPOTMS}, {m.P95E2EMS, o.MaxP95E2EMS}} {
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

// targetWords names each target's figure.
var targetWords = map[string]string{
	"e2e_latency": "mean e2e latency", "ttft": "mean TTFT", "tpot": "mean TPOT", "throughput": "output throughput",
	"throughput_per_gpu": "output throughput per GPU", "throughput_per_user": "mean per-user output throughput",
	"goodput": "goodput (output tok/s of requests meeting the SLO)", "goodput_per_gpu": "goodput per GPU",
	"pareto": "geometric mean of throughput per GPU and per user (the Pareto front is the answer)",
}

// String describes the goal, e.g. "maximise output throughput s.t. mean TTFT ≤ 500 ms".
func (o Objective) String() string {
	s := "minimise " + targetWords[o.Target]
	if o.Maximise() {
		s = "maximise " + targetWords[o.Target]
	}
	var c []string
	for _, b := range [...]struct {
		name string
		max  float64
	}{{"mean TTFT", o.MaxTTFTMS}, {"mean TPOT", o.MaxTPOTMS}, {"mean e2e latency", o.MaxE2EMS}, {"mean ITL", o.MaxITLMS},
		{"p95 TTFT", o.MaxP95TTFTMS}, {"p95 TPOT", o.MaxP95TPOTMS}, {"p95 e2e latency", o.MaxP95E2EMS}} {
		if b.max > 0 {
			c = append(c, fmt.Sprintf("%s ≤ %g ms", b.name, b.max))
		}
	}
	if len(c) > 0 {
		s += " s.t. " + strings.Join(c, ", ")
	}
	return s
}

// Unit is the target's unit.
func (o Objective) Unit() string {
	switch o.Target {
	case "e2e_latency", "ttft", "tpot":
		return "ms"
	case "throughput_per_gpu", "goodput_per_gpu":
		return "tok/s/GPU"
	case "throughput_per_user":
		return "tok/s/user"
	case "pareto":
		return "(tok/s/GPU · tok/s/user)^½"
	}
	return "tok/s"
}
