package router

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// chain is n chained block hashes starting at base.
func chain(base uint64, n int) []uint64 {
	h := make([]uint64, n)
	for i := range h {
		h[i] = base + uint64(i)
	}
	return h
}

func overlaps(r *Router, h []uint64) []int {
	out := make([]int, r.Workers())
	r.Overlaps(h, out)
	return out
}

// With KV events off the router predicts a request's blocks on its worker at once, ignores
// the engines' events, and forgets the blocks TTL after the last request that brought them.
func TestApproximateIndexExpiresAfterTTL(t *testing.T) {
	for _, g := range []int{1, 8} {
		cfg := DefaultConfig()
		cfg.NoKVEvents, cfg.TTLSecs = true, 1
		r, err := NewGrouped(cfg, 4, g, 1)
		if err != nil {
			t.Fatal(err)
		}
		var now int64
		r.SetClock(&now)
		h := chain(100, 16)
		w := r.Route(&Request{ID: 1, InputLength: 16 * 64, BlockHashes: h})
		r.Apply(KVEvent{Worker: (w + 1) % 4, Kind: BlocksStored, Hashes: h, Keys: keysOf(h, g), Subs: subsOf(len(h), g)})
		want := make([]int, 4)
		want[w] = 16
		if got := overlaps(r, h); !slices.Equal(got, want) {
			t.Fatalf("g=%d: overlaps %v right after routing, want %v (events ignored)", g, got, want)
		}
		now = 800_000 // refreshed by a second request: expires at 1.8 s
		r.Finished(1)
		if w2 := r.Route(&Request{ID: 2, InputLength: 16 * 64, BlockHashes: h}); w2 != w {
			t.Fatalf("g=%d: second request went to %d, not to its predicted cache on %d", g, w2, w)
		}
		now = 1_500_000
		if got := overlaps(r, h); !slices.Equal(got, want) {
			t.Fatalf("g=%d: overlaps %v at 1.5 s, want %v (refreshed at 0.8 s)", g, got, want)
		}
		now = 1_800_000
		if got := overlaps(r, h); slices.Max(got) != 0 || r.CachedBlocks() != 0 {
			t.Fatalf("g=%d: overlaps %v, %d blocks at 1.8 s, want none", g, got, r.CachedBlocks())
		}
	}
}

func keysOf(h []uint64, g int) []uint64 {
	if g == 1 {
		return nil
	}
	k := make([]uint64, len(h))
	for j := range h {
		k[j] = h[j-j%g]
	}
	return k
}

func subsOf(n, g int) []uint8 {
	if g == 1 {
		return nil
	}
	s := make([]uint8, n)
	for j := range s {
		s[j] = uint8(j % g)
	}
	return s
}

// Past its bound the prediction is pruned to 80 % of it, oldest decision first and, within
// it, deepest blocks first: the survivors of a partly pruned request are its leading blocks.
func TestApproximateIndexPrunesOldestDeepestFirst(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NoKVEvents = true
	r, err := New(cfg, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.idx.maxBlocks = 100
	var now int64
	r.SetClock(&now)
	first := chain(1000, 30)
	for i := range 4 { // 120 blocks: past 100, pruned to 80
		now = int64(i)
		h := first
		if i > 0 {
			h = chain(uint64(2000+100*i), 30)
		}
		r.Route(&Request{ID: int64(i), InputLength: 30 * 64, BlockHashes: h})
	}
	if n := len(r.idx.predicted); n != 80 {
		t.Fatalf("%d predicted blocks after pruning, want 80", n)
	}
	if got := slices.Max(overlaps(r, first)); got != 0 {
		t.Errorf("oldest request keeps %d blocks, want 0 (40 pruned: all 30 of it, then 10 of the next)", got)
	}
	if got := slices.Max(overlaps(r, chain(2100, 30))); got != 20 {
		t.Errorf("second request keeps %d leading blocks, want 20 (its 10 deepest pruned)", got)
	}
}

// An event delay holds KV events back: the index sees them only once the delay has passed,
// from a copy (the engine reuses the event's slices).
func TestKVEventDelayHoldsEventsBack(t *testing.T) {
	cfg := DefaultConfig()
	cfg.KVEventDelayUS = 10_000
	r, err := New(cfg, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	var now int64
	r.SetClock(&now)
	h := chain(7, 4)
	buf := slices.Clone(h)
	r.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: buf})
	clear(buf)
	now = 9_999
	if got := overlaps(r, h); slices.Max(got) != 0 {
		t.Fatalf("overlaps %v before the delay, want none", got)
	}
	now = 10_000
	if got := overlaps(r, h); !slices.Equal(got, []int{0, 4}) {
		t.Fatalf("overlaps %v after the delay, want [0 4]", got)
	}
}

