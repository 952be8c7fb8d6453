package kvtier

import (
	"testing"

	"pgregory.net/rapid"
)

func testConfig(g2, g3 int) Config {
	return Config{NumG2Blocks: g2, NumG3Blocks: g3, BlockBytes: 1_000_000, G1ToG2GBps: 14, G2ToG1GBps: 14,
		G2ToG3GBps: 7, G3ToG2GBps: 7, OffloadBatchSize: 32}
}

// A batch of 32 blocks of 1 MB over 14 GB/s takes ⌈32e6 / 14e3⌉ = 2,286 µs; the link is a
// FIFO, so a second batch offloaded at the same time arrives 2,286 µs later still.
func TestOffloadBatchesQueueOnTheLink(t *testing.T) {
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
	// The second batch (8 blocks: ⌈8e6/14e3⌉ = 572 µs) queues behind the first.
	if n2, _ := m.Lookup(2285, keys, 0, 40, 1); n2 != 0 {
		t.Fatalf("visible before the first batch arrived: %d", n2)
	}
	if n2, _ := m.Lookup(2286, keys, 0, 40, 1); n2 != 32 {
		t.Fatalf("at 2286 µs %d blocks visible, want the first batch's 32", n2)
	}
	if n2, _ := m.Lookup(2286+572, keys, 0, 40, 1); n2 != 40 {
		t.Fatalf("at 2858 µs %d blocks visible, want 40", n2)
	}
	if s := m.Stats(); s.Offloaded != 40 || s.OffloadBusyUS != 2286+572 {
		t.Fatalf("stats %+v", s)
	}
	// Onboarding 40 blocks over 14 GB/s: ⌈40e6/14e3⌉ = 2,858 µs.
	if done := m.Onboard(10_000); done != 10_000+2858 {
		t.Fatalf("onboard finishes at %d, want %d", done, 10_000+2858)
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
	// 1 MB over G3→G2 at 7 GB/s (143 µs), then over G2→G1 at 14 GB/s (72 µs).
	if done := m.Onboard(100_000); done != 100_000+143+72 {
		t.Fatalf("onboard from G3 done at %d", done)
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
		m := New(c)
		view := [4]map[Key]bool{G2: {}, G3: {}}
		offered := int64(0)
		now := int64(0)
		keys := make([]uint64, 6)
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
					if done := m.Onboard(now); done < now {
						t.Fatalf("onboard finishes at %d before it starts at %d", done, now)
					}
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
