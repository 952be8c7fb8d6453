package engine

import (
	"context"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// ranksTimer prices a lockstep step at base + perToken × the busiest rank's tokens + perMoE
// × the summed tokens (a dummy batch counting one), hand-computable like fakeTimer.
type ranksTimer struct {
	fakeTimer
	ranks  int
	perMoE int64
	steps  int
}

func (f *ranksTimer) Ranks() int { return f.ranks }

func (f *ranksTimer) RanksStepUS(batches []model.Batch) int64 {
	f.steps++
	var most, sum int64
	for i := range batches {
		n := int64(batches[i].Decodes)
		for _, c := range batches[i].Prefill {
			n += int64(c.NewTokens)
		}
		most, sum = max(most, n), sum+max(n, 1)
	}
	return f.base + f.perToken*most + f.perMoE*sum
}

// Two ranks of one worker, one request each (the fixed router sends id mod 2): both prefill
// in the first step, whose time is the longer prompt's plus the experts on both prompts'
// tokens; then they decode together; the last step runs rank 1's dummy batch.
func TestRanksStepTogetherTimeline(t *testing.T) {
	cfg := Config{Workers: 2, Worker: deployment(64, 512, 4), ArrivalSpeedupRatio: 1, RecordRequests: true}
	cfg.Worker.AttentionDP = 2
	timer := &ranksTimer{fakeTimer: fakeTimer{base: 10, perToken: 1}, ranks: 2, perMoE: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 100, 3, 1, 2), req(0, 300, 2, 3, 4, 5, 6, 7)}}
	ranks, err := cfg.setupRanks(timer)
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(cfg, timer, tr, &fixedRouter{workers: 2})
	s.ranks = ranks
	rep, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Step 1: 10 + 300 + (100 + 300) = 710. Step 2: both decode, 10 + 1 + 2 = 13 (request 1
	// done at 723). Step 3: request 0 decodes, rank 1 runs a dummy batch: 10 + 1 + 2 = 13.
	recs := records(s)
	want := map[int][2]float64{0: {0.710, 0.736}, 1: {0.710, 0.723}}
	for i, w := range want {
		r := recs[i]
		if r.TTFTMS != w[0] || r.E2EMS != w[1] {
			t.Fatalf("request %d: TTFT %g ms, e2e %g ms; want %g, %g", i, r.TTFTMS, r.E2EMS, w[0], w[1])
		}
	}
	if timer.steps != 3 || rep.Summary.RequestsCompleted != 2 {
		t.Fatalf("%d lockstep steps, %d completed; want 3, 2", timer.steps, rep.Summary.RequestsCompleted)
	}
}

// A DEP fleet's invariants on random workloads, checked after every event: each rank's pool
// and KV events agree (block accounting per rank), the ranks of a worker are busy together
// and started their step at the same time, every request is served by exactly one rank and
// completes with all its tokens, and every rank drains.
func TestRanksInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tb := rapid.SampledFrom([]int{64, 128}).Draw(t, "trace_block")
		tr := genTrace(t, tb)
		cfg := genConfig(t, tr)
		cfg.Worker.AsyncScheduling, cfg.Worker.TimingReference = false, ""
		ranks := rapid.IntRange(2, 4).Draw(t, "attention_dp")
		cfg.Worker.AttentionDP = ranks
		cfg.Worker.Backend = rapid.SampledFrom([]model.Backend{model.BackendVLLM, model.BackendSGLang, model.BackendTRTLLM}).Draw(t, "backend")
		switch cfg.Worker.Backend {
		case model.BackendSGLang: // its token budget holds a block at least
			cfg.Worker.MaxNumBatchedTokens = max(cfg.Worker.MaxNumBatchedTokens, cfg.Worker.BlockSize)
		case model.BackendTRTLLM: // without chunked prefill its token budget holds every prompt
			for _, r := range tr.Requests {
				cfg.Worker.MaxNumBatchedTokens = max(cfg.Worker.MaxNumBatchedTokens, cfg.Worker.BlockSize, r.InputLength)
			}
			cfg.Scheduler.TRTLLMADPBalance = rapid.Bool().Draw(t, "adp_balance")
			cfg.Scheduler.TRTLLMADPTimeoutIters = rapid.SampledFrom([]int{0, 5, 60}).Draw(t, "adp_timeout_iters")
			cfg.Scheduler.TRTLLMADPBatchingWaitIters = rapid.SampledFrom([]int{0, 2}).Draw(t, "adp_batching_wait_iters")
		}
		timer := &ranksTimer{fakeTimer: fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "base")), perToken: 1}, ranks: ranks, perMoE: 1}
		s, err := New(cfg, timer, tr)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.workers) != cfg.Workers*ranks {
			t.Fatalf("%d engine workers for %d workers of %d ranks", len(s.workers), cfg.Workers, ranks)
		}
		s.stepwise = true
		mirror := newKVMirror(len(s.workers))
		s.onKV = mirror.apply
		served := make([]int, len(s.workers))
		s.onDone = func(r *request) {
			if f := r.fl; f.generated != r.out || f.tokens != r.isl+r.out {
				t.Fatalf("request completes with %+v, flight %+v", *r, *f)
			}
		}
		together := func(s *Sim) error {
			if len(s.heap) > 0 && s.heap[0].time == s.now {
				return nil // the step ends of the other ranks at this instant are still queued
			}
			return ranksTogether(s, 0, len(s.workers), ranks)
		}
		runChecked(t, s, mirror, together)
		for i := range s.reqs {
			r := &s.reqs[i]
			if !r.finished || r.worker < 0 || int(r.worker) >= len(s.workers) {
				t.Fatalf("request %d: %+v", i, *r)
			}
			served[r.worker]++
		}
		total := 0
		for i := range s.workers {
			w := &s.workers[i]
			if len(w.running) != 0 || w.waiting.len() != 0 || w.pool.inUse != 0 {
				t.Fatalf("rank %d not drained", i)
			}
			if w.requests != served[i] {
				t.Fatalf("rank %d counts %d requests, %d were served there", i, w.requests, served[i])
			}
			total += w.requests
		}
		if total != len(s.reqs) || s.completed != len(s.reqs) {
			t.Fatalf("%d requests on the ranks, %d completed, of %d served", total, s.completed, len(s.reqs))
		}
	})
}

