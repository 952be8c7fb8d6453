package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// fakeTimer prices a step at base + perToken × (prefill tokens + decodes): hand-computable.
// It records every batch it priced.
type fakeTimer struct {
	base, perToken int64
	batches        []model.Batch
	record         bool
}

func (f *fakeTimer) StepTimeUS(b *model.Batch) int64 {
	tok := int64(b.Decodes)
	for _, c := range b.Prefill {
		tok += int64(c.NewTokens)
	}
	if f.record {
		f.batches = append(f.batches, model.Batch{
			Prefill: append([]model.Chunk(nil), b.Prefill...), Decodes: b.Decodes, DecodeContextTokens: b.DecodeContextTokens,
		})
	}
	return f.base + f.perToken*tok
}

// fixedRouter sends request id to worker id modulo workers and records the KV events.
type fixedRouter struct {
	workers int
	events  []router.KVEvent
}

func (f *fixedRouter) Route(r *router.Request) int { return int(r.ID) % f.workers }
func (f *fixedRouter) FirstToken(id int64)         {}
func (f *fixedRouter) Finished(id int64)           {}
func (f *fixedRouter) Apply(ev router.KVEvent) {
	f.events = append(f.events, router.KVEvent{Worker: ev.Worker, Kind: ev.Kind, Hashes: slices.Clone(ev.Hashes)})
}

func deployment(blocks, budget, seqs int) model.Deployment {
	return model.Deployment{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs, BlockSize: 64, NumGPUBlocks: blocks}
}

func req(ts int64, in, out int, ids ...int64) trace.Request {
	return trace.Request{TimestampMS: ts, InputLength: in, OutputLength: out, HashIDs: ids}
}

// runScripted runs a one-worker-per-id-modulo simulation to the end in both loop modes,
// checks they agree, and returns the step-by-step one.
func runScripted(t *testing.T, cfg Config, timer model.StepTimer, tr *trace.Trace) (*Sim, *fixedRouter) {
	t.Helper()
	if _, err := cfg.validate(timer, tr); err != nil {
		t.Fatal(err)
	}
	var outs [2]string
	var sims [2]*Sim
	var rts [2]*fixedRouter
	for i, stepwise := range []bool{true, false} {
		rt := &fixedRouter{workers: cfg.Workers}
		s := newSim(cfg, timer, tr, rt)
		s.stepwise = stepwise
		rep, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = reportJSON(t, rep)
		sims[i], rts[i] = s, rt
	}
	if outs[0] != outs[1] {
		t.Fatalf("fast path differs from step-by-step:\n%s\n%s", outs[0], outs[1])
	}
	if !slices.EqualFunc(rts[0].events, rts[1].events, eventEq) {
		t.Fatalf("KV events differ between loop modes")
	}
	return sims[0], rts[0]
}

func eventEq(a, b router.KVEvent) bool {
	return a.Worker == b.Worker && a.Kind == b.Kind && slices.Equal(a.Hashes, b.Hashes)
}

// reportJSON is the report without wall time, for comparisons.
func reportJSON(t interface{ Fatal(...any) }, rep *Report) string {
	c := *rep
	c.Summary.WallTimeMS = 0
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func records(s *Sim) map[int]RequestRecord {
	m := map[int]RequestRecord{}
	for _, r := range s.Report().Requests {
		m[r.ID] = r
	}
	return m
}

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

// A prompt of exactly two cached blocks reuses only one: the last token is computed.
func TestPrefixHitLeavesLastToken(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{req(0, 128, 1, 5), req(0, 128, 1, 5)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 1024, 8), ReplayConcurrency: 1, RecordRequests: true}
	s, _ := runScripted(t, cfg, timer, tr)
	recs := records(s)
	// A: 128 tokens → 228 µs. B arrives at 228, hits 1 block, computes 64 → 164 µs.
	if recs[1].CachedTokens != 64 || recs[1].ArrivalMS != 0.228 || recs[1].E2EMS != 0.164 {
		t.Errorf("second request %+v", recs[1])
	}
	if got := s.Report().Summary.PrefixCacheReusedRatio; got != 0.25 {
		t.Errorf("reused ratio %v, want 64/256", got)
	}
}

