package planner

import (
	"math"
	"testing"
)

func mustDisagg(t *testing.T, c Config) *Planner {
	t.Helper()
	pc := Capabilities{MaxNumBatchedTokens: 8192, MaxKVTokens: 100_000, MaxNumSeqs: 256, ContextLength: 16384, GPUs: 2}
	dc := Capabilities{MaxNumBatchedTokens: 8192, MaxKVTokens: 200_000, MaxNumSeqs: 256, ContextLength: 16384, GPUs: 1}
	p, err := NewDisagg(c.Defaults(), pc, dc,
		func(f FPM) float64 { return 0.002 + 1e-4*float64(f.PrefillTokens) },
		func(f FPM) float64 { return 0.004 + 1e-4*float64(f.DecodeRequests) + 5e-8*float64(f.DecodeKVTokens) })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// _apply_global_budget: within the budget nothing changes; past it the prefill pool shrinks
// by budget ÷ total (floor) and the decode pool takes the rest; below both pools' minimum,
// zero for both.
func TestGlobalBudget(t *testing.T) {
	p := mustDisagg(t, Config{LoadScaling: true, MaxGPUBudget: 10})
	for _, c := range []struct{ np, nd, wp, wd int }{
		{2, 6, 2, 6},  // 10 GPUs: within
		{4, 6, 2, 6},  // 14 GPUs: prefill floor(4 × 10/14) = 2, decode (10 − 4) / 1 = 6
		{9, 1, 4, 2},  // 19 GPUs: prefill floor(9 × 10/19) = 4, decode 10 − 8 = 2
		{1, 30, 1, 8}, // 32 GPUs: prefill max(1, floor(0.3)) = 1, decode 10 − 2 = 8
	} {
		if gp, gd := p.globalBudget(c.np, c.nd); gp != c.wp || gd != c.wd {
			t.Errorf("budget(%d, %d) = %d, %d, want %d, %d", c.np, c.nd, gp, gd, c.wp, c.wd)
		}
	}
	tiny := mustDisagg(t, Config{LoadScaling: true, MaxGPUBudget: 10, MinEndpoint: 4})
	if gp, gd := tiny.globalBudget(5, 5); gp != 0 || gd != 0 {
		t.Errorf("a budget below both pools' minimum: %d, %d, want 0, 0", gp, gd)
	}
}

// Easy mode per pool: prefill scales up when an engine's queue reaches the context length
// and down when every queue is under a tenth of it; decode on KV use (throughput target:
// above 100 %, below 60 %). Each pool moves on its own signal, and nothing is decided while
// either pool is still scaling.
func TestEasyDisaggDecisions(t *testing.T) {
	p := mustDisagg(t, Config{LoadScaling: true, MaxGPUBudget: 64})
	tick := p.First(0)
	hotP, coolP := FPM{QueuedPrefillTokens: 20_000}, FPM{QueuedPrefillTokens: 100}
	hotD, coolD := FPM{DecodeKVTokens: 190_000, QueuedDecodeKV: 20_000}, FPM{DecodeKVTokens: 10_000}
	in := Input{NowS: 5, Ready: 2, Expected: 2, PrefillReady: 2, PrefillExpected: 2}
	in.PrefillFPMs, in.FPMs = []FPM{hotP, coolP}, []FPM{coolD, coolD}
	if d, _ := p.OnTick(tick, in); d.Prefill != 3 || d.Replicas != 1 || d.PrefillReason != "scale_up" || d.Reason != "scale_down" {
		t.Fatalf("hot prefill, cool decode: %+v, want prefill 3 (scale_up), decode 1 (scale_down)", d)
	}
	in.PrefillExpected = 3
	if d, _ := p.OnTick(tick, in); d.Prefill != -1 || d.Replicas != -1 || d.Reason != "scaling_in_progress" {
		t.Fatalf("while the prefill pool starts: %+v", d)
	}
	in.PrefillExpected, in.PrefillFPMs, in.FPMs = 2, []FPM{coolP, coolP}, []FPM{hotD, coolD}
	if d, _ := p.OnTick(tick, in); d.Prefill != 1 || d.Replicas != 3 {
		t.Fatalf("cool prefill, hot decode: %+v, want prefill 1, decode 3", d)
	}
	in.PrefillFPMs, in.FPMs = []FPM{{QueuedPrefillTokens: 5000}, coolP}, []FPM{{DecodeKVTokens: 150_000}, coolD}
	if d, _ := p.OnTick(tick, in); d.Prefill != -1 || d.Replicas != -1 || d.Reason != "no_change" {
		t.Fatalf("between the thresholds: %+v", d)
	}
}

// sla mode: the prefill pool's TTFT regression prices the queue, the decode pool's ITL
// regression its KV; a queue whose TTFT passes the target on every engine adds a prefill
// worker, while a light decode pool consolidates only within the sensitivity.
func TestSLADisaggDecisions(t *testing.T) {
	p := mustDisagg(t, Config{Target: TargetSLA, LoadScaling: true, TTFTMS: 100, ITLMS: 20, MaxGPUBudget: 64})
	tick := p.First(0)
	own, ok := p.preg.ttft(0, 8192, 0)
	if !ok || math.Abs(own-p.preg.predict(p.preg.avgISL.value(), 0)) > 1e-12 {
		t.Fatalf("own TTFT %v (%v)", own, ok)
	}
	in := Input{NowS: 5, Ready: 2, Expected: 2, PrefillReady: 2, PrefillExpected: 2,
		PrefillFPMs: []FPM{{QueuedPrefillTokens: 200_000}, {QueuedPrefillTokens: 150_000}},
		FPMs:        []FPM{{DecodeKVTokens: 1000, DecodeRequests: 1}, {DecodeKVTokens: 1000, DecodeRequests: 1}}}
	d, _ := p.OnTick(tick, in)
	if d.Prefill != 3 || d.Replicas != 1 {
		t.Fatalf("queued prefill over the TTFT target, idle decode: %+v, want prefill 3, decode 1", d)
	}
	// The decode estimate: the next pass with one more request of average length.
	want := p.dreg.predict(p.dreg.avgNumDecode.value()+1, 3000+p.dreg.avgDecodeLen.value())
	if got, _ := p.dreg.itl(2000, 1000); math.Abs(got-want) > 1e-12 {
		t.Fatalf("itl %v, want %v", got, want)
	}
}

// Throughput scaling, disaggregated: each pool's replicas for the predicted demand, the
// prefill pool at least the TTFT floor; with load scaling on they are the lower bounds.
func TestThroughputDisagg(t *testing.T) {
	p := mustDisagg(t, Config{Target: TargetSLA, ThroughputScaling: true, TTFTMS: 1500, ITLMS: 50, ThroughputEveryS: 60, LoadEveryS: 10, MaxGPUBudget: 200})
	tick := p.First(0)
	for tick.AtS < 60 {
		_, tick = p.OnTick(tick, Input{NowS: tick.AtS, Ready: 1, Expected: 1, PrefillReady: 1, PrefillExpected: 1, FPMs: []FPM{}})
	}
	tr := &Traffic{NumReq: 6000, ISL: 4000, OSL: 300, DurationS: 60}
	d, _ := p.OnTick(tick, Input{NowS: 60, Ready: 1, Expected: 1, PrefillReady: 1, PrefillExpected: 1, FPMs: []FPM{}, Traffic: tr})
	prps, _ := p.preg.bestRPS(4000, 8192)
	drps, _ := p.dreg.bestRPS(50, 4150, 300, 200_000, 256)
	wp, wd := int(math.Ceil(100/prps)), int(math.Ceil(100/drps))
	if d.Prefill != wp || d.Replicas != wd || wp < 2 || wd < 2 {
		t.Fatalf("100 req/s at %.1f prefill and %.1f decode req/s per engine: %+v, want %d and %d", prps, drps, d, wp, wd)
	}
}
