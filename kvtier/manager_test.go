package kvtier

import (
	"testing"

	"pgregory.net/rapid"
)

func testConfig(g2, g3 int) Config {
	return Config{NumG2Blocks: g2, NumG3Blocks: g3, BlockBytes: 1_000_000, G1ToG2GBps: 14, G2ToG1GBps: 14,
		G2ToG3GBps: 7, G3ToG2GBps: 7, OffloadBatchSize: 32}
}

// Two batches offloaded together share the G1→G2 link (processor sharing, as the mocker's
// bandwidth_sharing_model.rs): 32 and 8 blocks of 1 MB at 14 GB/s each move at 7 GB/s, so
// the 8-block batch ends at 8e6/7e3 = 1,142.9 µs; the 32-block one, alone then, moves its
// last 24 MB at 14 GB/s and ends at 2,857.1 µs — where a FIFO would end it at 2,286 µs
// and the small one after it. Blocks are visible from the whole µs after their end.
func TestOffloadBatchesShareTheLink(t *testing.T) {
	m := New(testConfig(1000, 0))
	keys := make([]uint64, 40)
	for i := range 40 {
		keys[i] = uint64(100 + i)
		m.Evicted(Key{keys[i], 0})
	}
	m.Flush(0)
	if m.Len(G2) != 40 {
		t.Fatalf("G2 holds %d, want 40", m.Len(G2))
	}
	if n2, _ := m.Lookup(1142, keys, 32, 40, 1); n2 != 0 {
		t.Fatalf("the small batch visible before it ended: %d", n2)
	}
	if n2, _ := m.Lookup(1143, keys, 32, 40, 1); n2 != 8 {
		t.Fatalf("at 1143 µs %d of the small batch visible, want 8", n2)
	}
	if n2, _ := m.Lookup(2857, keys, 0, 40, 1); n2 != 0 {
		t.Fatalf("the large batch visible at 2857 µs: %d", n2)
	}
	if n2, _ := m.Lookup(2858, keys, 0, 40, 1); n2 != 40 {
		t.Fatalf("at 2858 µs %d blocks visible, want 40", n2)
	}
	if s := m.Stats(); s.Offloaded != 40 || s.OffloadBusyUS != 2857 {
		t.Fatalf("stats %+v", s)
	}
	// Onboarding 40 blocks alone over 14 GB/s: 40e6/14e3 = 2,857.1 µs.
	m.Lookup(10_000, keys, 0, 40, 1)
	h := m.Onboard(10_000)
	if end, ok := m.Loaded(h, 10_000); ok || end != 10_000+2858 {
		t.Fatalf("onboard: ended %v, due at %d, want due at %d", ok, end, 10_000+2858)
	}
	// A second onboard of the last 20 blocks at 11,000 µs halves the first one's rate:
	// 1e3·14e3 = 14 MB moved, 26 MB left, the second's 20 MB end at 11,000+40e6/14e3, then
	// the first's last 6 MB alone: 11,000 + 2,857.1 + 428.6 = 14,285.7 µs.
	m.Lookup(11_000, keys, 20, 40, 1)
	h2 := m.Onboard(11_000)
	if end, ok := m.Loaded(h, 11_000); ok || end != 14_286 {
		t.Fatalf("first onboard after the second started: ended %v, due at %d, want 14286", ok, end)
	}
	if end, ok := m.Loaded(h2, 13_858); !ok || end != 13_858 {
		t.Fatalf("second onboard: ended %v at %d, want 13858", ok, end)
	}
	if end, ok := m.Loaded(h, 20_000); !ok || end != 14_286 {
		t.Fatalf("first onboard: ended %v at %d, want 14286", ok, end)
	}
	if s := m.Stats(); s.Loaded != 2 || s.OnboardWaitUS != 4286+2858 {
		t.Fatalf("stats %+v", s)
	}
}

// G1→G2 carries at most offload_batch_size transfers at once (the mocker's
// max_concurrent_transfers): with batches of one block, three evictions go one after
// another, 1 MB at 14 GB/s (71.4 µs) each, where sharing the link would end all three at
// 214.3 µs.
func TestOffloadsInFlightAreCapped(t *testing.T) {
	c := testConfig(10, 0)
	c.OffloadBatchSize = 1
	m := New(c)
	keys := []uint64{1, 2, 3}
	for _, k := range keys {
		m.Evicted(Key{k, 0})
	}
	m.Flush(0)
	for _, at := range []struct {
		now  int64
		want int
	}{{71, 0}, {72, 1}, {142, 1}, {143, 2}, {214, 2}, {215, 3}} {
		if n2, _ := m.Lookup(at.now, keys, 0, 3, 1); n2 != at.want {
			t.Fatalf("at %d µs %d blocks visible, want %d", at.now, n2, at.want)
		}
	}
}

