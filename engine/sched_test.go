package engine

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/trace"
)

// SGLang on random workloads: the engine's invariants (block accounting, KV events, every
// request completes with all its tokens, fast path = step by step), and SGLang's own: a step
// is a prefill batch or a decode batch, never both, and at most one request is in chunked
// prefill. The pool's check (checkPool) also proves the radix cache never evicted a page in
// use: every page a running request holds is still a cache entry with its holders counted.
func TestSGLangInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkInvariants(t, func(t *rapid.T, c *Config, _ *trace.Trace) {
			c.Worker.Backend = model.BackendSGLang
			c.Worker.NumGPUBlocks++ // SGLang refuses a request that fills the pool (Admit)
			c.Worker.MaxNumBatchedTokens = max(c.Worker.MaxNumBatchedTokens, c.Worker.BlockSize)
			c.Scheduler.SGLangPolicy = rapid.SampledFrom([]string{"", SGLangLPM}).Draw(t, "policy")
			c.Scheduler.SGLangMaxPrefillTokens = rapid.SampledFrom([]int{0, 64, 300}).Draw(t, "max_prefill")
			c.Scheduler.SGLangConservativeness = rapid.SampledFrom([]float64{0, 0.3, 1.5}).Draw(t, "conservativeness")
			c.Scheduler.SGLangRecvInterval = rapid.SampledFrom([]int{0, 3, 30}).Draw(t, "recv_interval")
		}, func(s *Sim) error {
			for i := range s.workers {
				w := &s.workers[i]
				if w.busy && !w.fast && len(w.batch.Prefill) > 0 && w.batch.Decodes > 0 {
					return fmt.Errorf("worker %d: a step mixes %d prefill chunks and %d decodes", i, len(w.batch.Prefill), w.batch.Decodes)
				}
				prefilling := 0
				for _, ri := range w.running {
					if !decoding(&s.reqs[ri]) && s.reqs[ri].fl.computed > 0 && !inStep(w, ri) {
						prefilling++
					}
				}
				if prefilling > 1 {
					return fmt.Errorf("worker %d: %d requests between prefill chunks", i, prefilling)
				}
			}
			return nil
		})
	})
}

// inStep reports whether request ri is in w's step in progress.
func inStep(w *worker, ri int32) bool {
	for _, sc := range w.sched {
		if sc.req == ri {
			return true
		}
	}
	return false
}

// TensorRT-LLM on random workloads, with and without batch waiting: the engine's invariants
// and GUARANTEED_NO_EVICT's: no request is ever preempted, and the free blocks always cover
// every running request's remaining sequence (no over-admission).
func TestTRTLLMInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkInvariants(t, func(t *rapid.T, c *Config, tr *trace.Trace) {
			c.Worker.Backend = model.BackendTRTLLM
			c.Worker.MaxNumBatchedTokens = max(c.Worker.MaxNumBatchedTokens, c.Worker.BlockSize)
			c.Scheduler.TRTLLMChunkedPrefill = rapid.Bool().Draw(t, "chunked_prefill")
			c.Scheduler.TRTLLMBatchWaitTimeoutIters = rapid.SampledFrom([]int{0, 3, 40}).Draw(t, "batch_wait_iters")
			c.Scheduler.TRTLLMBatchWaitMaxTokensRatio = rapid.SampledFrom([]float64{0, 0.5, 0.9}).Draw(t, "batch_wait_ratio")
			if !c.Scheduler.TRTLLMChunkedPrefill {
				for _, r := range tr.Requests {
					c.Worker.MaxNumBatchedTokens = max(c.Worker.MaxNumBatchedTokens, r.InputLength) // none refused
				}
			}
		}, func(s *Sim) error {
			for i := range s.workers {
				w := &s.workers[i]
				if w.preemptions > 0 {
					return fmt.Errorf("worker %d preempted %d requests", i, w.preemptions)
				}
				reserved := 0
				for _, ri := range w.running {
					reserved += s.trtRemaining(&s.reqs[ri])
				}
				if reserved > w.pool.available() {
					return fmt.Errorf("worker %d: running requests may still need %d blocks, %d free", i, reserved, w.pool.available())
				}
			}
			return nil
		})
	})
}

