package tui

import (
	"context"
	"math"
)

// Quantiles are the mean and tail of one latency, in milliseconds.
type Quantiles struct{ Mean, P50, P90, P99 float64 }

// Metrics are the figures of a finished replay, as the engine's summary reports them.
type Metrics struct {
	Completed   int // requests
	TTFT        Quantiles
	TPOT        Quantiles
	E2E         Quantiles
	OutputTokS  float64
	PrefixReuse float64 // prefix_cache_reused_ratio, 0..1
	// Rejected requests were refused: before routing, as vLLM answers HTTP 400 (a prompt
	// longer than context_length), or by the router when every worker was busy;
	// RejectedWhy says why, with the first one's place.
	Rejected    int
	RejectedWhy string
	// Where decode time goes (engine.LoadSummary): the decode stall's part of mean TPOT (ms)
	// and its share; the busiest worker's mean decode sequences and KV blocks ÷ the fleet's.
	StallMS, StallShare             float64
	DecodeImbalance, BlockImbalance float64
	// Disagg: a disaggregated run's pools and TTFT's parts; nil when aggregated.
	Disagg *DisaggMetrics
}

// Fleet is the per-worker state over simulated time, one column per snapshot window.
type Fleet struct {
	WindowMS      float64     // simulated time per column
	ActiveBlocks  [][]float64 // [worker][window] KV blocks held by running requests
	QueuedPrefill [][]float64 // [worker][window] prompt tokens still waiting for prefill
	HitRatio      [][]float64 // [worker][window] prefix-hit ratio of admissions; NaN: none
	Decodes       [][]float64 // [worker][window] requests decoding
	// TierHit is the fleet's share of admitted prompt tokens onboarded from the KV tiers (G2,
	// G3) per window; NaN: none admitted; nil without tiers.
	TierHit []float64
	// States is a changing fleet's [worker][window] worker state, the most telling of the
	// window: StateFailed, StateStarting, StateDraining, StateOff or 0 (serving); nil for a
	// static fleet.
	States [][]byte
	// Prefill is how many of the first rows are a disaggregated fleet's prefill pool (the
	// rest its decode pool); 0: aggregated.
	Prefill int
}

// Worker states in Fleet.States, in the order a window shows them: a failure over a start
// over a drain over off.
const (
	StateServing  byte = 0
	StateOff      byte = 1
	StateDraining byte = 2
	StateStarting byte = 3
	StateFailed   byte = 4
)

// Workers is the number of worker rows.
func (f Fleet) Workers() int { return len(f.ActiveBlocks) }

// Result is what one simulation of the explorer hands to the UI: values only.
type Result struct {
	Knobs Knobs
	Final bool // false: a progress frame (fleet so far, no metrics yet)
	// SimMS is the simulated time reached.
	SimMS   float64
	Metrics Metrics
	Fleet   Fleet
	// TTFTOverTime is the mean TTFT (ms) of requests that got their first token in each
	// window; NaN where none did.
	TTFTOverTime []float64
}

// Run is one request to the simulator.
type Run struct {
	Knobs Knobs
}

// Simulator runs the explorer's workload. Simulate may call partial with progress frames
// (Final false) before returning the final result; once ctx is cancelled it returns
// ctx.Err() promptly. It must be safe to call from several goroutines at once: a stale run
// may still be unwinding when the next starts.
type Simulator interface {
	Simulate(ctx context.Context, run Run, partial func(Result)) (Result, error)
}

// relChange is (v−base)/base, NaN when there is no usable baseline.
func relChange(v, base float64) float64 {
	if base == 0 || math.IsNaN(base) || math.IsNaN(v) {
		return math.NaN()
	}
	return (v - base) / base
}
