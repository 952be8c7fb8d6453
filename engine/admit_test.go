package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// Requests the fleet cannot serve are rejected one by one, as vLLM answers HTTP 400: not
// routed, not simulated, counted with their reason and first line; the rest replay as if the
// rejected ones were not in the trace, keeping their trace positions as ids.
func TestOverLongRequestsAreRejectedNotFatal(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	all := []trace.Request{req(0, 100, 2, 1), req(0, 5000, 200, 2, 5, 6, 7, 8, 9, 10, 11, 12, 13), req(0, 100, 3, 3), req(0, 4000, 100, 4, 14, 15, 16, 17, 18, 19, 20)}
	tr := &trace.Trace{Name: "x.jsonl", BlockSize: 512, Requests: all, Lines: []int{1, 3, 4, 7}}
	cfg := Config{Workers: 2, Worker: deployment(100, 1024, 1000), ReplayConcurrency: 2, RecordRequests: true, Router: router.DefaultConfig()}
	cfg.Worker.ContextLength = 4096
	rep, err := Replay(context.Background(), cfg, timer, tr)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	want := []Rejection{{Reason: "input_length + output_length exceeds context_length 4096", Requests: 2, First: "x.jsonl:3"}}
	if s.RequestsCompleted != 2 || s.RequestsRejected != 2 || !slices.Equal(s.Rejections, want) {
		t.Errorf("completed %d, rejected %d %+v; want 2, 2 %+v", s.RequestsCompleted, s.RequestsRejected, s.Rejections, want)
	}
	if ids := []int{rep.Requests[0].ID, rep.Requests[1].ID}; !slices.Equal(ids, []int{0, 2}) {
		t.Errorf("record ids %v, want the trace positions 0 and 2", ids)
	}
	served := &trace.Trace{Name: "x.jsonl", BlockSize: 512, Requests: []trace.Request{all[0], all[2]}}
	alone, err := Replay(context.Background(), cfg, timer, served)
	if err != nil {
		t.Fatal(err)
	}
	if alone.Summary.MeanE2EMS != s.MeanE2EMS || alone.Summary.DurationMS != s.DurationMS {
		t.Errorf("with rejections e2e %v, duration %v; the served requests alone %v, %v", s.MeanE2EMS, s.DurationMS,
			alone.Summary.MeanE2EMS, alone.Summary.DurationMS)
	}
	cfg.Strict = true
	if _, err := Replay(context.Background(), cfg, timer, tr); err == nil || !strings.Contains(err.Error(), "x.jsonl:3: input_length 5000 + output_length 200 = 5200 exceeds context_length 4096") {
		t.Errorf("strict: error %v, want one naming x.jsonl:3", err)
	}
}

// Both reasons in one trace: each counted under its own wording, in the order its first
// request appears, and the served indices are exactly the rest.
func TestAdmitCountsEachReasonOnce(t *testing.T) {
	tr := &trace.Trace{Name: "x.jsonl", BlockSize: 512, Lines: []int{1, 2, 3, 4, 5, 6},
		Requests: []trace.Request{req(0, 100, 2), req(0, 3000, 100), req(0, 9000, 1), req(0, 2500, 600), req(0, 100, 3), req(0, 8000, 200)}}
	cfg := Config{Worker: deployment(100, 1024, 1000)}
	cfg.Worker.ContextLength, cfg.Worker.NumGPUBlocks = 4096, 2
	served, rejected, err := cfg.Admit(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rejection{
		{Reason: "needs more KV blocks than a worker's 2", Requests: 2, First: "x.jsonl:2"},
		{Reason: "input_length + output_length exceeds context_length 4096", Requests: 2, First: "x.jsonl:3"},
	}
	if !slices.Equal(served, []int{0, 4}) || !slices.Equal(rejected, want) {
		t.Errorf("served %v, rejected %+v; want [0 4], %+v", served, rejected, want)
	}
}