// With prefix caching off (--no-enable-prefix-caching) the same pair of prompts shares
// nothing: the second computes all 128 tokens and no block is published to the router.
func TestNoPrefixCaching(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{req(0, 128, 1, 5), req(0, 128, 1, 5)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 1024, 8), ReplayConcurrency: 1, RecordRequests: true}
	cfg.Worker.NoPrefixCaching = true
	s, rt := runScripted(t, cfg, timer, tr)
	recs := records(s)
	if recs[1].CachedTokens != 0 || recs[1].E2EMS != 0.228 {
		t.Errorf("second request %+v, want no hit and a full 228 µs prefill", recs[1])
	}
	if got := s.Report().Summary.PrefixCacheReusedRatio; got != 0 {
		t.Errorf("reused ratio %v, want 0", got)
	}
	for _, ev := range rt.events {
		if ev.Kind == router.BlocksStored {
			t.Fatalf("stored event %+v with prefix caching off", ev)
		}
	}
}

// Two requests on a 4-block pool: the second is preempted when the first needs a third
// block, waits (its recompute needs 2 new blocks, none free) until the first completes,
// then recomputes prompt plus generated tokens, reusing its cached first block.
func TestPreemptionTinyPool(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{req(0, 100, 60, 1), req(0, 100, 60, 2)}}
	cfg := Config{Workers: 1, Worker: deployment(4, 1024, 8), ReplayConcurrency: 2, RecordRequests: true}
	s, rt := runScripted(t, cfg, timer, tr)
	recs := records(s)
	// Prefill both: 300. 28 decodes of both (102 each) reach 128 computed tokens: 3156.
	// A alone for its 31 remaining tokens (101 each): done at 6287. B recomputes 129
	// tokens minus its 64 cached: 165 → 6452 (its 30th token), 30 more decodes → 9482.
	a, b := recs[0], recs[1]
	if a.TTFTMS != 0.3 || a.E2EMS != 6.287 || a.Preemptions != 0 {
		t.Errorf("A %+v", a)
	}
	if b.TTFTMS != 0.3 || b.E2EMS != 9.482 || b.Preemptions != 1 || b.CachedTokens != 0 {
		t.Errorf("B %+v", b)
	}
	sum := s.Report().Summary
	if w := sum.Workers[0]; w.Preemptions != 1 || w.PeakBlocks != 4 {
		t.Errorf("worker %+v", w)
	}
	// 118 gaps: 61 of 101 µs, 56 of 102 µs, and B's wait from its 29th token (3156) to
	// its 30th (6452), 3296 µs. Nearest rank 117 of 118 is 102; the mean 15169/118 µs.
	if sum.P99ITLMS != 0.102 || sum.MeanITLMS != 0.129 || s.itl.over != nil || s.itl.count(3296) != 1 {
		t.Errorf("ITL p99 %v mean %v", sum.P99ITLMS, sum.MeanITLMS)
	}
	for _, ev := range rt.events {
		if ev.Kind == router.BlocksRemoved {
			t.Errorf("unexpected eviction %+v", ev)
		}
	}
}

