package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/kvtier"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// tierConfig: 140,000-byte blocks over 14 GB/s links take 10 µs each.
func tierConfig() *kvtier.Config {
	return &kvtier.Config{NumG2Blocks: 16, BlockBytes: 140_000, G1ToG2GBps: 14, G2ToG1GBps: 14, OffloadBatchSize: 32}
}

// A prefix the GPU cache evicted comes back from G2: the fourth request onboards its two
// blocks (20 µs) and computes only its third block (64 tokens: 10 + 64 µs), where without
// tiers it recomputes all 192 tokens (10 + 192 µs).
func TestOnboardFromG2(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{
		req(0, 128, 1, 10, 11), req(0, 128, 1, 20, 21), req(0, 128, 1, 30, 31), req(0, 192, 1, 10, 11, 12),
	}}
	for _, tc := range []struct {
		tiers    *kvtier.Config
		ttft     float64
		g2Ratio  float64
		tierEvts bool
	}{{nil, 0.202, 0, false}, {tierConfig(), 0.094, 128.0 / 576, true}} {
		cfg := Config{Workers: 1, Worker: deployment(4, 1024, 8), ReplayConcurrency: 1, RecordRequests: true, KVTiers: tc.tiers}
		s := newSim(cfg, &fakeTimer{base: 10, perToken: 1}, tr, &fixedRouter{workers: 1})
		tierEvents := 0
		s.onKV = func(ev router.KVEvent) {
			if ev.Tier != router.TierDevice {
				tierEvents++
			}
		}
		rep, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Requests[3].TTFTMS; got != tc.ttft {
			t.Errorf("tiers %v: fourth request's TTFT %v ms, want %v", tc.tiers != nil, got, tc.ttft)
		}
		if (tierEvents > 0) != tc.tierEvts {
			t.Errorf("tiers %v: %d tier events", tc.tiers != nil, tierEvents)
		}
		kt := rep.Summary.KVTiers
		if (kt != nil) != (tc.tiers != nil) {
			t.Fatalf("kv_tiers in the summary: %v", kt)
		}
		if kt == nil {
			continue
		}
		if kt.G2HitRatio != round(tc.g2Ratio, 6) || kt.Onboards != 1 || kt.OnboardedG2Blocks != 2 || kt.MeanOnboardMS != 0.02 {
			t.Errorf("kv_tiers %+v", *kt)
		}
	}
}

// With room for every prefix in the GPU cache, nothing is evicted, so tiers change nothing
// but the report's kv_tiers block.
func TestTiersIdleWithoutPressure(t *testing.T) {
	tr, err := trace.Load("builtin:toolagent", 512)
	if err != nil {
		t.Fatal(err)
	}
	tr = tr.First(300)
	cfg, mw := seedConfig(t)
	var out [2]string
	for i, tiers := range []*kvtier.Config{nil, tierConfig()} {
		cfg.KVTiers = tiers
		if tiers != nil {
			w := router.DefaultTierWeights()
			cfg.Router.Tiers = &w
		}
		rep, err := Replay(context.Background(), cfg, mw, tr)
		if err != nil {
			t.Fatal(err)
		}
		if kt := rep.Summary.KVTiers; kt != nil && (kt.OffloadedBlocks != 0 || kt.Onboards != 0) {
			t.Fatalf("tiers moved blocks without memory pressure: %+v", *kt)
		}
		rep.Summary.KVTiers = nil
		out[i] = reportJSON(t, rep)
	}
	if out[0] != out[1] {
		t.Fatalf("tiers changed a replay without memory pressure:\n%s\n%s", out[0], out[1])
	}
}

// The tiers hook into vLLM's scheduler only: SGLang and TensorRT-LLM workers with tiers are
// refused by the key's name and the backend's, not replayed without them.
func TestTiersRefusedOffVLLM(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 128, 1, 10, 11)}}
	for _, b := range []model.Backend{model.BackendSGLang, model.BackendTRTLLM} {
		cfg := Config{Workers: 1, Worker: deployment(4, 1024, 8), Router: router.DefaultConfig(), ReplayConcurrency: 1, KVTiers: tierConfig()}
		cfg.Worker.Backend = b
		_, err := New(cfg, &fakeTimer{base: 10, perToken: 1}, tr)
		if err == nil || !strings.Contains(err.Error(), "num_g2_blocks") || !strings.Contains(err.Error(), string(b)) {
			t.Errorf("%s with tiers: %v", b, err)
		}
		cfg.KVTiers = nil
		if _, err := New(cfg, &fakeTimer{base: 10, perToken: 1}, tr); err != nil {
			t.Errorf("%s without tiers: %v", b, err)
		}
	}
}

// Two requests onboarding together share the G2→G1 link: each of their two blocks would
// take 20 µs alone, shared both end at 40 µs (FIFO would end them at 20 and 40 µs). The
// first one's end, due at 20 µs when it started, is put off by the second; the worker is
// woken again at the new end.
func TestOnboardsShareTheLink(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{
		// A 6-block GPU cache: D and E' evict A's and B's prefixes to G2.
		req(0, 128, 1, 10, 11), req(1, 128, 1, 20, 21), req(2, 128, 1, 30, 31), req(3, 128, 1, 40, 41), req(4, 128, 1, 50, 51),
		req(10, 192, 1, 10, 11, 12), req(10, 192, 1, 20, 21, 22),
	}}
	cfg := Config{Workers: 1, Worker: deployment(6, 1024, 8), RecordRequests: true, KVTiers: tierConfig()}
	s := newSim(cfg, &fakeTimer{base: 10, perToken: 1}, tr, &fixedRouter{workers: 1})
	rep, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kt := rep.Summary.KVTiers
	if kt.Onboards != 2 || kt.OnboardedG2Blocks != 4 || kt.MeanOnboardMS != 0.04 {
		t.Fatalf("kv_tiers %+v: want 2 onboards of 2 blocks each, both waiting 40 µs", *kt)
	}
	if a, b := rep.Requests[5].TTFTMS, rep.Requests[6].TTFTMS; a != b {
		t.Errorf("the two onboarding requests' TTFTs differ: %v and %v ms", a, b)
	}
}