// LPM admits the waiting request with the longest cached prefix first; FCFS the one that
// came first. Request 0 caches blocks 1–3; then x (nothing cached) and y (blocks 1–3 cached)
// arrive together at a worker that runs one request at a time.
func TestSGLangLPMAdmitsLongestPrefixFirst(t *testing.T) {
	tr := &trace.Trace{Name: "lpm", BlockSize: 64, Requests: []trace.Request{
		req(0, 192, 1, 1, 2, 3),
		req(1000, 128, 2, 9, 10),
		req(1000, 256, 2, 1, 2, 3, 4),
	}}
	first := map[string]int{}
	for _, policy := range []string{SGLangFCFS, SGLangLPM} {
		cfg := Config{Workers: 1, Worker: deployment(100, 1024, 1), Scheduler: SchedulerConfig{SGLangPolicy: policy}}
		cfg.Worker.Backend = model.BackendSGLang
		s, _ := runScripted(t, cfg, &fakeTimer{base: 100, perToken: 1}, tr)
		x, y := s.reqs[1], s.reqs[2]
		if y.cached != 192 {
			t.Fatalf("%s: y hit %d cached tokens, want 192", policy, y.cached)
		}
		first[policy] = 1
		if y.firstTok < x.firstTok {
			first[policy] = 2
		}
	}
	if first[SGLangFCFS] != 1 || first[SGLangLPM] != 2 {
		t.Fatalf("first served: fcfs request %d (want 1), lpm request %d (want 2)", first[SGLangFCFS], first[SGLangLPM])
	}
}

// GUARANTEED_NO_EVICT reserves a request's whole sequence before admitting it, so where vLLM
// admits every prompt and then preempts as the outputs grow, TensorRT-LLM runs two at a time
// and never preempts. Four requests of 64 + 300 tokens (6 blocks each) on 12 blocks.
func TestTRTLLMGuaranteedNoEvictNeverPreempts(t *testing.T) {
	tr := &trace.Trace{Name: "noevict", BlockSize: 64, Requests: []trace.Request{
		req(0, 64, 300, 1), req(0, 64, 300, 2), req(0, 64, 300, 3), req(0, 64, 300, 4),
	}}
	preempted := map[model.Backend]int{}
	for _, backend := range []model.Backend{model.BackendVLLM, model.BackendTRTLLM} {
		cfg := Config{Workers: 1, Worker: deployment(12, 1024, 8)}
		cfg.Worker.Backend = backend
		peak := 0
		s := newSim(cfg, &fakeTimer{base: 100, perToken: 1}, tr, &fixedRouter{workers: 1})
		s.stepwise = true
		for !s.Done() {
			s.process(s.heap.pop())
			peak = max(peak, len(s.workers[0].running))
		}
		if s.completed != 4 {
			t.Fatalf("%s: %d of 4 completed", backend, s.completed)
		}
		preempted[backend] = s.workers[0].preemptions
		if backend == model.BackendTRTLLM && peak != 2 {
			t.Fatalf("trtllm ran %d requests at once, want 2 (6 blocks each of 12)", peak)
		}
	}
	if preempted[model.BackendVLLM] == 0 || preempted[model.BackendTRTLLM] != 0 {
		t.Fatalf("preemptions: vllm %d (want some), trtllm %d (want none)", preempted[model.BackendVLLM], preempted[model.BackendTRTLLM])
	}
}

// SGLang retracts the request with the fewest output tokens when decode runs out of pages,
// and the retracted request's prompt pages stay in the radix cache: its recompute hits them.
// Request 0 (18 pages in the end) decodes until new_token_ratio has decayed enough to admit
// request 1 (6 pages) on 20 pages; when they outgrow the pool, request 1 (fewer outputs) is
// retracted.
func TestSGLangRetractionKeepsPrefix(t *testing.T) {
	tr := &trace.Trace{Name: "retract", BlockSize: 64, Requests: []trace.Request{
		req(0, 128, 1000, 1, 2), req(70, 128, 200, 5, 6),
	}}
	cfg := Config{Workers: 1, Worker: deployment(20, 1024, 8)}
	cfg.Worker.Backend = model.BackendSGLang
	s := newSim(cfg, &fakeTimer{base: 100, perToken: 1}, tr, &fixedRouter{workers: 1})
	s.stepwise = true
	w := &s.workers[0]
	retracted := false
	for !s.Done() {
		s.process(s.heap.pop())
		if r := &s.reqs[1]; !retracted && r.preempted > 0 {
			retracted = true
			if s.reqs[0].preempted != 0 {
				t.Fatal("retracted the request with more output tokens")
			}
			hashes := blockHashes(nil, tr.Requests[1].HashIDs, 0, 128, 64, 64)
			if got := cachedPrefix(&w.pool, hashes); got != 2 {
				t.Fatalf("after retraction %d of the 2 prompt pages are cached", got)
			}
		}
		if retracted && inStep(w, 1) {
			if got := s.reqs[1].fl.computed; got != 128 {
				t.Fatalf("recompute starts from %d cached tokens, want the 128 of its prompt", got)
			}
			return
		}
	}
	t.Fatalf("retracted %v, but never readmitted", retracted)
}