// Four blocks, one request at a time, trace blocks of 64 tokens: cached blocks are evicted
// least recently freed first, each request's tail block before its head.
func TestLRUEvictionOrder(t *testing.T) {
	timer := &fakeTimer{base: 10, perToken: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{
		req(0, 128, 1, 10, 11), req(0, 128, 1, 20, 21), req(0, 128, 1, 30, 31), req(0, 128, 1, 20, 21),
	}}
	cfg := Config{Workers: 1, Worker: deployment(4, 1024, 8), ReplayConcurrency: 1, RecordRequests: true}
	s, rt := runScripted(t, cfg, timer, tr)
	h := func(ids ...int64) []uint64 { return blockHashes(nil, ids, 0, 64*len(ids), 64, 64) }
	r0, r1, r2 := h(10, 11), h(20, 21), h(30, 31)
	want := []router.KVEvent{
		{Kind: router.BlocksStored, Hashes: r0},
		{Kind: router.BlocksStored, Hashes: r1},
		{Kind: router.BlocksRemoved, Hashes: []uint64{r0[1], r0[0]}},
		{Kind: router.BlocksStored, Hashes: r2},
		// The fourth request hits r1[0] only (its last token must be computed) and needs one
		// block: the LRU head is r1[1].
		{Kind: router.BlocksRemoved, Hashes: []uint64{r1[1]}},
		{Kind: router.BlocksStored, Hashes: []uint64{r1[1]}},
	}
	if !slices.EqualFunc(rt.events, want, eventEq) {
		t.Fatalf("events\n%+v\nwant\n%+v", rt.events, want)
	}
	if c := records(s)[3].CachedTokens; c != 64 {
		t.Errorf("fourth request cached %d, want 64", c)
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

func TestConfigErrors(t *testing.T) {
	tr := &trace.Trace{Name: "x.jsonl", BlockSize: 512, Requests: []trace.Request{req(0, 100, 1, 1)}}
	timer := &fakeTimer{base: 1}
	good := Config{Workers: 1, Worker: deployment(100, 1024, 8), ReplayConcurrency: 1}
	cases := []struct {
		mut  func(*Config, *trace.Trace)
		want string
	}{
		{func(c *Config, _ *trace.Trace) { c.Worker.NumGPUBlocks = 0 }, "num_gpu_blocks"},
		{func(c *Config, _ *trace.Trace) { c.Workers = 0 }, "workers"},
		{func(c *Config, _ *trace.Trace) { c.Worker.MaxNumSeqs = 0 }, "max_num_seqs"},
		{func(c *Config, _ *trace.Trace) { c.ArrivalSpeedupRatio = -1 }, "arrival_speedup_ratio"},
		{func(c *Config, _ *trace.Trace) { c.Router.BlockSize = 32 }, "block_size"},
		{func(c *Config, _ *trace.Trace) { c.Worker.NumGPUBlocks = 1 }, "x.jsonl: all 1 requests rejected: needs more KV blocks than a worker's 1 (first: x.jsonl:1)"},
		{func(_ *Config, t *trace.Trace) { t.Requests[0].OutputLength = 0 }, "x.jsonl:1: output_length"},
		{func(_ *Config, t *trace.Trace) { t.Requests[0].HashIDs = nil }, "x.jsonl:1: hash_ids"},
		{func(c *Config, _ *trace.Trace) { c.Worker.ContextLength = 50 }, "all 1 requests rejected: input_length + output_length exceeds context_length 50"},
		{func(c *Config, _ *trace.Trace) { c.Worker.ContextLength, c.Strict = 50, true },
			"x.jsonl:1: input_length 100 + output_length 1 = 101 exceeds context_length 50 (strict"},
		{func(_ *Config, t *trace.Trace) { t.Requests = nil }, "x.jsonl: no requests to replay"},
		{func(c *Config, t *trace.Trace) { c.ReplayConcurrency, t.Requests[0].TimestampMS = 0, 1<<60 }, "x.jsonl:1: timestamp: 1152921504606846976 ms"},
		{func(c *Config, t *trace.Trace) {
			c.ReplayConcurrency, c.ArrivalSpeedupRatio, t.Requests[0].TimestampMS = 0, 1e-12, 1e9
		},
			"x.jsonl:1: timestamp: 1000000000 ms / arrival_speedup_ratio 1e-12 is beyond the simulation clock"},
	}
	for _, tc := range cases {
		c := good
		c.Router = router.DefaultConfig()
		tt := *tr
		tt.Requests = slices.Clone(tr.Requests)
		tc.mut(&c, &tt)
		_, err := New(c, timer, &tt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v", tc.want, err)
		}
	}
}

func TestWriteRequests(t *testing.T) {
	var buf bytes.Buffer
	recs := []RequestRecord{{ID: 3, Worker: 1, ArrivalMS: 0.5, TTFTMS: 1.25, E2EMS: 2, InputLength: 10, OutputLength: 2, CachedTokens: 0}}
	if err := WriteRequests(&buf, recs); err != nil {
		t.Fatal(err)
	}
	want := `{"id":3,"worker":1,"arrival_ms":0.5,"ttft_ms":1.25,"e2e_latency_ms":2,"input_length":10,"output_length":2,"cached_tokens":0,"preemptions":0}` + "\n"
	if buf.String() != want {
		t.Errorf("got %s", buf.String())
	}
}

func TestSummaryKeys(t *testing.T) {
	b, err := json.Marshal(Summary{Workers: []WorkerSummary{{}}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := []string{"requests_completed", "requests_rejected", "duration_ms", "wall_time_ms", "request_throughput_req_s", "output_throughput_tok_s",
		"input_throughput_tok_s", "prefix_cache_reused_ratio", "mean_output_tok_s_per_user", "workers"}
	for _, p := range []string{"mean_", "p50_", "p90_", "p99_"} {
		for _, k := range []string{"ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms"} {
			keys = append(keys, p+k)
		}
	}
	if len(m) != len(keys) {
		t.Errorf("summary has %d keys, want %d: %s", len(m), len(keys), b)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %s", k)
		}
	}
	w := m["workers"].([]any)[0].(map[string]any)
	for _, k := range []string{"requests", "prompt_tokens", "reused_tokens", "peak_blocks", "preemptions"} {
		if _, ok := w[k]; !ok {
			t.Errorf("missing worker key %s", k)
		}
	}
}

func TestPercentileNearestRank(t *testing.T) {
	v := []int64{5000, 1000, 4000, 2000, 3000}
	mean, p50, p90, p99 := intStats(v)
	if mean != 3 || p50 != 3 || p90 != 5 || p99 != 5 {
		t.Errorf("got %v %v %v %v", mean, p50, p90, p99)
	}
	var h gapHist
	h.add(10, 3)
	h.add(2_000_000, 1)
	mean, p50, p90, p99 = h.stats()
	if p50 != 0.01 || p90 != 2000 || p99 != 2000 || mean != 500.008 {
		t.Errorf("hist got %v %v %v %v", mean, p50, p90, p99)
	}
}

// Snapshots of the chunked-prefill timeline (steps end at 228, 400, 501, 602 µs); none
// after the last completion.
func TestSnapshots(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{req(0, 200, 3, 7)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 128, 8), ReplayConcurrency: 1, SnapshotEveryUS: 250}
	for _, stepwise := range []bool{true, false} {
		s := newSim(cfg, timer, tr, &fixedRouter{workers: 1})
		s.stepwise = stepwise
		rep, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := []Snapshot{
			{TimeUS: 250, Workers: []WorkerSnapshot{{ActiveBlocks: 4, QueuedPrefillTokens: 72, Running: 1}}},
			{TimeUS: 500, Workers: []WorkerSnapshot{{ActiveBlocks: 4, Running: 1, Decoding: 1}}}, // first token at 400
		}
		got := rep.Snapshots
		if len(got) != len(want) {
			t.Fatalf("snapshots %+v", got)
		}
		for i := range want {
			if got[i].TimeUS != want[i].TimeUS || got[i].Completed != want[i].Completed || got[i].Workers[0] != want[i].Workers[0] {
				t.Errorf("stepwise=%v snapshot %d: %+v, want %+v", stepwise, i, got[i], want[i])
			}
		}
	}
}

// RunUntil in slices gives the same report as Run; a cancelled context stops Run.
func TestRunUntilAndCancel(t *testing.T) {
	tr := syntheticTrace(200, 9)
	cfg, mw := seedConfig(t)
	cfg.SnapshotEveryUS = 100_000
	whole, err := Replay(context.Background(), cfg, mw, tr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, mw, tr)
	if err != nil {
		t.Fatal(err)
	}
	prev := int64(0)
	for tUS := int64(0); !s.RunUntil(tUS); tUS += 37_000 {
		if s.Now() < prev || s.Now() != tUS {
			t.Fatalf("Now %d after RunUntil(%d)", s.Now(), tUS)
		}
		prev = s.Now()
	}
	if a, b := reportJSON(t, whole), reportJSON(t, s.Report()); a != b {
		i := 0
		for i < min(len(a), len(b)) && a[i] == b[i] {
			i++
		}
		t.Fatalf("RunUntil slices differ from Run at byte %d:\n%s\n%s", i, a[max(0, i-300):min(len(a), i+100)], b[max(0, i-300):min(len(b), i+100)])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Replay(ctx, cfg, mw, tr); err == nil {
		t.Fatal("cancelled run returned no error")
	}
}

// Engine blocks are shared exactly as far as the trace blocks they end in are.
func TestBlockHashesShareTraceBlocks(t *testing.T) {
	same := func(a, b []uint64) int {
		n := 0
		for n < min(len(a), len(b)) && a[n] == b[n] {
			n++
		}
		return n
	}
	a := blockHashes(nil, []int64{1, 2, 3}, 0, 1536, 64, 512)
	b := blockHashes(nil, []int64{1, 2, 4}, 0, 1536, 64, 512)
	if len(a) != 24 || same(a, b) != 16 {
		t.Errorf("512/64: %d blocks, %d shared; want 24 and 16", len(a), same(a, b))
	}
	if p := blockHashes(nil, []int64{1, 2, 3}, 0, 1000, 64, 512); len(p) != 15 || same(p, a) != 15 {
		t.Errorf("partial prompt: %d blocks, %d shared with the full one", len(p), same(p, a))
	}
	// Trace blocks of 100 tokens: engine blocks end at tokens 63, 127, 191, 255, i.e. in
	// trace blocks 0, 1, 1, 2.
	c := blockHashes(nil, []int64{1, 2, 3}, 0, 300, 64, 100)
	d := blockHashes(nil, []int64{1, 2, 9}, 0, 300, 64, 100)
	if len(c) != 4 || same(c, d) != 3 {
		t.Errorf("100/64: %d blocks, %d shared; want 4 and 3", len(c), same(c, d))
	}
	// Same ids at another position are different content.
	if e := blockHashes(nil, []int64{2, 1}, 0, 1024, 64, 512); same(e, a) != 0 || slices.Contains(a, e[8]) {
		t.Error("position-independent hashes")
	}
	for _, h := range append(a, c...) {
		if h == 0 {
			t.Fatal("zero hash")
		}
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

// Twenty 96k-token prompts resident at once (each still decoding when the last one has
// prefilled) on one seed worker need 1.97 M tokens of KV: more than a BF16 cache holds
// (1.67 M), less than an FP8 one (3.34 M). With BF16 the worker runs out of blocks and
// preempts; with FP8 the same replay runs without a single preemption.
func TestFP8CacheHoldsWhatBF16Cannot(t *testing.T) {
	const n, isl = 20, 96 * 1024
	reqs := make([]trace.Request, n)
	next := int64(0)
	for i := range reqs {
		ids := make([]int64, isl/512)
		for j := range ids {
			ids[j] = next
			next++
		}
		reqs[i] = req(0, isl, 200, ids...) // long enough that all twenty are decoding at once
	}
	tr := &trace.Trace{Name: "long prompts", BlockSize: 512, Requests: reqs}
	preemptions := map[string]int{}
	for _, dt := range []string{model.KVFP8, model.KVBF16} {
		d := model.SeedDeployment()
		d.KVCacheDtype = dt
		w, err := model.NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		d.NumGPUBlocks = w.Capacity().NumGPUBlocks
		if fits := d.NumGPUBlocks*d.BlockSize >= n*isl; fits != (dt == model.KVFP8) {
			t.Fatalf("%s: %d tokens of cache for %d of prompts: the premise does not hold", dt, d.NumGPUBlocks*d.BlockSize, n*isl)
		}
		rep, err := Replay(context.Background(), Config{Workers: 1, Worker: d, Router: router.DefaultConfig(), ReplayConcurrency: n}, w, tr)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Summary.RequestsCompleted != n {
			t.Fatalf("%s: %d of %d requests completed", dt, rep.Summary.RequestsCompleted, n)
		}
		preemptions[dt] = rep.Summary.Workers[0].Preemptions
	}
	if preemptions[model.KVFP8] != 0 || preemptions[model.KVBF16] == 0 {
		t.Fatalf("preemptions %v: want none with FP8, some with BF16", preemptions)
	}
}

// The per-user output rate is the mean of 1 ÷ gap over gaps longer than zero, the dense and
// the long ones alike: gaps of 0, 10 ms, 10 ms and 100 ms give (100 + 100 + 10) ÷ 3 tok/s.
func TestGapHistPerUser(t *testing.T) {
	var h gapHist
	if got := h.perUser(); got != 0 {
		t.Errorf("empty histogram: %v, want 0", got)
	}
	h.add(0, 1)
	h.add(10_000, 2)
	h.add(100_000, 1)
	if got := h.perUser(); math.Abs(got-70) > 1e-9 {
		t.Errorf("got %v tok/s, want 70", got)
	}
}