// router_predicted_ttl_secs: beside the events, the router's own decisions count for TTL,
// and each worker's overlap is the longer of the two.
func TestPredictedBlocksBesideEvents(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PredictedTTLSecs = 1
	r, err := New(cfg, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	var now int64
	r.SetClock(&now)
	h := chain(500, 8)
	r.Apply(KVEvent{Worker: 2, Kind: BlocksStored, Hashes: h[:3]})
	w := r.Route(&Request{ID: 1, InputLength: 8 * 64, BlockHashes: h})
	want := []int{0, 0, 3}
	want[w] = 8
	if got := overlaps(r, h); !slices.Equal(got, want) {
		t.Fatalf("overlaps %v after routing to %d, want %v (events' 3 on worker 2, predicted 8 on %d)", got, w, want, w)
	}
	now = 1_000_000
	want = []int{0, 0, 3}
	if got := overlaps(r, h); !slices.Equal(got, want) {
		t.Fatalf("overlaps %v once the prediction expired, want the events' %v", got, want)
	}
}

// Replica sync without delay gives every router the whole fleet's load; without sync the
// routers' loads add up to it.
func TestReplicaSyncSharesLoad(t *testing.T) {
	for _, sync := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Replicas, cfg.ReplicaSync = 3, sync
		p, err := NewReplicas(cfg, 4, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 9 {
			p.Route(&Request{ID: int64(i), InputLength: 256, BlockHashes: chain(uint64(100*i), 4)})
		}
		p.FirstToken(0)
		p.Finished(1)
		total := 0
		for i := range 3 {
			n := 0
			for w := range 4 {
				n += p.Router(i).Load(w).InFlight
			}
			total += n
			if sync && n != 8 {
				t.Errorf("synced router %d counts %d requests in flight, want 8", i, n)
			}
		}
		if !sync && total != 8 {
			t.Errorf("unsynced routers count %d requests in flight together, want 8", total)
		}
	}
}

// With a sync delay the other routers book a request only when its message arrives, before
// their next routing decision after it, and its free follows it.
func TestReplicaSyncDelay(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Replicas, cfg.ReplicaSync, cfg.ReplicaSyncDelayUS = 2, true, 1000
	p, err := NewReplicas(cfg, 2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var now int64
	p.SetClock(&now)
	p.Route(&Request{ID: 1, InputLength: 256, BlockHashes: chain(1, 4)}) // router 0
	knows := func(i int) bool { _, ok := p.Router(i).booked[1]; return ok }
	now = 999
	p.Route(&Request{ID: 2, InputLength: 64, BlockHashes: chain(50, 1)}) // router 1, before the message
	if knows(1) {
		t.Fatalf("router 1 booked request 1 before its sync message arrived")
	}
	p.Finished(1) // at 999: router 0 frees it now, router 1 at 1999
	if knows(0) {
		t.Fatalf("router 0 still books request 1 after finishing it")
	}
	now = 1000
	p.Route(&Request{ID: 3, InputLength: 64, BlockHashes: chain(60, 1)})
	if !knows(1) {
		t.Fatalf("router 1 does not book request 1 once its sync message arrived")
	}
	now = 1999
	p.Route(&Request{ID: 4, InputLength: 64, BlockHashes: chain(70, 1)})
	if knows(1) {
		t.Fatalf("router 1 still books request 1 after its free arrived")
	}
}

// power_of_two_choices takes the less loaded of two distinct workers, so never the most
// loaded one of a fleet with a single busiest worker; device_aware_weighted routes exactly
// as least_loaded on an accelerator-only fleet.
func TestSimplePolicies(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := rapid.IntRange(2, 16).Draw(t, "workers")
		seed := rapid.Uint64().Draw(t, "seed")
		build := func(m Mode) *Router {
			cfg := DefaultConfig()
			cfg.Mode = m
			r, err := New(cfg, workers, seed)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		p2c, da, ll := build(ModePowerOfTwoChoices), build(ModeDeviceAwareWeighted), build(ModeLeastLoaded)
		for i := range rapid.IntRange(1, 40).Draw(t, "requests") {
			req := &Request{ID: int64(i), InputLength: 64, BlockHashes: chain(uint64(i*10), 1)}
			busiest, ties := 0, 0
			for w := range workers {
				switch l := p2c.Load(w).InFlight; {
				case l > p2c.Load(busiest).InFlight:
					busiest, ties = w, 1
				case l == p2c.Load(busiest).InFlight:
					ties++
				}
			}
			if w := p2c.Route(req); ties == 1 && p2c.Load(busiest).InFlight > 0 && w == busiest {
				t.Fatalf("power_of_two_choices chose the single busiest worker %d", w)
			}
			if a, b := da.Route(req), ll.Route(req); a != b {
				t.Fatalf("device_aware_weighted chose %d, least_loaded %d", a, b)
			}
			if rapid.Bool().Draw(t, "finish") {
				id := int64(rapid.IntRange(0, i).Draw(t, "id"))
				for _, r := range []*Router{p2c, da, ll} {
					r.Finished(id)
				}
			}
		}
	})
}

// Every index knob rejects a value out of its range, naming the knob.
func TestIndexConfigErrors(t *testing.T) {
	for _, c := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.TTLSecs = -1 }, "router_ttl_secs"},
		{func(c *Config) { c.OverlapScoreCreditDecay = -0.5 }, "overlap_score_credit_decay"},
		{func(c *Config) { c.KVEventDelayUS = -1 }, "router_kv_event_delay_ms"},
		{func(c *Config) { c.ReplicaSyncDelayUS = maxDelayUS + 1 }, "router_replica_sync_delay_ms"},
		{func(c *Config) { c.Replicas = MaxReplicas + 1 }, "router_replicas"},
		{func(c *Config) { c.NoKVEvents, c.PredictedTTLSecs = true, 5 }, "router_predicted_ttl_secs"},
	} {
		cfg := DefaultConfig()
		c.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v", c.want, err)
		}
	}
	cfg := DefaultConfig()
	cfg.OverlapScoreCredit = 2 // the modelled revision has no upper bound
	if err := cfg.Validate(); err != nil {
		t.Errorf("credit 2: %v", err)
	}
}

