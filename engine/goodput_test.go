package engine

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/trace"
)

// Goodput counts the requests whose TTFT, TPOT and e2e latency are all within the SLO, as
// vLLM's benchmark_serving does, and divides by the replay's duration; requests/s divides
// every completed request. Checked against the per-request records for any SLO.
func TestGoodputMatchesRecords(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	var reqs []trace.Request
	for i := range 12 {
		reqs = append(reqs, req(int64(i), 100+30*i, 1+i%4, int64(i)))
	}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: reqs}
	cfg := Config{Workers: 2, Worker: deployment(1000, 256, 4), ReplayConcurrency: 4, RecordRequests: true}
	s, _ := runScripted(t, cfg, timer, tr)
	base := s.Report()
	if base.Summary.Goodput != nil {
		t.Fatal("goodput reported without an SLO")
	}
	wantRate := float64(base.Summary.RequestsCompleted) / (base.Summary.DurationMS / 1000)
	if got := base.Summary.RequestThroughput; got < wantRate*0.999 || got > wantRate*1.001 {
		t.Fatalf("request throughput %v, want %v", got, wantRate)
	}
	rapid.Check(t, func(rt *rapid.T) {
		slo := SLO{
			TTFTMS: rapid.SampledFrom([]float64{0, 0.2, 0.5, 1, 3}).Draw(rt, "ttft"),
			TPOTMS: rapid.SampledFrom([]float64{0, 0.1, 0.102, 0.2}).Draw(rt, "tpot"),
			E2EMS:  rapid.SampledFrom([]float64{0, 0.5, 1, 3}).Draw(rt, "e2e"),
		}
		c := cfg
		c.SLO = slo
		rep, err := newSim(c, timer, tr, &fixedRouter{workers: c.Workers}).Run(t.Context())
		if err != nil {
			rt.Fatal(err)
		}
		g := rep.Summary.Goodput
		if !slo.Set() {
			if g != nil {
				rt.Fatal("goodput without an SLO")
			}
			return
		}
		good := 0
		for _, r := range base.Requests {
			tpot := 0.0
			if r.OutputLength > 1 {
				tpot = (r.E2EMS - r.TTFTMS) / float64(r.OutputLength-1)
			}
			if (slo.TTFTMS == 0 || r.TTFTMS <= slo.TTFTMS) && (slo.TPOTMS == 0 || tpot <= slo.TPOTMS+1e-9) && (slo.E2EMS == 0 || r.E2EMS <= slo.E2EMS) {
				good++
			}
		}
		if g == nil || g.Good != good || g.Attainment != round(float64(good)/12, 6) ||
			g.RequestsPerS != round(float64(good)/(base.Summary.DurationMS/1000), 3) {
			rt.Fatalf("SLO %+v: goodput %+v, want %d good of 12 over %v ms", slo, g, good, base.Summary.DurationMS)
		}
	})
}

// GoodputOf over a replay's records counts what the replay's summary counted, whatever the
// SLO's bounds.
func TestGoodputOfRecordsIsTheSummarys(t *testing.T) {
	tr, err := trace.Load("builtin:toolagent", trace.DefaultBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	tr = tr.First(1500)
	cfg, mw := seedConfig(t)
	cfg.RecordRequests = true
	rapid.Check(t, func(rt *rapid.T) {
		cfg.SLO = SLO{TTFTMS: rapid.Float64Range(0, 400).Draw(rt, "ttft"), TPOTMS: rapid.Float64Range(0, 15).Draw(rt, "tpot"),
			E2EMS: rapid.SampledFrom([]float64{0, 1500, 4000}).Draw(rt, "e2e")}
		if !cfg.SLO.Set() {
			return
		}
		rep, err := Replay(context.Background(), cfg, mw, tr)
		if err != nil {
			rt.Fatal(err)
		}
		got, want := GoodputOf(rep.Requests, cfg.SLO, rep.Summary.DurationMS), rep.Summary.Goodput
		if *got != *want {
			rt.Fatalf("from records %+v, summary %+v", *got, *want)
		}
	})
}
