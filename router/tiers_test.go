package router

import "testing"

// Worker 0 holds the request's first block on its GPU; worker 1 holds the first four in
// host memory. Credits: 1 · 1 = 1 block on worker 0, 0.75 · 4 = 3 blocks on worker 1, so
// Dynamo's default weights send the request to worker 1, and a host weight of 0 to worker 0.
// A disk run continues where the host run stops: worker 1's blocks 4–5 on disk add 0.25 · 2.
func TestHostHitsCountAtTheirWeight(t *testing.T) {
	hashes := []uint64{11, 12, 13, 14, 15, 16, 17, 18}
	for _, tc := range []struct {
		host, disk float64
		want       int
	}{{0.75, 0.25, 1}, {0, 0, 0}, {0.2, 0.25, 1}, {0.2, 0, 0}} {
		cfg := DefaultConfig()
		cfg.Tiers = &TierWeights{Host: tc.host, Disk: tc.disk}
		r, err := New(cfg, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		r.Apply(KVEvent{Worker: 0, Kind: BlocksStored, Hashes: hashes[:1]})
		r.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: hashes[:4], Tier: TierHost})
		r.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: hashes[4:6], Tier: TierDisk})
		// A disk block past a gap does not count: the walk stops at the first miss.
		r.Apply(KVEvent{Worker: 0, Kind: BlocksStored, Hashes: hashes[7:8], Tier: TierDisk})
		r.walkTiers(hashes)
		if h, d := r.tiers.hostN, r.tiers.diskN; h[0] != 0 || h[1] != 4 || d[0] != 0 || d[1] != 2 {
			t.Fatalf("host %v disk %v, want [0 4] [0 2]", h, d)
		}
		// Credits: w0 1; w1 4·host + 2·disk. (0.2, 0.25): 0.8 + 0.5 = 1.3 > 1; (0.2, 0): 0.8 < 1.
		if w := r.Route(&Request{ID: 1, InputLength: 512, BlockHashes: hashes}); w != tc.want {
			t.Errorf("weights host %v disk %v: routed to %d, want %d", tc.host, tc.disk, w, tc.want)
		}
	}
}

// Removed events take blocks out of a tier, and a router without tiers ignores tier events.
func TestTierEventsRemoveAndAreIgnoredWithoutTiers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Tiers = &TierWeights{Host: 1}
	r, _ := New(cfg, 2, 1)
	hashes := []uint64{1, 2, 3}
	r.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: hashes, Tier: TierHost})
	r.Apply(KVEvent{Worker: 1, Kind: BlocksRemoved, Hashes: hashes[1:2], Tier: TierHost})
	r.walkTiers(hashes)
	if r.tiers.hostN[1] != 1 {
		t.Fatalf("host run %d after removing block 2, want 1", r.tiers.hostN[1])
	}
	plain, _ := New(DefaultConfig(), 2, 1)
	plain.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: hashes, Tier: TierHost})
	if plain.CachedBlocks() != 0 {
		t.Fatalf("a host-tier event entered the device index: %d blocks", plain.CachedBlocks())
	}
}

func TestTierWeightsBounds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Tiers = &TierWeights{Host: 1.5}
	if err := cfg.Validate(); err == nil || err.Error() != "host_cache_hit_weight: 1.5 must be in [0, 1]" {
		t.Fatalf("got %v", err)
	}
}

// With busy thresholds the choice among the free workers counts the tiers too: worker 2
// holds the prefix on its GPU but is busy; of the free ones, worker 1's four host blocks
// (credit 3) beat worker 0's one device block.
func TestTierCreditAmongFreeWorkers(t *testing.T) {
	cfg := DefaultConfig()
	w := DefaultTierWeights()
	cfg.Tiers = &w
	cfg.Load = LoadConfig{ActivePrefillTokensThreshold: ptr(int64(100)), MaxNumBatchedTokens: 1024}
	r := newTest(t, cfg, 3)
	hashes := []uint64{11, 12, 13, 14, 15, 16}
	r.Apply(KVEvent{Worker: 0, Kind: BlocksStored, Hashes: hashes[:1]})
	r.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: hashes[:4], Tier: TierHost})
	r.Apply(KVEvent{Worker: 2, Kind: BlocksStored, Hashes: hashes})
	r.Published(2, 10, 500)
	if got := r.Route(&Request{ID: 1, InputLength: 384, BlockHashes: hashes}); got != 1 {
		t.Fatalf("routed to %d, want 1 (host hits, among the free workers)", got)
	}
}
