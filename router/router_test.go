package router

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// newTest builds a router or fails the test.
func newTest(t testing.TB, cfg Config, workers int) *Router {
	t.Helper()
	r, err := New(cfg, workers, 1)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// kvCosts returns the kv_router cost of req on every worker without booking it.
func kvCosts(r *Router, req *Request) []float64 {
	r.scan(req.BlockHashes)
	k := newKVCost(r.cfg, req)
	costs := make([]float64, r.workers)
	for w := range costs {
		costs[w] = k.cost(&r.load[w], r.overlap[w], r.activePrefix[w])
	}
	return costs
}

// put books req on worker w directly (bypassing the policy) to set up a scenario.
func put(r *Router, w int, req *Request, prefillDone bool) {
	r.scan(req.BlockHashes)
	r.book(w, req)
	if prefillDone {
		r.FirstToken(req.ID)
	}
}

func blocks(from, n int) []uint64 {
	h := make([]uint64, n)
	for i := range h {
		h[i] = uint64(from + i)
	}
	return h
}

func TestRoutePrefersPrefixHolder(t *testing.T) {
	r := newTest(t, DefaultConfig(), 2)
	r.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: []uint64{1, 2, 3}})
	req := &Request{ID: 7, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 4}}
	// w0: 256/64 = 4 prefill + 4 new blocks = 8; w1: 4 − 3 cached = 1 prefill + 4 = 5.
	if got, want := kvCosts(r, req), []float64{8, 5}; !slices.Equal(got, want) {
		t.Fatalf("costs %v, want %v", got, want)
	}
	if w := r.Route(req); w != 1 {
		t.Fatalf("routed to %d, want the prefix holder 1", w)
	}
	if got, want := r.Load(1), (WorkerLoad{InFlight: 1, PrefillTokens: 64, ActiveBlocks: 4}); got != want {
		t.Fatalf("load %+v, want %+v", got, want)
	}
}

func TestCreditZeroIgnoresPrefix(t *testing.T) {
	// Worker 1 caches the prompt's first 3 blocks but already decodes a 2-block request.
	setup := func(credit float64) *Router {
		cfg := DefaultConfig()
		cfg.OverlapScoreCredit = credit
		r := newTest(t, cfg, 2)
		r.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: []uint64{1, 2, 3}})
		put(r, 1, &Request{ID: 100, InputLength: 128, BlockHashes: []uint64{10, 11}}, true)
		return r
	}
	req := &Request{ID: 1, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 4}}

	r := setup(1)
	// w0: 4 prefill + 4 new = 8; w1: (4 − 3) + 2 active + 4 new = 7.
	if got, want := kvCosts(r, req), []float64{8, 7}; !slices.Equal(got, want) {
		t.Fatalf("credit 1: costs %v, want %v", got, want)
	}
	if w := r.Route(req); w != 1 {
		t.Fatalf("credit 1: routed to %d, want 1", w)
	}

	r = setup(0)
	// The cached prefix earns nothing: w1 = 4 + 2 + 4 = 10.
	if got, want := kvCosts(r, req), []float64{8, 10}; !slices.Equal(got, want) {
		t.Fatalf("credit 0: costs %v, want %v", got, want)
	}
	if w := r.Route(req); w != 0 {
		t.Fatalf("credit 0: routed to %d, want 0", w)
	}
	// The booking still uses the real cache hit: worker 0 has none, so all 256 tokens.
	if got := r.Load(0).PrefillTokens; got != 256 {
		t.Fatalf("credit 0: worker 0 prefill tokens %d, want 256", got)
	}
}

func TestScaleZeroRoutesByDecodeLoadOnly(t *testing.T) {
	// Worker 0 is busy prefilling a 10-block prompt; worker 1 decodes a 12-block one.
	setup := func(scale float64) *Router {
		cfg := DefaultConfig()
		cfg.PrefillLoadScale = scale
		r := newTest(t, cfg, 2)
		put(r, 0, &Request{ID: 100, InputLength: 640, BlockHashes: blocks(20, 10)}, false)
		put(r, 1, &Request{ID: 101, InputLength: 768, BlockHashes: blocks(40, 12)}, true)
		return r
	}
	req := &Request{ID: 1, InputLength: 64, BlockHashes: []uint64{1}}

	r := setup(1)
	// w0: (640+64)/64 = 11 prefill + 10 + 1 = 22; w1: 1 + 12 + 1 = 14.
	if got, want := kvCosts(r, req), []float64{22, 14}; !slices.Equal(got, want) {
		t.Fatalf("scale 1: costs %v, want %v", got, want)
	}
	if w := r.Route(req); w != 1 {
		t.Fatalf("scale 1: routed to %d, want 1", w)
	}
	r = setup(0)
	if got, want := kvCosts(r, req), []float64{11, 13}; !slices.Equal(got, want) {
		t.Fatalf("scale 0: costs %v, want %v", got, want)
	}
	if w := r.Route(req); w != 0 {
		t.Fatalf("scale 0: routed to %d, want 0 (fewer decode blocks)", w)
	}
}

