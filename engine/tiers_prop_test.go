package engine

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/kvtier"
	"github.com/routerlab/routerlab/router"
)

// With KV tiers, on any small trace and fleet: every request completes with all its tokens
// and the pools keep their invariants (runChecked, after every event); every block G1 evicts
// is offered to the tiers (offered = offloaded + skipped + dropped); the tiers' sizes follow
// from what they received and evicted and stay within capacity; the tier events are
// consistent (never stored twice, never removed unstored) and name no more blocks than the
// tier holds.
func TestTiersProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tb := rapid.SampledFrom([]int{64, 128, 512}).Draw(t, "trace_block")
		tr := genTrace(t, tb)
		cfg := genConfig(t, tr)
		kt := &kvtier.Config{
			NumG2Blocks: rapid.IntRange(1, 40).Draw(t, "g2"), NumG3Blocks: rapid.IntRange(0, 40).Draw(t, "g3"),
			BlockBytes: int64(rapid.SampledFrom([]int{1000, 100_000, 2_000_000}).Draw(t, "block_bytes")),
			G1ToG2GBps: rapid.SampledFrom([]float64{0, 1, 14}).Draw(t, "g1g2"), G2ToG1GBps: rapid.SampledFrom([]float64{0, 1, 14}).Draw(t, "g2g1"),
			G2ToG3GBps: 7, G3ToG2GBps: rapid.SampledFrom([]float64{0, 7}).Draw(t, "g3g2"),
			OffloadBatchSize: rapid.IntRange(1, 8).Draw(t, "batch"),
		}
		cfg.KVTiers = kt
		cfg.Router.Tiers = &router.TierWeights{Host: rapid.Float64Range(0, 1).Draw(t, "host_w"), Disk: 0.25}
		timer := &fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "base")), perToken: 1}
		s, err := New(cfg, timer, tr)
		if err != nil {
			t.Fatal(err)
		}
		mirror := newKVMirror(cfg.Workers)
		tiers := make([][4]map[uint64]bool, cfg.Workers)
		evicted := make([]int64, cfg.Workers)
		for w := range tiers {
			tiers[w] = [4]map[uint64]bool{2: {}, 3: {}}
		}
		var tierErr error
		s.onKV = func(ev router.KVEvent) {
			if ev.Tier == router.TierDevice {
				mirror.apply(ev)
				if ev.Kind == router.BlocksRemoved {
					evicted[ev.Worker] += int64(len(ev.Hashes))
				}
				return
			}
			set := tiers[ev.Worker][ev.Tier]
			for _, h := range ev.Hashes {
				if (ev.Kind == router.BlocksStored) == set[h] {
					tierErr = fmt.Errorf("worker %d tier %d: event %d for %x, held %v", ev.Worker, ev.Tier, ev.Kind, h, set[h])
				}
				if ev.Kind == router.BlocksStored {
					set[h] = true
				} else {
					delete(set, h)
				}
			}
		}
		s.onDone = func(r *request) {
			if f := r.fl; f.generated != r.out || f.tokens != r.isl+r.out || f.computed != f.tokens-1 {
				t.Fatalf("request completes with %+v, flight %+v", *r, *f)
			}
		}
		runChecked(t, s, mirror, nil)
		if tierErr != nil {
			t.Fatal(tierErr)
		}
		if s.completed != len(tr.Requests) {
			t.Fatalf("%d of %d requests completed", s.completed, len(tr.Requests))
		}
		for w, m := range s.tiers.m {
			st := m.Stats()
			switch {
			case evicted[w] != st.Offloaded+st.OffloadSkipped+st.OffloadDropped:
				t.Fatalf("worker %d: G1 evicted %d, tiers were offered %d", w, evicted[w], st.Offloaded+st.OffloadSkipped+st.OffloadDropped)
			case int64(m.Len(kvtier.G2)) != st.Offloaded-st.G2Evicted || m.Len(kvtier.G2) > kt.NumG2Blocks:
				t.Fatalf("worker %d: G2 holds %d of %d, received %d, evicted %d", w, m.Len(kvtier.G2), kt.NumG2Blocks, st.Offloaded, st.G2Evicted)
			case int64(m.Len(kvtier.G3)) != st.G3Offloaded-st.G3Evicted || m.Len(kvtier.G3) > kt.NumG3Blocks:
				t.Fatalf("worker %d: G3 holds %d of %d", w, m.Len(kvtier.G3), kt.NumG3Blocks)
			case len(tiers[w][2]) > m.Len(kvtier.G2) || len(tiers[w][3]) > m.Len(kvtier.G3):
				t.Fatalf("worker %d: events name %d G2 and %d G3 blocks, the tiers hold %d and %d",
					w, len(tiers[w][2]), len(tiers[w][3]), m.Len(kvtier.G2), m.Len(kvtier.G3))
			}
		}
	})
}
