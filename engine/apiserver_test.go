package engine

import (
	"slices"
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/trace"
)

// A lone text prompt reaches the engine after the tokenizer's 2 ms batch window and its own
// tokenisation, ⌈isl × ns / 1000⌉ µs; TTFT still counts from its arrival. With 0 ns it
// reaches the engine at once.
func TestAPIServerTokenizationDelaysTheEngine(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 1000, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)}}
	var firstStart []int64
	for _, ns := range []int{0, 1340} {
		cfg := Config{Workers: 1, Worker: deployment(64, 4096, 8), ReplayConcurrency: 1, RecordRequests: true}
		cfg.Worker.APIServerTokenizeNS = ns
		var start int64 = -1
		var s *Sim
		timer := timerFunc(func(b *model.Batch) int64 {
			if start < 0 {
				start = s.now
			}
			return 500
		})
		s = newSim(cfg, timer, tr, &fixedRouter{workers: 1})
		rep, err := s.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		firstStart = append(firstStart, start)
		// Prefill step then one decode: TTFT = tokenisation + 500 µs.
		if want := float64(start+500) / 1000; rep.Requests[0].TTFTMS != want {
			t.Fatalf("ns %d: TTFT %.3f ms, want %.3f", ns, rep.Requests[0].TTFTMS, want)
		}
	}
	if firstStart[0] != 0 || firstStart[1] != tokenizerWindowUS+1340 {
		t.Fatalf("first step starts at %v µs, want [0 %d]", firstStart, tokenizerWindowUS+1340)
	}
}

// The tokenizer is one thread behind one batcher: prompts arriving within a batch's 2 ms
// window join it, are tokenised in one call and reach the engine together when it returns
// (serial: one after another; parallel: as long as the longest); a prompt arriving while the
// thread is busy waits for it and then opens the next window; once idle, a prompt opens its
// own.
func TestAPIServerTokenizerQueues(t *testing.T) {
	const ns = 10_000 // 10 µs a token: 1,000 tokens take 10 ms
	tr := &trace.Trace{Name: "t", BlockSize: 1024, Requests: []trace.Request{
		req(0, 1000, 2, 1), req(1, 1000, 2, 2), // one window: both reach the engine at 22 ms (parallel: 12)
		req(5, 1000, 2, 3),   // thread busy until 22 ms: window 22–24, engine at 34 ms (12–14, 24)
		req(100, 1000, 2, 4), // idle: window 100–102, engine at 112 ms
	}}
	for _, c := range []struct {
		batching string
		want     []int64
	}{
		{"", []int64{22_000, 34_000, 112_000}},
		{model.TokenizeSerial, []int64{22_000, 34_000, 112_000}},
		{model.TokenizeParallel, []int64{12_000, 24_000, 112_000}},
	} {
		if starts, first := tokenizerPrefillStarts(t, tr, ns, c.batching); first != 2 || !slices.Equal(starts, c.want) {
			t.Fatalf("%q: prefill steps start at %v µs, the first holding %d prompts; want %v, the window's 2", c.batching, starts, first, c.want)
		}
	}
}

// SGLang's TokenizerManager has no batch window: a prompt is tokenised the moment it arrives
// if the thread is idle, else right after the prompts before it, and each reaches the engine
// alone when its own tokenisation ends — the same trace as TestAPIServerTokenizerQueues
// reaches it at 10 and 20 ms (not together at 22), 30 ms and 110 ms (not 112).
func TestAPIServerTokenizerEachOnArrival(t *testing.T) {
	const ns = 10_000
	tr := &trace.Trace{Name: "t", BlockSize: 1024, Requests: []trace.Request{
		req(0, 1000, 2, 1), req(1, 1000, 2, 2), req(5, 1000, 2, 3), req(100, 1000, 2, 4),
	}}
	if starts, first := tokenizerPrefillStarts(t, tr, ns, model.TokenizeEach); first != 1 || !slices.Equal(starts, []int64{10_000, 20_000, 30_000, 110_000}) {
		t.Fatalf("prefill steps start at %v µs, the first holding %d prompts; want [10000 20000 30000 110000], one prompt", starts, first)
	}
}

// tokenizerPrefillStarts replays tr on one worker whose API server tokenises at ns per token
// with the given batching, and returns when each prefill step started and how many prompts
// the first held.
func tokenizerPrefillStarts(t *testing.T, tr *trace.Trace, ns int, batching string) ([]int64, int) {
	t.Helper()
	cfg := Config{Workers: 1, Worker: deployment(4096, 8192, 8), RecordRequests: true}
	cfg.Worker.APIServerTokenizeNS, cfg.Worker.APIServerTokenizeBatching = ns, batching
	var s *Sim
	var starts []int64
	var first int
	timer := timerFunc(func(b *model.Batch) int64 {
		if len(b.Prefill) > 0 {
			if len(starts) == 0 {
				first = len(b.Prefill)
			}
			starts = append(starts, s.now)
		}
		return 100
	})
	s = newSim(cfg, timer, tr, &fixedRouter{workers: 1})
	if _, err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	return starts, first
}

// A batch holds at most 32 prompts: the 32nd closes it at once (the batcher stops collecting),
// so a burst of 33 prompts at t = 0 reaches the engine as 32 together after 32 prompts'
// tokenisation (parallel: one prompt's), and the 33rd after a window of its own opened when
// the thread is free.
func TestAPIServerTokenizerBatchCap(t *testing.T) {
	for _, batching := range []string{model.TokenizeSerial, model.TokenizeParallel} {
		call := int64(tokenizerMaxBatch * 1000) // 1 µs a token, 1,000 tokens a prompt
		if batching == model.TokenizeParallel {
			call = 1000
		}
		testTokenizerBatchCap(t, batching, call)
	}
}

func testTokenizerBatchCap(t *testing.T, batching string, full int64) {
	const ns = 1_000 // 1 µs a token: 1,000 tokens take 1 ms
	var reqs []trace.Request
	for i := range tokenizerMaxBatch + 1 {
		reqs = append(reqs, req(0, 1000, 2, int64(i+1)))
	}
	tr := &trace.Trace{Name: "t", BlockSize: 1024, Requests: reqs}
	cfg := Config{Workers: 1, Worker: deployment(65536, 1<<20, 64), RecordRequests: true}
	cfg.Worker.APIServerTokenizeNS, cfg.Worker.APIServerTokenizeBatching = ns, batching
	var s *Sim
	queued := map[int64]int{} // prefill steps' start → prompts they hold
	timer := timerFunc(func(b *model.Batch) int64 {
		if len(b.Prefill) > 0 {
			queued[s.now] += len(b.Prefill)
		}
		return 100
	})
	s = newSim(cfg, timer, tr, &fixedRouter{workers: 1})
	if _, err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	last := full + tokenizerWindowUS + 1000 // closed at 0 by the 32nd prompt; the 33rd: its own window, then 1 ms
	if queued[full] != tokenizerMaxBatch || queued[last] != 1 || len(queued) != 2 {
		t.Fatalf("%s: prefill steps (start µs → prompts) %v, want %d at %d and 1 at %d", batching, queued, tokenizerMaxBatch, full, last)
	}
}
