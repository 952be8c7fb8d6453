package planner

import (
	"math"
	"strings"
	"testing"
)

// The Kalman predictor on a ramp: after the first point the level follows the data and the
// trend is learnt, so a steady ramp of slope 10 is forecast within 1 of its next value, and
// a constant series exactly. The first forecast is the first value.
func TestKalmanFollowsTrend(t *testing.T) {
	k := newPredictor(Predictors["kalman_default_raw"])
	if k.next() != 0 {
		t.Fatalf("empty forecast %v, want 0", k.next())
	}
	for i := range 30 {
		k.add(float64(100 + 10*i))
	}
	if got := k.next(); math.Abs(got-400) > 1 {
		t.Fatalf("ramp forecast %v, want about 400", got)
	}
	if a, b := k.next(), k.next(); a != b {
		t.Fatalf("repeated forecasts advance the filter: %v then %v", a, b)
	}
	c := newPredictor(Predictors["kalman_reactive_log1p"])
	for range 10 {
		c.add(50)
	}
	if got := c.next(); math.Abs(got-50) > 1e-9 {
		t.Fatalf("constant forecast %v, want 50", got)
	}
}

// Leading zeros (the idle period) are skipped; later zeros count.
func TestPredictorsSkipIdleStart(t *testing.T) {
	p := newPredictor(Predictor{Family: "constant"})
	p.add(0)
	p.add(math.NaN())
	if p.next() != 0 {
		t.Fatal("idle start counted")
	}
	p.add(7)
	p.add(0)
	if p.next() != 0 {
		t.Fatalf("a zero after traffic was dropped: %v", p.next())
	}
}

// The regression recovers a linear wall time, rejects a fit with a negative coefficient,
// and keeps at most max_num_fpm_samples observations.
func TestAggRegression(t *testing.T) {
	m := newAggRegression(8, 3, 4)
	for i := range 20 {
		pre, kv := float64(i%5)*1000, float64(i%7)*10000
		m.add(FPM{PrefillTokens: int64(pre), PrefillRequests: 1, DecodeKVTokens: int64(kv), DecodeRequests: 4, WallS: 0.01 + 2e-6*pre + 1e-7*kv})
	}
	if m.total != 8 {
		t.Fatalf("%d observations kept, want 8", m.total)
	}
	if !m.fit() {
		t.Fatal("no fit")
	}
	if math.Abs(m.coef[0]-0.01) > 1e-9 || math.Abs(m.coef[1]-2e-6) > 1e-12 || math.Abs(m.coef[2]-1e-7) > 1e-12 {
		t.Fatalf("coefficients %v, want [0.01 2e-6 1e-7]", m.coef)
	}
	neg := newAggRegression(8, 3, 4)
	for i := range 6 {
		neg.add(FPM{PrefillTokens: int64(i * 100), DecodeKVTokens: int64(i % 2), WallS: 1 - 1e-3*float64(i)})
	}
	if neg.fit() {
		t.Fatal("a fit with a negative coefficient was accepted")
	}
}

func mustNew(t *testing.T, c Config) *Planner {
	t.Helper()
	p, err := New(c.Defaults(), Capabilities{MaxNumBatchedTokens: 8192, MaxKVTokens: 100_000, MaxNumSeqs: 256, GPUs: 1},
		func(f FPM) float64 { return 0.005 + 1e-6*float64(f.PrefillTokens) + 1e-7*float64(f.DecodeKVTokens) })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Easy mode (throughput target): any engine above 100 % KV use adds one worker, all below
// 60 % remove one; a scale still in progress only observes; the GPU budget caps the count.
func TestEasyAggDecisions(t *testing.T) {
	p := mustNew(t, Config{LoadScaling: true, MaxGPUBudget: 3})
	tick := p.First(0)
	if !tick.Load || tick.Throughput || tick.AtS != 5 {
		t.Fatalf("first tick %+v, want a load tick at 5 s", tick)
	}
	hot := FPM{DecodeKVTokens: 90_000, QueuedPrefillTokens: 20_000}
	cold := FPM{DecodeKVTokens: 10_000}
	d, _ := p.OnTick(tick, Input{NowS: 5, Ready: 2, Expected: 2, FPMs: []FPM{hot, cold}})
	if d.Replicas != 3 || d.Reason != "scale_up" {
		t.Fatalf("hot engine: %+v, want 3 scale_up", d)
	}
	d, _ = p.OnTick(tick, Input{NowS: 10, Ready: 2, Expected: 3, FPMs: []FPM{hot, hot}})
	if d.Replicas != -1 || d.Reason != "scaling_in_progress" {
		t.Fatalf("while starting: %+v", d)
	}
	d, _ = p.OnTick(tick, Input{NowS: 15, Ready: 3, Expected: 3, FPMs: []FPM{hot, hot, hot}})
	if d.Replicas != 3 {
		t.Fatalf("at the budget: %+v, want 3", d)
	}
	d, _ = p.OnTick(tick, Input{NowS: 20, Ready: 3, Expected: 3, FPMs: []FPM{cold, cold, cold}})
	if d.Replicas != 2 || d.Reason != "scale_down" {
		t.Fatalf("cold engines: %+v, want 2 scale_down", d)
	}
}

// Throughput scaling (sla): demand over the best engine rate; with load scaling on it only
// sets the lower bound. Ticks merge within half a second.
func TestThroughputAgg(t *testing.T) {
	p := mustNew(t, Config{Target: TargetSLA, ThroughputScaling: true, TTFTMS: 1500, ITLMS: 50, ThroughputEveryS: 60, LoadEveryS: 10, MaxGPUBudget: 64})
	tick := p.First(0)
	for tick.AtS < 60 {
		_, tick = p.OnTick(tick, Input{NowS: tick.AtS, Ready: 2, Expected: 2, FPMs: []FPM{}})
	}
	if !tick.Throughput || !tick.Load {
		t.Fatalf("tick at 60 s %+v, want both loops", tick)
	}
	tr := &Traffic{NumReq: 6000, ISL: 4000, OSL: 300, DurationS: 60}
	d, _ := p.OnTick(tick, Input{NowS: 60, Ready: 2, Expected: 2, FPMs: []FPM{}, Traffic: tr})
	rps, _, _ := p.reg.bestRPS(4000, 300, 8192, 1500, 50, 100_000, 256, 0)
	want := int(math.Ceil(100 / rps))
	if d.Replicas != want || want < 3 {
		t.Fatalf("100 req/s at %.2f req/s per engine: %+v, want %d", rps, d, want)
	}
}

func TestRefusedPredictorsSayWhy(t *testing.T) {
	for _, fam := range []string{"arima", "prophet"} {
		err := Config{LoadScaling: true, Predictor: Predictor{Family: fam}}.Defaults().Validate()
		if err == nil || !strings.Contains(err.Error(), "not implemented") {
			t.Fatalf("%s: %v", fam, err)
		}
	}
}