// The approximate index answers as a naive model of its rule: block j of a request routed
// to w at time t is on w while now < t + TTL of the latest such request (below the pruning
// bound), whatever the fleet, grouping, TTL and order of routes and clock steps.
func TestApproximateIndexMatchesNaiveModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := rapid.IntRange(1, 70).Draw(t, "workers")
		g := rapid.SampledFrom([]int{1, 2, 8}).Draw(t, "sub_blocks")
		cfg := DefaultConfig()
		cfg.NoKVEvents = true
		cfg.TTLSecs = float64(rapid.IntRange(1, 50).Draw(t, "ttl_ms")) / 1000
		r, err := NewGrouped(cfg, workers, g, rapid.Uint64().Draw(t, "seed"))
		if err != nil {
			t.Fatal(err)
		}
		var now int64
		r.SetClock(&now)
		// Prompts are prefixes of a few chains; a block's key is its trace block's first hash.
		chains := [][]uint64{chain(1000, 24), chain(2000, 24), chain(1000, 8)}
		chains[2] = append(chains[2], chain(3000, 16)...)
		keyed := func(h []uint64) []uint64 {
			k := slices.Clone(h)
			for j := range k {
				k[j] = h[j-j%g]
			}
			return k
		}
		type blk struct {
			w   int
			key uint64
			sub int
		}
		until := map[blk]int64{}
		for i := range rapid.IntRange(1, 40).Draw(t, "ops") {
			now += int64(rapid.IntRange(0, 20).Draw(t, "step_ms")) * 1000 // whole ms, so expiries fall on routes
			c := chains[rapid.IntRange(0, len(chains)-1).Draw(t, "chain")]
			h := keyed(c[:rapid.IntRange(1, len(c)).Draw(t, "len")])
			if rapid.Bool().Draw(t, "route") {
				w := r.Route(&Request{ID: int64(i), InputLength: len(h) * 64, BlockHashes: h})
				for j := range h {
					until[blk{w, h[j], j % g}] = now + cfg.ttlUS()
				}
				if rapid.Bool().Draw(t, "finish") {
					r.Finished(int64(i))
				}
				continue
			}
			got := overlaps(r, h)
			for w := range workers {
				want := 0
				for want < len(h) && until[blk{w, h[want], want % g}] > now {
					want++
				}
				if got[w] != want {
					t.Fatalf("at %d µs worker %d overlaps %d blocks, the model %d", now, w, got[w], want)
				}
			}
		}
	})
}
