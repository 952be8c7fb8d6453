package tui

import (
	"context"
	"math"
	"time"

	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/themes"
)

// fakeSim is a deterministic stand-in for the engine: its figures depend on the knobs the
// way the real fleet's do (round robin loses prefix reuse and TTFT), so tests can see the
// panes change.
type fakeSim struct {
	workers, windows int
	// block, when set, holds every run until it is closed or ctx is cancelled.
	block chan struct{}
	// fail, when set, is the error of every run with async scheduling on.
	fail error
	// rejected requests are reported beside the 200 served, for one reason.
	rejected int
}

func (f fakeSim) Simulate(ctx context.Context, run Run, partial func(Result)) (Result, error) {
	k := run.Knobs
	if f.fail != nil && k.Deployment.Async {
		return Result{}, f.fail
	}
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
	if f.rejected > 0 {
		res.Metrics.Rejected = f.rejected
		res.Metrics.RejectedWhy = "input_length + output_length exceeds context_length 40960 (first: trace.jsonl:17)"
	}
	return res, nil
}

// fakeSweeper walks a sweep's phases at the knobs it is given: six evaluations over two
// rounds, two saturation runs, three validation runs and done, converged at round 2 of 2.
type fakeSweeper struct{ block chan struct{} }

// routerKnobs is a point of the sweep's router space.
func routerKnobs(mode string, credit, scale, temp float64) Knobs {
	return Knobs{Mode: mode, Credit: credit, Scale: scale, Temperature: temp}
}

func (f fakeSweeper) Sweep(ctx context.Context, at Knobs, emit func(SweepEvent)) error {
	evals := []SweepEval{
		{1, 0, at.WithRouter(routerKnobs("kv_router", 1, 1, 0)), 2210, 1, nil},
		{1, 1, at.WithRouter(routerKnobs("round_robin", 0, 0, 0)), 2450, 1, nil},
		{1, 2, at.WithRouter(routerKnobs("kv_router", 0.5, 8, 0)), 2150, 1, nil},
		{2, 0, at.WithRouter(routerKnobs("kv_router", 1, 16, 0)), 2120, 1, nil},
		{2, 1, at.WithRouter(routerKnobs("kv_router", 1, 16, 0)), 2124, 1, nil},
		{2, 2, at.WithRouter(routerKnobs("kv_router", 0, 32, 0.5)), 2300, 3, nil},
	}
	for i, e := range evals {
		if f.block != nil && i == 3 {
			select {
			case <-f.block:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		emit(SweepEvent{Progress: sweep.Progress{Phase: sweep.PhaseSearch, Round: e.Round, Rounds: 2, Done: i + 1, Total: 6}, Eval: &e})
	}
	for _, ph := range []struct {
		phase sweep.Phase
		n     int
	}{{sweep.PhaseSaturation, 2}, {sweep.PhaseValidation, 3}} {
		for k := range ph.n + 1 {
			emit(SweepEvent{Progress: sweep.Progress{Phase: ph.phase, Done: k, Total: ph.n}})
		}
	}
	emit(SweepEvent{Progress: sweep.Progress{Phase: sweep.PhaseDone, Round: 2, Rounds: 2, Done: 6, Total: 6, Stop: "converged at round 2 of 2"},
		Validation: []ValidationRow{
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
		Replicas:      []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
		Layouts:       []string{"tp4·ep4", "tp4·moe_tp4"},
		BatchedTokens: []int{8192, 16384, 32768},
		Seqs:          []int{256, 512, 1024},
		KVCacheDtypes: []string{"fp8", "bf16"},
	}
}

// testKnobs is the explorer's first point in the tests: the default KV router at c=32 on
// the seed's deployment with the given fleet size.
func testKnobs(workers int) Knobs {
	k := routerKnobs("kv_router", 1, 1, 0)
	k.Concurrency = 32
	k.Deployment = Deployment{Replicas: workers, Layout: "tp4·ep4", MaxBatchedTokens: 16384, MaxSeqs: 512, KVCacheDtype: "fp8"}
	return k
}

// fixedClock advances 40 ms per reading so "run N in X ms" is stable in goldens.
func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(40 * time.Millisecond); return t }
}

func testOptions(sim Simulator, sw Sweeper) Options {
	workers := 8
	if f, ok := sim.(fakeSim); ok {
		workers = f.workers
	}
	return Options{
		Title:   "test experiment · 200 requests",
		Space:   testSpace(),
		Initial: testKnobs(workers),
		Sim:     sim, Sweep: sw,
		SweepInfo: SweepInfo{Objective: "e2e ms", Rounds: 2, PerRound: 3, Requests: 200, ValidationRequests: 1000,
			Dims: []string{"router_mode", "overlap_score_credit", "prefill_load_scale", "router_temperature"}},
		Palettes: []themes.Palette{themes.NoColor(), themes.Dark()},
		Now:      fixedClock(),
	}
}