func TestDecodeBlocksCountSharedPrefixOnce(t *testing.T) {
	r := newTest(t, DefaultConfig(), 2)
	put(r, 0, &Request{ID: 100, InputLength: 200, BlockHashes: []uint64{1, 2, 3}}, true)
	put(r, 0, &Request{ID: 101, InputLength: 200, BlockHashes: []uint64{1, 2, 9}}, true)
	if got := r.Load(0).ActiveBlocks; got != 4 {
		t.Fatalf("active blocks %d, want 4 distinct ({1,2,3,9})", got)
	}
	req := &Request{ID: 1, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 4}}
	// Nothing cached: both prefill 4. w0 decode = 4 active + 1 new (block 4); w1 = 0 + 4.
	if got, want := kvCosts(r, req), []float64{9, 8}; !slices.Equal(got, want) {
		t.Fatalf("costs %v, want %v", got, want)
	}
	r.Finished(100)
	if got := r.Load(0).ActiveBlocks; got != 3 {
		t.Fatalf("after finishing 100: active blocks %d, want 3 ({1,2,9})", got)
	}
}

func TestRemovedMiddleBlockTruncatesOverlap(t *testing.T) {
	r := newTest(t, DefaultConfig(), 3)
	r.Apply(KVEvent{Worker: 0, Kind: BlocksStored, Hashes: blocks(1, 6)})
	r.Apply(KVEvent{Worker: 2, Kind: BlocksStored, Hashes: blocks(1, 4)})
	out := make([]int, 3)
	r.Overlaps(blocks(1, 6), out)
	if want := []int{6, 0, 4}; !slices.Equal(out, want) {
		t.Fatalf("overlaps %v, want %v", out, want)
	}
	r.Apply(KVEvent{Worker: 0, Kind: BlocksRemoved, Hashes: []uint64{3}})
	r.Overlaps(blocks(1, 6), out)
	if want := []int{2, 0, 4}; !slices.Equal(out, want) {
		t.Fatalf("after evicting block 3 on worker 0: overlaps %v, want %v", out, want)
	}
	// Removing a block nobody holds, or on a worker outside the fleet, changes nothing.
	r.Apply(KVEvent{Worker: 1, Kind: BlocksRemoved, Hashes: []uint64{1, 99}})
	r.Apply(KVEvent{Worker: 7, Kind: BlocksStored, Hashes: []uint64{1}})
	r.Overlaps(blocks(1, 6), out)
	if want := []int{2, 0, 4}; !slices.Equal(out, want) {
		t.Fatalf("after no-op events: overlaps %v, want %v", out, want)
	}
	if got := r.CachedBlocks(); got != 6 {
		t.Fatalf("cached blocks %d, want 6", got)
	}
}

// frequencies routes n copies of req without booking them and counts the choices.
func frequencies(r *Router, req *Request, n int) []int {
	counts := make([]int, r.workers)
	for range n {
		r.scan(req.BlockHashes)
		counts[r.policy.choose(r, req)]++
	}
	return counts
}

// chiSquare is Pearson's statistic of counts against probabilities p.
func chiSquare(counts []int, p []float64) float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	x := 0.0
	for i, c := range counts {
		e := float64(n) * p[i]
		x += (float64(c) - e) * (float64(c) - e) / e
	}
	return x
}

func TestTemperatureSamplingFrequencies(t *testing.T) {
	// Decode loads 0, 5 and 10 blocks; the request adds none and needs no prefill, so the
	// costs are exactly [0 5 10] and normalise to [0 .5 1].
	for _, tc := range []struct {
		temp float64
		want []float64 // exp(−x/T) for x = 0, .5, 1, normalised
	}{
		{0.5, softmax(0, -1, -2)},
		{1, softmax(0, -0.5, -1)},
		{0.2, softmax(0, -2.5, -5)},
	} {
		cfg := DefaultConfig()
		cfg.Temperature = tc.temp
		r := newTest(t, cfg, 3)
		put(r, 1, &Request{ID: 101, InputLength: 320, BlockHashes: blocks(100, 5)}, true)
		put(r, 2, &Request{ID: 102, InputLength: 640, BlockHashes: blocks(200, 10)}, true)
		req := &Request{ID: 1}
		if got, want := kvCosts(r, req), []float64{0, 5, 10}; !slices.Equal(got, want) {
			t.Fatalf("T=%v: costs %v, want %v", tc.temp, got, want)
		}
		counts := frequencies(r, req, 60000)
		// 2 degrees of freedom: P(χ² > 13.8) = 0.001.
		if x := chiSquare(counts, tc.want); x > 13.8 {
			t.Errorf("T=%v: counts %v vs p %v: χ² = %.1f", tc.temp, counts, tc.want, x)
		}
	}
}

