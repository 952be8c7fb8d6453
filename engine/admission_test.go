package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// seedFleet is the seed worker (its timing model and capacity) and the first n requests of the
// built-in toolagent trace.
func seedFleet(t testing.TB, n int) (model.Deployment, *model.Worker, *trace.Trace) {
	t.Helper()
	cfg, w := seedConfig(t)
	tr, err := trace.Load("builtin:toolagent", 512)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Worker, w, tr.First(n)
}

// Under overload the router queue's policy decides who waits: wspt (shortest prompt first)
// gives the lowest mean TTFT, fcfs the lowest p99 TTFT, and lcfs is the worst on both.
// Two seed workers saturate near 512 requests in flight (throughput there is within 5 % of
// 1,024's); the test runs at 1,024.
func TestQueuePoliciesUnderOverload(t *testing.T) {
	d, w, tr := seedFleet(t, 3000)
	run := func(conc int, lc router.LoadConfig) Summary {
		rc := router.DefaultConfig()
		rc.Load = lc
		rep, err := Replay(context.Background(), Config{Workers: 2, Worker: d, Router: rc, ReplayConcurrency: conc, LoadReport: true}, w, tr)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Summary.RequestsCompleted != len(tr.Requests) {
			t.Fatalf("%d of %d completed", rep.Summary.RequestsCompleted, len(tr.Requests))
		}
		return rep.Summary
	}
	if sat, over := run(512, router.LoadConfig{}), run(1024, router.LoadConfig{}); sat.RequestThroughput < 0.95*over.RequestThroughput {
		t.Fatalf("premise: %.2f req/s at 512 is not within 5 %% of %.2f at 1024", sat.RequestThroughput, over.RequestThroughput)
	}
	one := 1.0
	got := map[router.QueuePolicy]Summary{}
	for _, p := range router.QueuePolicies() {
		s := run(1024, router.LoadConfig{QueueThreshold: &one, QueuePolicy: p})
		if s.Load.RouterQueued == 0 {
			t.Fatalf("%s: nothing waited in the router queue", p)
		}
		got[p] = s
		t.Logf("%s: mean TTFT %.0f ms, p99 %.0f ms, %d queued", p, s.MeanTTFTMS, s.P99TTFTMS, s.Load.RouterQueued)
	}
	fcfs, wspt, lcfs := got[router.QueueFCFS], got[router.QueueWSPT], got[router.QueueLCFS]
	if !(wspt.MeanTTFTMS < fcfs.MeanTTFTMS) {
		t.Errorf("mean TTFT: wspt %.0f ms not below fcfs %.0f ms", wspt.MeanTTFTMS, fcfs.MeanTTFTMS)
	}
	if !(fcfs.P99TTFTMS < wspt.P99TTFTMS) {
		t.Errorf("p99 TTFT: fcfs %.0f ms not below wspt %.0f ms", fcfs.P99TTFTMS, wspt.P99TTFTMS)
	}
	if !(lcfs.MeanTTFTMS > fcfs.MeanTTFTMS && lcfs.MeanTTFTMS > wspt.MeanTTFTMS && lcfs.P99TTFTMS > fcfs.P99TTFTMS && lcfs.P99TTFTMS > wspt.P99TTFTMS) {
		t.Errorf("lcfs (mean %.0f, p99 %.0f ms) is not the worst on both", lcfs.MeanTTFTMS, lcfs.P99TTFTMS)
	}
}

// A request that finds every worker busy is rejected: counted in requests_rejected with its
// reason and first line, in no latency, and a closed loop sends the next one.
func TestBusyRejectionsAreCounted(t *testing.T) {
	d, w, tr := seedFleet(t, 600)
	frac := 0.5
	rc := router.DefaultConfig()
	rc.Load = router.LoadConfig{ActivePrefillTokensThresholdFrac: &frac}
	rep, err := Replay(context.Background(), Config{Workers: 2, Worker: d, Router: rc, ReplayConcurrency: 64, RecordRequests: true}, w, tr)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s.RequestsRejected == 0 {
		t.Fatal("no request was rejected at 64 in flight on two workers with a 0.5 busy threshold")
	}
	if s.RequestsCompleted+s.RequestsRejected != len(tr.Requests) || len(rep.Requests) != s.RequestsCompleted {
		t.Fatalf("%d completed + %d rejected != %d requests (%d records)", s.RequestsCompleted, s.RequestsRejected, len(tr.Requests), len(rep.Requests))
	}
	if len(s.Rejections) != 1 || s.Rejections[0].Reason != busyReason || s.Rejections[0].First == "" {
		t.Fatalf("rejections %+v, want one entry for busy workers", s.Rejections)
	}
}