// A DEP worker needs a timer that prices its ranks together (disagg_ranks_test.go for the
// pools of a disaggregated fleet): anything else is refused with the reason.
func TestRanksConfigErrors(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 10, 2, 1)}}
	base := Config{Workers: 1, Worker: deployment(64, 512, 4), Router: router.DefaultConfig()}
	base.Worker.AttentionDP = 2
	cases := []struct {
		name  string
		edit  func(*Config)
		timer model.StepTimer
		want  string
	}{
		{"plain timer", func(*Config) {}, &fakeTimer{base: 1}, "does not price 2 lockstep ranks"},
		{"other rank count", func(*Config) {}, &ranksTimer{ranks: 4}, "does not price 2 lockstep ranks"},
	}
	for _, c := range cases {
		cfg := base
		c.edit(&cfg)
		if _, err := New(cfg, c.timer, tr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TensorRT-LLM's attention-DP balancing (enable_balance, timeout_iters 5): with a request
// decoding on each of two ranks, a prompt reaching rank 0 alone waits for the balance
// counter to run out (it counts every step not every rank had a context, so the 62 decode
// steps before the arrival left it at 2 of 5: 2 more steps of 13 µs), while two prompts reaching both ranks together run at once. Without balancing
// neither waits.
func TestTRTLLMADPBalanceHoldsLoneContexts(t *testing.T) {
	first := func(balance bool, both bool) int64 {
		rs := []trace.Request{req(0, 64, 400, 1), req(0, 64, 400, 2), req(1, 64, 2, 3)}
		if both {
			rs = append(rs, req(1, 64, 2, 4))
		}
		cfg := Config{Workers: 2, Worker: deployment(64, 512, 4), ArrivalSpeedupRatio: 1, RecordRequests: true}
		cfg.Worker.AttentionDP, cfg.Worker.Backend = 2, model.BackendTRTLLM
		cfg.Scheduler.TRTLLMADPBalance, cfg.Scheduler.TRTLLMADPTimeoutIters = balance, 5
		timer := &ranksTimer{fakeTimer: fakeTimer{base: 10, perToken: 1}, ranks: 2, perMoE: 1}
		ranks, err := cfg.setupRanks(timer)
		if err != nil {
			t.Fatal(err)
		}
		s := newSim(cfg, timer, &trace.Trace{Name: "adp", BlockSize: 64, Requests: rs}, &fixedRouter{workers: 2})
		s.ranks = ranks
		if _, err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s.reqs[2].firstTok
	}
	if held, free := first(true, false), first(false, false); held-free != 26 {
		t.Errorf("lone prompt: first token at %d µs balanced, %d not; want 2 steps of 13 µs later", held, free)
	}
	if held, free := first(true, true), first(false, true); held != free {
		t.Errorf("a prompt on each rank: first token at %d µs balanced, %d not; want the same", held, free)
	}
}