func softmax(logits ...float64) []float64 {
	p := make([]float64, len(logits))
	sum := 0.0
	for i, l := range logits {
		p[i] = math.Exp(l)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

func TestEqualCostsAreUniform(t *testing.T) {
	uniform := []float64{0.25, 0.25, 0.25, 0.25}
	for _, temp := range []float64{0, 0.5} {
		cfg := DefaultConfig()
		cfg.Temperature = temp
		r := newTest(t, cfg, 4)
		counts := frequencies(r, &Request{ID: 1, InputLength: 128, BlockHashes: []uint64{5, 6}}, 40000)
		// 3 degrees of freedom: P(χ² > 16.3) = 0.001.
		if x := chiSquare(counts, uniform); x > 16.3 {
			t.Errorf("T=%v: tied workers chosen %v, χ² = %.1f", temp, counts, x)
		}
	}
}

func TestRoundRobinOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Mode = ModeRoundRobin
	r := newTest(t, cfg, 3)
	r.Apply(KVEvent{Worker: 2, Kind: BlocksStored, Hashes: []uint64{1}})
	var got []int
	for i := range 7 {
		got = append(got, r.Route(&Request{ID: int64(i), InputLength: 100, BlockHashes: []uint64{1}}))
	}
	if want := []int{0, 1, 2, 0, 1, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v (the cache must not matter)", got, want)
	}
	// Bookkeeping still runs: worker 2's requests hit its cached block (100 − 64 tokens
	// each left to prefill); worker 1's did not.
	if got, want := r.Load(2), (WorkerLoad{InFlight: 2, PrefillTokens: 72, ActiveBlocks: 1}); got != want {
		t.Fatalf("worker 2 load %+v, want %+v", got, want)
	}
	if got, want := r.Load(1), (WorkerLoad{InFlight: 2, PrefillTokens: 200, ActiveBlocks: 1}); got != want {
		t.Fatalf("worker 2 load %+v, want %+v", got, want)
	}
}

func TestRandomIsUniformAndSeeded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Mode = ModeRandom
	route := func(seed uint64) []int {
		r, err := New(cfg, 4, seed)
		if err != nil {
			t.Fatal(err)
		}
		return frequencies(r, &Request{}, 40000)
	}
	a := route(3)
	if x := chiSquare(a, []float64{0.25, 0.25, 0.25, 0.25}); x > 16.3 {
		t.Errorf("random counts %v, χ² = %.1f", a, x)
	}
	if b := route(3); !slices.Equal(a, b) {
		t.Errorf("same seed gave %v then %v", a, b)
	}
	if c := route(4); slices.Equal(a, c) {
		t.Errorf("seeds 3 and 4 gave identical counts %v", a)
	}
}

func TestLeastLoaded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Mode = ModeLeastLoaded
	r := newTest(t, cfg, 3)
	put(r, 0, &Request{ID: 100}, false)
	put(r, 0, &Request{ID: 101}, false)
	put(r, 2, &Request{ID: 102}, false)
	// Worker 0 holds the prompt's prefix, but only the request count matters.
	r.Apply(KVEvent{Worker: 0, Kind: BlocksStored, Hashes: []uint64{1, 2}})
	req := &Request{ID: 1, InputLength: 128, BlockHashes: []uint64{1, 2}}
	if w := r.Route(req); w != 1 {
		t.Fatalf("routed to %d, want the idle worker 1", w)
	}
	// Now 2/1/1: ties between 1 and 2 go either way, never to worker 0.
	counts := frequencies(r, req, 2000)
	if counts[0] != 0 || counts[1] < 900 || counts[2] < 900 {
		t.Fatalf("choices %v, want about 1000/1000 between workers 1 and 2", counts)
	}
	r.Finished(100)
	r.Finished(101)
	if w := r.Route(&Request{ID: 2}); w != 0 {
		t.Fatalf("after worker 0 drained: routed to %d, want 0", w)
	}
}