// TensorRT-LLM passes over a waiting request whose first uncached block another context of
// the same step is computing (beneficialToSkip), so it reuses the blocks a step later; vLLM
// computes both prompts at once and reuses nothing.
func TestTRTLLMSkipsToReuseABlockInFlight(t *testing.T) {
	tr := &trace.Trace{Name: "skip", BlockSize: 64, Requests: []trace.Request{
		req(0, 256, 2, 1, 2, 3, 4), req(0, 256, 2, 1, 2, 3, 4),
	}}
	cached := map[model.Backend]int32{}
	for _, backend := range []model.Backend{model.BackendVLLM, model.BackendTRTLLM} {
		cfg := Config{Workers: 1, Worker: deployment(100, 1024, 8)}
		cfg.Worker.Backend = backend
		s, _ := runScripted(t, cfg, &fakeTimer{base: 100, perToken: 1}, tr)
		cached[backend] = s.reqs[1].cached
	}
	if cached[model.BackendVLLM] != 0 || cached[model.BackendTRTLLM] != 192 {
		t.Fatalf("second prompt's cached tokens: vllm %d (want 0), trtllm %d (want 192)", cached[model.BackendVLLM], cached[model.BackendTRTLLM])
	}
}

// TensorRT-LLM makes a prompt's blocks reusable, and publishes them, when its context is
// done; vLLM as each block is computed. A 256-token prompt in 64-token chunks.
func TestTRTLLMStoresBlocksAtContextEnd(t *testing.T) {
	tr := &trace.Trace{Name: "store", BlockSize: 64, Requests: []trace.Request{req(0, 256, 2, 1, 2, 3, 4)}}
	stored := map[model.Backend][]int{}
	for _, backend := range []model.Backend{model.BackendVLLM, model.BackendTRTLLM} {
		cfg := Config{Workers: 1, Worker: deployment(100, 64, 8), Scheduler: SchedulerConfig{TRTLLMChunkedPrefill: true}}
		cfg.Worker.Backend = backend
		_, rt := runScripted(t, cfg, &fakeTimer{base: 100, perToken: 1}, tr)
		for _, ev := range rt.events {
			stored[backend] = append(stored[backend], len(ev.Hashes))
		}
	}
	if fmt.Sprint(stored[model.BackendVLLM]) != "[1 1 1 1]" || fmt.Sprint(stored[model.BackendTRTLLM]) != "[4]" {
		t.Fatalf("blocks per stored event: vllm %v (want one per chunk), trtllm %v (want all four at once)", stored[model.BackendVLLM], stored[model.BackendTRTLLM])
	}
}

// Without chunked prefill TensorRT-LLM refuses a prompt longer than max_num_tokens; the other
// requests are served.
func TestTRTLLMRefusesPromptsOverMaxNumTokens(t *testing.T) {
	tr := &trace.Trace{Name: "long", BlockSize: 64, Requests: []trace.Request{req(0, 128, 2, 1, 2), req(0, 300, 2, 3, 4, 5, 6, 7)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 256, 8)}
	cfg.Worker.Backend = model.BackendTRTLLM
	served, rejected, err := cfg.Admit(tr)
	if err != nil || len(served) != 1 || len(rejected) != 1 || rejected[0].First != "long:2" {
		t.Fatalf("served %v, rejected %+v, err %v", served, rejected, err)
	}
	cfg.Scheduler.TRTLLMChunkedPrefill = true
	if served, _, _ := cfg.Admit(tr); len(served) != 2 {
		t.Fatalf("with chunked prefill %d served, want 2", len(served))
	}
}

