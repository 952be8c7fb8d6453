package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/trace"
)

// One request, budget 128, prompt 200: prefill in two chunks, then two decodes.
func TestChunkedPrefillAndDecodeTimeline(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1, record: true}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{req(0, 200, 3, 7)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 128, 8), ReplayConcurrency: 1, RecordRequests: true}
	timer.record = false
	s, rt := runScripted(t, cfg, timer, tr)
	// Re-run step by step to record the batches the timer saw.
	timer.record = true
	s2 := newSim(cfg, timer, tr, &fixedRouter{workers: 1})
	s2.stepwise = true
	if _, err := s2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []model.Batch{
		{Prefill: []model.Chunk{{NewTokens: 128, CachedTokens: 0}}},
		{Prefill: []model.Chunk{{NewTokens: 72, CachedTokens: 128}}},
		{Prefill: []model.Chunk{}, Decodes: 1, DecodeContextTokens: 201},
		{Prefill: []model.Chunk{}, Decodes: 1, DecodeContextTokens: 202},
	}
	if len(timer.batches) != len(want) {
		t.Fatalf("batches %+v", timer.batches)
	}
	for i := range want {
		g := timer.batches[i]
		if !slices.Equal(g.Prefill, want[i].Prefill) || g.Decodes != want[i].Decodes || g.DecodeContextTokens != want[i].DecodeContextTokens {
			t.Errorf("step %d batch %+v, want %+v", i, g, want[i])
		}
	}
	// Steps: 228, 172, 101, 101 µs → first token at 400, done at 602.
	r := records(s)[0]
	if r.TTFTMS != 0.4 || r.E2EMS != 0.602 {
		t.Errorf("ttft %v e2e %v, want 0.4 and 0.602", r.TTFTMS, r.E2EMS)
	}
	sum := s.Report().Summary
	if sum.MeanTPOTMS != 0.101 || sum.MeanITLMS != 0.101 || sum.P99ITLMS != 0.101 || sum.DurationMS != 0.602 {
		t.Errorf("summary %+v", sum)
	}
	// Prompt full blocks: 3 (200/64); two stored after the first chunk, one after the second.
	if len(rt.events) != 2 || len(rt.events[0].Hashes) != 2 || len(rt.events[1].Hashes) != 1 {
		t.Errorf("events %+v", rt.events)
	}
	if w := sum.Workers[0]; w.PeakBlocks != 4 || w.PromptTokens != 200 || w.Requests != 1 {
		t.Errorf("worker %+v", w)
	}
}

// Closed loop: the third request arrives when the first one completes.
func TestClosedLoopArrivals(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{
		req(0, 100, 1, 1), req(5000, 300, 1, 2), req(9000, 50, 2, 3),
	}}
	cfg := Config{Workers: 2, Worker: deployment(100, 1024, 8), ReplayConcurrency: 2, RecordRequests: true}
	s, _ := runScripted(t, cfg, timer, tr)
	recs := records(s)
	// Request 0 on worker 0: 200 µs; request 1 on worker 1: 400 µs; request 2 (id 2 →
	// worker 0) arrives at 200: prefill 150, decode 101.
	if recs[0].E2EMS != 0.2 || recs[1].E2EMS != 0.4 || recs[2].ArrivalMS != 0.2 || recs[2].E2EMS != 0.251 {
		t.Errorf("records %+v", recs)
	}
	if d := s.Report().Summary.DurationMS; d != 0.451 {
		t.Errorf("duration %v", d)
	}
}

// Open loop: arrivals at timestamp / speedup; an idle worker starts at the arrival.
func TestOpenLoopArrivals(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{req(0, 100, 1, 1), req(10, 100, 1, 2)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 1024, 8), ArrivalSpeedupRatio: 2, RecordRequests: true}
	s, _ := runScripted(t, cfg, timer, tr)
	recs := records(s)
	if recs[1].ArrivalMS != 5 || recs[1].E2EMS != 0.2 {
		t.Errorf("records %+v", recs)
	}
	if d := s.Report().Summary.DurationMS; d != 5.2 {
		t.Errorf("duration %v, want 5.2", d)
	}
}

