package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

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