// The load report adds its section and changes nothing else, in either loop mode.
func TestLoadReportChangesNothingElse(t *testing.T) {
	d, w, tr := seedFleet(t, 800)
	base := Config{Workers: 4, Worker: d, Router: router.DefaultConfig(), ReplayConcurrency: 32}
	plain, err := Replay(context.Background(), base, w, tr)
	if err != nil {
		t.Fatal(err)
	}
	base.LoadReport = true
	with, err := Replay(context.Background(), base, w, tr)
	if err != nil {
		t.Fatal(err)
	}
	l := with.Summary.Load
	if l == nil || l.MeanDecodeStallMS <= 0 || l.TPOTStallShare <= 0 || l.TPOTStallShare >= 1 || l.DecodeImbalance < 1 || l.BlockImbalance < 1 || len(l.Workers) != 4 {
		t.Fatalf("load section %+v: want a stall share in (0, 1) and imbalances >= 1", l)
	}
	with.Summary.Load = nil
	if a, b := reportJSON(t, plain), reportJSON(t, with); a != b {
		t.Fatalf("the load report changed the replay:\n%s\n%s", a, b)
	}
}

// Request 0 decodes while request 1's 200-token prompt runs in two mixed steps (127 + 73
// tokens next to its decode): each step takes 10 µs per prompt token longer than the decode
// alone, so request 0 waits 2,000 µs behind prefill, request 1 none. The fast path and the
// step-by-step loop agree (runScripted), so the per-worker integrals do too.
func TestDecodeStallBehindPrefill(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 64, 12, 1), req(2, 200, 2, 2, 3, 4, 5)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 128, 8), Router: router.DefaultConfig(), LoadReport: true, RecordRequests: true}
	s, _ := runScripted(t, cfg, &fakeTimer{base: 1000, perToken: 10}, tr)
	if got := fmt.Sprint(s.stalls.stall); got != "[2000 0]" {
		t.Fatalf("decode stall per request %s µs, want [2000 0]", got)
	}
	rep := s.Report()
	if l := rep.Summary.Load; l.MeanDecodeStallMS != 1 || l.MixedSteps == 0 {
		t.Fatalf("load %+v: want a mean stall of 1 ms", l)
	}
	if recs := rep.Requests; len(recs) != 2 || recs[0].DecodeStallMS != 2 || recs[1].DecodeStallMS != 0 {
		t.Fatalf("per-request records %+v: want 2 ms of stall for request 0, none for 1", recs)
	}
}

// With the AIC prefill-load model the router prices each prefill on the engines' own tables
// and its queue releases requests as that load decays (every 100 ms between events), not
// only at first tokens: the schedule, and so the mean TTFT, changes (1,500 seed requests on
// two workers at 256 in flight: 855 ms static, 883 ms aic), and every request is served.
// Output-block tracking (step by step) serves them all too.
func TestAICAndOutputTrackingUnderTheQueue(t *testing.T) {
	d, w, tr := seedFleet(t, 1500)
	run := func(lc router.LoadConfig) Summary {
		rc := router.DefaultConfig()
		rc.Load = lc
		rep, err := Replay(context.Background(), Config{Workers: 2, Worker: d, Router: rc, ReplayConcurrency: 256, LoadReport: true}, w, tr)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Summary.RequestsCompleted != len(tr.Requests) || rep.Summary.Load.RouterQueued == 0 {
			t.Fatalf("%+v: %d of %d completed, %d queued", lc, rep.Summary.RequestsCompleted, len(tr.Requests), rep.Summary.Load.RouterQueued)
		}
		return rep.Summary
	}
	half := 0.5
	static := run(router.LoadConfig{QueueThreshold: &half})
	aic := run(router.LoadConfig{QueueThreshold: &half, PrefillLoadModel: router.PrefillLoadAIC})
	t.Logf("mean TTFT: static %.0f ms, aic %.0f ms", static.MeanTTFTMS, aic.MeanTTFTMS)
	if aic.MeanTTFTMS == static.MeanTTFTMS {
		t.Fatal("the AIC model changed nothing")
	}
	run(router.LoadConfig{QueueThreshold: &half, TrackOutputBlocks: true})
}