// max_num_seqs bounds admission; the waiting request starts when a slot frees.
func TestMaxNumSeqs(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{req(0, 100, 2, 1), req(0, 100, 1, 2)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 1024, 1), ReplayConcurrency: 2, RecordRequests: true}
	s, _ := runScripted(t, cfg, timer, tr)
	recs := records(s)
	// A: prefill 200, decode 101 → 301; B then: 200 → ttft 501.
	if recs[0].E2EMS != 0.301 || recs[1].TTFTMS != 0.501 {
		t.Errorf("records %+v", recs)
	}
}

// cappedTimer's worker runs at most cap requests whatever max_num_seqs says, as a hybrid
// model's SGLang pool does (model.RunningLimiter).
type cappedTimer struct {
	*fakeTimer
	cap int
}

func (c cappedTimer) RunningLimit(maxNumSeqs int) int { return min(maxNumSeqs, c.cap) }

// A step timer's running cap bounds admission as max_num_seqs does: with max_num_seqs 8 and a
// cap of 1 the second request waits for the first, as in TestMaxNumSeqs.
func TestRunningLimitBoundsAdmission(t *testing.T) {
	timer := cappedTimer{&fakeTimer{base: 100, perToken: 1}, 1}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{req(0, 100, 2, 1), req(0, 100, 1, 2)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 1024, 8), ReplayConcurrency: 2, RecordRequests: true}
	s, _ := runScripted(t, cfg, timer, tr)
	if recs := records(s); recs[0].E2EMS != 0.301 || recs[1].TTFTMS != 0.501 {
		t.Errorf("records %+v; want the second request to wait for the first", recs)
	}
}

// Async scheduling: a busy worker schedules each step when the previous one starts, so a
// request arriving during a step (or at the instant a step is scheduled) waits for the step
// after; an idle worker schedules at the arrival.
func TestAsyncScheduling(t *testing.T) {
	// A: 100-token prompt (2000 µs), then decodes of 1010 µs: steps end 2000, 3010, 4020, …
	// B: 100-token prompt arriving at arrivalMS; a step with A's decode and B's prefill
	// lasts 2010 µs.
	for _, c := range []struct {
		arrivalMS      int64
		async          bool
		wantTTFTB      float64
		wantBatchStart int64 // when B's prefill step starts
	}{
		{3, false, 2.02, 3010}, // joins the step starting after its arrival
		{3, true, 3.03, 4020},  // the step at 3010 was scheduled at 2000, before it arrived
		{2, false, 2.01, 2000}, // arrives as a step starts: joins it
		{2, true, 4.03, 4020},  // the step at 3010 was scheduled at the instant it arrived
	} {
		timer := &fakeTimer{base: 1000, perToken: 10}
		tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{
			req(0, 100, 5, 1), req(c.arrivalMS, 100, 1, 2),
		}}
		d := deployment(100, 1024, 8)
		d.AsyncScheduling = c.async
		cfg := Config{Workers: 1, Worker: d, ArrivalSpeedupRatio: 1, RecordRequests: true}
		s, _ := runScripted(t, cfg, timer, tr)
		recs := records(s)
		if recs[0].TTFTMS != 2 {
			t.Errorf("arrival %d ms async %v: A on an idle worker has TTFT %v ms, want 2", c.arrivalMS, c.async, recs[0].TTFTMS)
		}
		if got := recs[1].TTFTMS; got != c.wantTTFTB {
			t.Errorf("arrival %d ms async %v: B TTFT %v ms, want %v", c.arrivalMS, c.async, got, c.wantTTFTB)
		}
		if got := recs[1].ArrivalMS*1000 + recs[1].TTFTMS*1000 - 2010; int64(got+0.5) != c.wantBatchStart {
			t.Errorf("arrival %d ms async %v: B prefilled in the step starting at %v µs, want %d", c.arrivalMS, c.async, got, c.wantBatchStart)
		}
	}
}
