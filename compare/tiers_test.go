package compare

import (
	"testing"

	"github.com/routerlab/routerlab/engine"
)

// A run with KV tiers against one without: the kv_tiers figures are compared against what
// no tiers means (G1 serves the prefix reuse, nothing else moves), in both directions.
func TestCompareTiersAgainstNone(t *testing.T) {
	off := &Run{Summary: engine.Summary{RequestsCompleted: 10, PrefixCacheReusedRatio: 0.5}}
	on := &Run{Summary: engine.Summary{RequestsCompleted: 10, PrefixCacheReusedRatio: 0.5,
		KVTiers: &engine.TierSummary{G1HitRatio: 0.5, G2HitRatio: 0.1, Onboards: 3}}}
	for _, tc := range []struct {
		base, other *Run
		g2          [2]float64
	}{{off, on, [2]float64{0, 0.1}}, {on, off, [2]float64{0.1, 0}}} {
		c, err := Compare(tc.base, tc.other, 1)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Metric{}
		for _, m := range c.Metrics {
			got[m.Key] = m
		}
		g1, g2 := got["kv_tiers.g1_hit_ratio"], got["kv_tiers.g2_hit_ratio"]
		if g1.Base != 0.5 || g1.Other != 0.5 || g2.Base != tc.g2[0] || g2.Other != tc.g2[1] {
			t.Errorf("g1 %+v g2 %+v", g1, g2)
		}
	}
	for _, m := range mustCompare(t, off, off).Metrics {
		if len(m.Key) > 9 && m.Key[:9] == "kv_tiers." {
			t.Errorf("runs without tiers compare %s", m.Key)
		}
	}
}

func mustCompare(t *testing.T, a, b *Run) *Comparison {
	t.Helper()
	c, err := Compare(a, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