// A G2 block an onboard is reading is not evicted until the load ends (the mocker's
// SwapInHandle pins it): with G2 full of such blocks, an offload finds no room.
func TestOnboardPinsItsBlocks(t *testing.T) {
	c := testConfig(2, 0)
	c.OffloadBatchSize = 1
	m := New(c)
	m.Evicted(Key{1, 0})
	m.Evicted(Key{2, 0})
	m.Flush(0)
	keys := []uint64{1, 2}
	if n2, _ := m.Lookup(1000, keys, 0, 2, 1); n2 != 2 {
		t.Fatalf("lookup found %d, want 2", n2)
	}
	h := m.Onboard(1000) // 2 MB at 14 GB/s: ends at 1,143 µs
	m.Evicted(Key{3, 0})
	m.Flush(1100)
	if s := m.Stats(); s.OffloadDropped != 1 || m.Has(Key{1, 0}) != G2 {
		t.Fatalf("offload during the onboard: dropped %d, block 1 in G%d", s.OffloadDropped, m.Has(Key{1, 0}))
	}
	if _, ok := m.Loaded(h, 1143); !ok {
		t.Fatal("onboard not ended at 1143 µs")
	}
	m.Evicted(Key{3, 0})
	m.Flush(1200)
	if s := m.Stats(); s.OffloadDropped != 1 || s.G2Evicted != 1 || m.Has(Key{3, 0}) != G2 {
		t.Fatalf("offload after the onboard: %+v, block 3 in G%d", s, m.Has(Key{3, 0}))
	}
}

// G2 evicts least recently used first, to G3; a G3 hit is staged over the G3→G2 link.
func TestG2EvictsLRUIntoG3(t *testing.T) {
	c := testConfig(2, 4)
	c.OffloadBatchSize = 1
	m := New(c)
	for i := range 3 {
		m.Evicted(Key{uint64(i + 1), 0})
		m.Flush(int64(i) * 10_000)
	}
	if m.Has(Key{1, 0}) != G3 || m.Has(Key{2, 0}) != G2 || m.Has(Key{3, 0}) != G2 {
		t.Fatalf("tiers: %d %d %d", m.Has(Key{1, 0}), m.Has(Key{2, 0}), m.Has(Key{3, 0}))
	}
	m.Advance(100_000)
	var stored, removed [4]int
	for _, e := range m.Events() {
		if e.Stored {
			stored[e.Tier] += len(e.Keys)
		} else {
			removed[e.Tier] += len(e.Keys)
		}
	}
	if stored[G2] != 3 || removed[G2] != 1 || stored[G3] != 1 {
		t.Fatalf("events: stored %v removed %v", stored, removed)
	}
	keys := []uint64{1, 2}
	if n2, n3 := m.Lookup(100_000, keys, 0, 2, 1); n2 != 0 || n3 != 1 {
		t.Fatalf("lookup of [1 2]: G2 %d G3 %d, want 0 and 1 (block 1 is in G3 only; the G3 run stops at 2)", n2, n3)
	}
	// 1 MB over G3→G2 at 7 GB/s (142.9 µs), then over G2→G1 at 14 GB/s (71.4 µs).
	h := m.Onboard(100_000)
	if end, ok := m.Loaded(h, 100_000); ok || end != 100_000+215 {
		t.Fatalf("onboard from G3: ended %v, due at %d", ok, end)
	}
	if end, ok := m.Loaded(h, 100_215); !ok || end != 100_215 {
		t.Fatalf("onboard from G3: ended %v at %d, want 100215", ok, end)
	}
}