func TestBookkeepingReturnsToZero(t *testing.T) {
	r := newTest(t, DefaultConfig(), 2)
	r.Apply(KVEvent{Worker: 0, Kind: BlocksStored, Hashes: []uint64{1, 2}})
	a := &Request{ID: 1, InputLength: 300, BlockHashes: []uint64{1, 2, 3, 4}}
	b := &Request{ID: 2, InputLength: 300, BlockHashes: []uint64{1, 2, 3, 5}}
	put(r, 0, a, false)
	put(r, 0, b, false)
	want := WorkerLoad{InFlight: 2, PrefillTokens: 2 * (300 - 128), ActiveBlocks: 5}
	if got := r.Load(0); got != want {
		t.Fatalf("load %+v, want %+v", got, want)
	}
	r.FirstToken(1)
	r.FirstToken(1) // repeated: no effect
	if got := r.Load(0).PrefillTokens; got != 300-128 {
		t.Fatalf("prefill tokens after one first token: %d, want %d", got, 300-128)
	}
	r.Finished(2) // still prefilling: its tokens leave too
	r.Finished(1)
	r.Finished(1) // repeated: no effect
	r.Finished(42)
	if got := r.Load(0); got != (WorkerLoad{}) {
		t.Fatalf("load after all finished %+v, want zero", got)
	}
	if got := r.CachedBlocks(); got != 2 || r.active.n != 0 {
		t.Fatalf("%d cached and %d active blocks, want the 2 cached ones only", got, r.active.n)
	}
	// A reused id finishes the old booking first.
	r.Route(a)
	r.Route(a)
	if got := r.Load(0).InFlight + r.Load(1).InFlight; got != 1 {
		t.Fatalf("in flight after routing id 1 twice: %d, want 1", got)
	}
}

func TestSameSeedSameDecisions(t *testing.T) {
	run := func() []int {
		cfg := DefaultConfig()
		cfg.Temperature = 0.5
		r := newTest(t, cfg, 8)
		var got []int
		for i := range 500 {
			req := &Request{ID: int64(i), InputLength: 64 * (1 + i%7), BlockHashes: blocks(i%5*100, 1+i%7)}
			w := r.Route(req)
			got = append(got, w)
			r.Apply(KVEvent{Worker: w, Kind: BlocksStored, Hashes: req.BlockHashes})
			if i >= 20 {
				r.Finished(int64(i - 20))
			}
		}
		return got
	}
	if a, b := run(), run(); !slices.Equal(a, b) {
		t.Fatal("two runs with the same seed routed differently")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Mode = "fastest" }, `router_mode: unknown mode "fastest"`},
		{func(c *Config) { c.Mode = "" }, "router_mode"},
		{func(c *Config) { c.OverlapScoreCredit = -0.5 }, "overlap_score_credit: -0.5 is negative"},
		{func(c *Config) { c.PrefillLoadScale = -1 }, "prefill_load_scale: -1 is negative"},
		{func(c *Config) { c.Temperature = math.NaN() }, "router_temperature: NaN is not a finite number"},
		{func(c *Config) { c.Temperature = math.Inf(1) }, "router_temperature: +Inf is not a finite number"},
		{func(c *Config) { c.BlockSize = 0 }, "block_size: 0 must be a positive"},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want it to contain %q", c, err, tc.want)
		}
		if _, err := New(c, 8, 1); err == nil {
			t.Errorf("New accepted %+v", c)
		}
	}
	for _, n := range []int{0, -1, MaxWorkers + 1} {
		if _, err := New(DefaultConfig(), n, 1); err == nil || !strings.Contains(err.Error(), "workers") {
			t.Errorf("New with %d workers: error %v, want one naming workers", n, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{
		"kv_router": ModeKV, "kv": ModeKV, "KV": ModeKV, "round_robin": ModeRoundRobin,
		"round-robin": ModeRoundRobin, "random": ModeRandom, " least_loaded ": ModeLeastLoaded,
	} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("kv_routerx"); err == nil || !strings.Contains(err.Error(), "round_robin") {
		t.Errorf("unknown mode: error %v, want it to list the modes", err)
	}
	// Aliases are normalised, so Config() always reports the canonical name.
	cfg := DefaultConfig()
	cfg.Mode = "round-robin"
	if got := newTest(t, cfg, 2).Config().Mode; got != ModeRoundRobin {
		t.Errorf("Config().Mode = %q, want %q", got, ModeRoundRobin)
	}
}
