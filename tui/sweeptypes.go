package tui

import (
	"context"

	"github.com/routerlab/routerlab/sweep"
)

// SweepInfo describes the sweep the explorer can start: what it searches, what it
// optimises and how long.
type SweepInfo struct {
	Objective      string   // column title, e.g. "e2e ms"
	HigherIsBetter bool     // throughput targets
	Dims           []string // the knobs searched, e.g. router_mode, overlap_score_credit
	Rounds         int
	PerRound       int
	// Requests is how many requests each search evaluation replays: the explorer's own run
	// length. ValidationRequests is how many the validation replays.
	Requests, ValidationRequests int
	// Scope says what a sweep followed from elsewhere searches at (its settings, from its
	// ledger), where the explorer's own sweeps show their knobs.
	Scope string
}

// SweepEval is one finished evaluation of the sweep.
type SweepEval struct {
	Round     int // 1-based
	Candidate int // position within the round, 0-based: with Round, the evaluation's index
	Knobs     Knobs
	Value     float64 // the goal's target metric, the mean over its runs
	Runs      int     // simulation runs (seeds) averaged into Value; 0 counts as 1
	// Pools: a disaggregated fleet's pools and TTFT's parts, means over its runs; nil when
	// aggregated.
	Pools *DisaggMetrics
}

// ValidationRow is one full-trace run of the validation table (round_robin, default_kv, best).
type ValidationRow struct {
	Name    string
	Knobs   Knobs
	Metrics Metrics
}

// SweepEvent is one step of a running sweep: where it stands, and the evaluation that just
// finished (Eval) or the validation table (Validation), if any.
type SweepEvent struct {
	Progress   sweep.Progress
	Dir        string     // the run directory the sweep writes ("" in memory)
	Note       string     // a word from whoever follows the sweep, e.g. that its writer is gone
	Info       *SweepInfo // a sweep followed from elsewhere: what is now known of it
	Eval       *SweepEval
	Validation []ValidationRow
}

// Sweeper runs the smart sweep at the explorer's knobs (their concurrency and deployment;
// the router knobs are what it searches), calling emit for each event in order; it returns
// when the sweep and its validation are done, or ctx.Err() promptly after ctx is cancelled.
type Sweeper interface {
	Sweep(ctx context.Context, at Knobs, emit func(SweepEvent)) error
}
