package tui

import "context"

// SweepInfo describes the sweep the explorer can start: what it optimises and how long.
type SweepInfo struct {
	Objective      string // column title, e.g. "e2e ms"
	HigherIsBetter bool   // throughput targets
	Rounds         int
	PerRound       int
}

// SweepEval is one finished evaluation of the sweep.
type SweepEval struct {
	Round int // 1-based
	Knobs Knobs
	Value float64 // the goal's target metric, the mean over its runs
	Runs  int     // simulation runs (seeds) averaged into Value; 0 counts as 1
}

// ValidationRow is one full-trace run of the validation table (round_robin, default_kv, best).
type ValidationRow struct {
	Name    string
	Knobs   Knobs
	Metrics Metrics
}

// SweepEvent is one step of a running sweep: Eval is set for SweepEvaluated, Validation for
// SweepValidated.
type SweepEvent struct {
	Kind       SweepEventKind
	Eval       SweepEval
	Validation []ValidationRow
}

// SweepEventKind says which field of a SweepEvent is set.
type SweepEventKind int

// Kinds of sweep events.
const (
	SweepEvaluated  SweepEventKind = iota
	SweepValidating                // the search is over; validation runs now
	SweepValidated
)

// Sweeper runs the smart sweep, calling emit for each event in order; it returns when the
// sweep and its validation are done, or ctx.Err() promptly after ctx is cancelled.
type Sweeper interface {
	Sweep(ctx context.Context, emit func(SweepEvent)) error
}
