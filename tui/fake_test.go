package tui

import (
	"context"
	"math"
	"time"

	"github.com/routerlab/routerlab/themes"
)

// fakeSim is a deterministic stand-in for the engine: its figures depend on the knobs the
// way the real fleet's do (round robin loses prefix reuse and TTFT), so tests can see the
// panes change.
type fakeSim struct {
	workers, windows int
	// block, when set, holds every run until it is closed or ctx is cancelled.
	block chan struct{}
}

func (f fakeSim) Simulate(ctx context.Context, run Run, partial func(Result)) (Result, error) {
	k := run.Knobs
	reuse := 0.62
	ttft := 180.0
	switch k.Mode {
	case "round_robin":
		reuse, ttft = 0.21, 410
	case "random":
		reuse, ttft = 0.19, 450
	case "least_loaded":
		reuse, ttft = 0.24, 380
	}
	if k.KVKnobsApply() {
		ttft *= 1 + 0.05*math.Abs(k.Scale-1) - 0.1*k.Credit + 0.02*k.Temperature
		reuse *= 0.7 + 0.3*k.Credit
	}
	ttft *= float64(max(k.Concurrency, 1)) / 32
	res := Result{Knobs: k, SimMS: float64(f.windows) * 1000}
	res.Fleet.WindowMS = 1000
	for w := range f.workers {
		var act, q, hit []float64
		for t := range f.windows {
			skew := 1.0
			if k.Mode == "kv_router" {
				skew = 0.5 + float64((w*7+t)%f.workers)/float64(f.workers)
			}
			act = append(act, math.Round(skew*float64(200+(t*37+w*11)%300)))
			q = append(q, math.Round(skew*float64((t*53+w*29)%4000)))
			h := math.NaN()
			if (t+w)%5 != 0 {
				h = math.Min(1, reuse*(0.6+0.1*float64((t+2*w)%8)))
			}
			hit = append(hit, h)
		}
		res.Fleet.ActiveBlocks = append(res.Fleet.ActiveBlocks, act)
		res.Fleet.QueuedPrefill = append(res.Fleet.QueuedPrefill, q)
		res.Fleet.HitRatio = append(res.Fleet.HitRatio, hit)
	}
	for t := range f.windows {
		res.TTFTOverTime = append(res.TTFTOverTime, ttft*(0.8+0.4*float64((t*13)%7)/7))
	}
	partial(res)
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	res.Metrics = Metrics{
		Completed:   200,
		TTFT:        Quantiles{ttft, ttft * 0.8, ttft * 1.9, ttft * 3.1},
		TPOT:        Quantiles{11.2, 10.9, 13.4, 16.8},
		E2E:         Quantiles{ttft + 2000, ttft + 1900, ttft + 4100, ttft + 7000},
		OutputTokS:  1e6 / (ttft + 2000) * 3,
		PrefixReuse: reuse,
	}
	return res, nil
}

// fakeSweeper emits a fixed sequence of evaluations, round ends and a validation table.
type fakeSweeper struct{ block chan struct{} }

func (f fakeSweeper) Sweep(ctx context.Context, emit func(SweepEvent)) error {
	evals := []SweepEval{
		{1, Knobs{"kv_router", 1, 1, 0, 32}, 2210, 1},
		{1, Knobs{"round_robin", 0, 0, 0, 32}, 2450, 1},
		{1, Knobs{"kv_router", 0.5, 8, 0, 32}, 2150, 1},
		{2, Knobs{"kv_router", 1, 16, 0, 32}, 2120, 1},
		{2, Knobs{"kv_router", 1, 16, 0, 32}, 2124, 1},
		{2, Knobs{"kv_router", 0, 32, 0.5, 32}, 2300, 3},
	}
	for i, e := range evals {
		if f.block != nil && i == 3 {
			select {
			case <-f.block:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		emit(SweepEvent{Kind: SweepEvaluated, Eval: e})
	}
	emit(SweepEvent{Kind: SweepValidating})
	emit(SweepEvent{Kind: SweepValidated, Validation: []ValidationRow{
		{Name: "round_robin", Knobs: evals[1].Knobs, Metrics: Metrics{E2E: Quantiles{Mean: 2600}, TTFT: Quantiles{Mean: 520}, PrefixReuse: 0.2}},
		{Name: "default_kv", Knobs: evals[0].Knobs, Metrics: Metrics{E2E: Quantiles{Mean: 2300}, TTFT: Quantiles{Mean: 260}, PrefixReuse: 0.58}},
		{Name: "best", Knobs: evals[3].Knobs, Metrics: Metrics{E2E: Quantiles{Mean: 2200}, TTFT: Quantiles{Mean: 200}, PrefixReuse: 0.6}},
	}})
	return nil
}

func testSpace() Space {
	return Space{
		Modes:         []string{"kv_router", "round_robin", "random", "least_loaded"},
		Credits:       []float64{0, 0.5, 1},
		Scales:        []float64{0, 0.25, 0.5, 1, 2, 4, 8, 16, 32},
		Temperatures:  []float64{0, 0.2, 0.5, 1},
		Concurrencies: []int{1, 2, 4, 8, 16, 32, 64, 128},
	}
}

// fixedClock advances 40 ms per reading so "run N in X ms" is stable in goldens.
func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(40 * time.Millisecond); return t }
}

func testOptions(sim Simulator, sw Sweeper) Options {
	return Options{
		Workers: 8,
		Title:   "test experiment · 200 requests",
		Space:   testSpace(),
		Initial: Knobs{"kv_router", 1, 1, 0, 32},
		Sim:     sim, Sweep: sw,
		SweepInfo: SweepInfo{Objective: "e2e ms", Rounds: 2, PerRound: 3},
		Palettes:  []themes.Palette{themes.NoColor(), themes.Dark()},
		Now:       fixedClock(),
	}
}