// A request SGLang's memory budget refuses latches the batch full: no prefill is tried again
// until a running request leaves, although the decaying new_token_ratio would admit it ~200
// decode steps later. Request 1 (64 + 1100 tokens) arrives while request 0 (64 + 2000) runs
// on 40 pages: it waits for request 0's completion.
func TestSGLangRefusalLatchesUntilARequestLeaves(t *testing.T) {
	tr := &trace.Trace{Name: "latch", BlockSize: 64, Requests: []trace.Request{
		req(0, 64, 2000, 1), req(1, 64, 1100, 2),
	}}
	cfg := Config{Workers: 1, Worker: deployment(40, 1024, 8)}
	cfg.Worker.Backend = model.BackendSGLang
	s, _ := runScripted(t, cfg, &fakeTimer{base: 100, perToken: 1}, tr)
	if r0, r1 := s.reqs[0], s.reqs[1]; r1.firstTok <= r0.done {
		t.Fatalf("request 1's first token at %d µs, before request 0 left at %d µs", r1.firstTok, r0.done)
	}
}

// SGLang's --scheduler-recv-interval 30: a request arriving at 1 ms while another decodes is
// taken off the socket only at the 30th decode batch after the last receive (the first batch
// after the prefill, at 164 µs; each decode 101 µs), so its prefill runs at 3,194 µs and its
// first token comes at 3,358 µs; without the interval the prefill follows the decode in
// progress (ending at 1,073 µs) and the first token comes at 1,237 µs.
func TestSGLangRecvIntervalDefersArrivals(t *testing.T) {
	tr := &trace.Trace{Name: "recv", BlockSize: 64, Requests: []trace.Request{
		req(0, 64, 2000, 1), req(1, 64, 4, 2),
	}}
	for _, c := range []struct{ interval, firstTok int64 }{{0, 1237}, {1, 1237}, {30, 3358}} {
		cfg := Config{Workers: 1, Worker: deployment(100, 1024, 8)}
		cfg.Worker.Backend = model.BackendSGLang
		cfg.Scheduler.SGLangRecvInterval = int(c.interval)
		s, _ := runScripted(t, cfg, &fakeTimer{base: 100, perToken: 1}, tr)
		if got := s.reqs[1].firstTok; got != c.firstTok {
			t.Errorf("recv interval %d: request 1's first token at %d µs, want %d", c.interval, got, c.firstTok)
		}
	}
}

// TensorRT-LLM's batch waiting (batch_wait_timeout_iters 10, batch_wait_max_tokens_ratio
// 0.9 of a 1,024-token step): a 64-token prompt arriving while another request decodes is
// held back for 10 decode steps of 101 µs, then runs; a 960-token prompt, which with the
// decode's token reaches 0.9 × 1,024, runs at once. Without generation requests nothing
// waits.
func TestTRTLLMBatchWaitHoldsContexts(t *testing.T) {
	first := func(in int, wait bool, decoding bool) int64 {
		ids := make([]int64, (in+63)/64)
		for i := range ids {
			ids[i] = int64(10 + i)
		}
		rs := []trace.Request{req(1, in, 2, ids...)}
		if decoding {
			rs = append([]trace.Request{req(0, 64, 2000, 1)}, rs...)
		}
		cfg := Config{Workers: 1, Worker: deployment(100, 1024, 8)}
		cfg.Worker.Backend = model.BackendTRTLLM
		if wait {
			cfg.Scheduler.TRTLLMBatchWaitTimeoutIters, cfg.Scheduler.TRTLLMBatchWaitMaxTokensRatio = 10, 0.9
		}
		s, _ := runScripted(t, cfg, &fakeTimer{base: 100, perToken: 1}, &trace.Trace{Name: "wait", BlockSize: 64, Requests: rs})
		return s.reqs[len(rs)-1].firstTok
	}
	if held, now := first(64, true, true), first(64, false, true); held-now != 1010 {
		t.Errorf("64-token prompt: first token at %d µs with batch waiting, %d without; want 10 steps of 101 µs later", held, now)
	}
	if held, now := first(960, true, true), first(960, false, true); held != now {
		t.Errorf("960-token prompt: first token at %d µs with batch waiting, %d without; want no wait", held, now)
	}
	if held, now := first(64, true, false), first(64, false, false); held != now {
		t.Errorf("alone: first token at %d µs with batch waiting, %d without; want no wait", held, now)
	}
}