// The invariants, under any interleaving of evictions, flushes, clock advances and
// onboards: every block offered is in exactly one place (G2, G3, or counted gone), tier
// capacities hold, a look-up serves a block only from a tier that holds it and has finished
// receiving it, and the tier events (the router's view) equal the visible blocks.
func TestTierInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := testConfig(rapid.IntRange(1, 12).Draw(t, "g2"), rapid.IntRange(0, 12).Draw(t, "g3"))
		c.OffloadBatchSize = rapid.IntRange(1, 5).Draw(t, "batch")
		// 0: instant links, where a block arrives in the flush that sends it.
		c.G1ToG2GBps = rapid.SampledFrom([]float64{0, 14}).Draw(t, "g1g2")
		c.G2ToG3GBps = rapid.SampledFrom([]float64{0, 7}).Draw(t, "g2g3")
		c.G2ToG1GBps = rapid.SampledFrom([]float64{0, 14}).Draw(t, "g2g1")
		c.G3ToG2GBps = rapid.SampledFrom([]float64{0, 7}).Draw(t, "g3g2")
		m := New(c)
		view := [4]map[Key]bool{G2: {}, G3: {}}
		offered := int64(0)
		now := int64(0)
		keys := make([]uint64, 6)
		var onboards []int32
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			now += int64(rapid.IntRange(0, 400).Draw(t, "dt"))
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				for range rapid.IntRange(1, 8).Draw(t, "evictions") {
					m.Evicted(Key{uint64(rapid.IntRange(1, 20).Draw(t, "key")), uint8(rapid.IntRange(0, 1).Draw(t, "sub"))})
					offered++
				}
				m.Flush(now)
			case 1:
				m.Advance(now)
			case 2:
				for i := range keys {
					keys[i] = uint64(rapid.IntRange(1, 20).Draw(t, "lookup"))
				}
				n2, n3 := m.Lookup(now, keys, 0, int32(len(keys)), 2)
				for i, k := range m.hit {
					want := G2
					if i >= n2 {
						want = G3
					}
					tr := &m.g2
					if want == G3 {
						tr = &m.g3
					}
					if m.Has(k) != want || !tr.visible(k, now) {
						t.Fatalf("served %v from G%d, but it is in tier %d (visible %v)", k, want, m.Has(k), tr.visible(k, now))
					}
				}
				if n2+n3 > 0 {
					h := m.Onboard(now)
					if end, ok := m.Loaded(h, now); end < now {
						t.Fatalf("onboard ends at %d (%v) before it starts at %d", end, ok, now)
					}
					onboards = append(onboards, h)
				}
			}
			for _, e := range m.Events() {
				for _, k := range e.Keys {
					if e.Stored == view[e.Tier][k] {
						t.Fatalf("event %v for %v, the view holds it: %v", e.Stored, k, view[e.Tier][k])
					}
					if e.Stored {
						view[e.Tier][k] = true
					} else {
						delete(view[e.Tier], k)
					}
				}
			}
			s := m.Stats()
			switch {
			case m.Len(G2) > c.NumG2Blocks || m.Len(G3) > c.NumG3Blocks:
				t.Fatalf("over capacity: G2 %d/%d G3 %d/%d", m.Len(G2), c.NumG2Blocks, m.Len(G3), c.NumG3Blocks)
			case offered != s.Offloaded+s.OffloadSkipped+s.OffloadDropped:
				t.Fatalf("offered %d != offloaded %d + skipped %d + dropped %d", offered, s.Offloaded, s.OffloadSkipped, s.OffloadDropped)
			case int64(m.Len(G2)) != s.Offloaded-s.G2Evicted:
				t.Fatalf("G2 holds %d, offloaded %d − evicted %d", m.Len(G2), s.Offloaded, s.G2Evicted)
			case int64(m.Len(G3)) != s.G3Offloaded-s.G3Evicted:
				t.Fatalf("G3 holds %d, received %d − evicted %d", m.Len(G3), s.G3Offloaded, s.G3Evicted)
			case c.NumG3Blocks > 0 && s.G2Evicted != s.G3Offloaded+s.G3Dropped:
				t.Fatalf("G2 evicted %d, G3 received %d and dropped %d", s.G2Evicted, s.G3Offloaded, s.G3Dropped)
			}
			// A block is pinned exactly while an onboard reading it has not ended.
			pins := map[Key]int32{}
			for _, h := range onboards {
				for _, k := range m.onboards[h].keys {
					pins[k]++
				}
			}
			for _, tr := range []*tier{&m.g2, &m.g3} {
				for k, i := range tr.at {
					if tr.nodes[i].pins != pins[k] {
						t.Fatalf("%v pinned %d times, %d onboards in flight read it", k, tr.nodes[i].pins, pins[k])
					}
				}
			}
			for k := range m.g2.at {
				if m.g3.has(k) {
					t.Fatalf("%v in both G2 and G3", k)
				}
			}
			if op := rapid.Bool().Draw(t, "settle"); op {
				// After an Advance the events have told the router exactly the visible blocks.
				m.Advance(now)
				for _, e := range m.Events() {
					for _, k := range e.Keys {
						if e.Stored {
							view[e.Tier][k] = true
						} else {
							delete(view[e.Tier], k)
						}
					}
				}
				for ti, tr := range map[Tier]*tier{G2: &m.g2, G3: &m.g3} {
					n := 0
					for k := range tr.at {
						if tr.visible(k, now) {
							n++
							if !view[ti][k] {
								t.Fatalf("%v visible in G%d, not in the router's view", k, ti)
							}
						}
					}
					if n != len(view[ti]) {
						t.Fatalf("G%d: %d visible, the view has %d", ti, n, len(view[ti]))
					}
				}
			}
		}
	})
}

func TestValidateNamesTheKey(t *testing.T) {
	c := testConfig(0, 0)
	if err := c.Validate(); err == nil || err.Error()[:13] != "num_g2_blocks" {
		t.Fatalf("got %v", err)
	}
	c = testConfig(10, 0)
	c.G2ToG1GBps = -1
	if err := c.Validate(); err == nil || err.Error()[:23] != "bandwidth_g2_to_g1_gbps" {
		t.Fatalf("got %v", err)
	}
}
