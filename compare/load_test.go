package compare

import (
	"slices"
	"testing"

	"github.com/routerlab/routerlab/engine"
)

// A run with the load report compares its decode stall and imbalance like every other number.
func TestCompareShowsDecodeStallAndImbalance(t *testing.T) {
	base := &Run{Summary: engine.Summary{Load: &engine.LoadSummary{MeanTPOTStallMS: 2, TPOTStallShare: 0.2, DecodeImbalance: 1.1, BlockImbalance: 1.3}}}
	other := &Run{Summary: engine.Summary{Load: &engine.LoadSummary{MeanTPOTStallMS: 1, TPOTStallShare: 0.1, DecodeImbalance: 1.5, BlockImbalance: 1.2}}}
	c, err := Compare(base, other, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Metric{}
	for _, m := range c.Metrics {
		got[m.Key] = m
	}
	for key, abs := range map[string]float64{"load.mean_tpot_stall_ms": -1, "load.tpot_stall_share": -0.1, "load.decode_imbalance": 0.4, "load.kv_block_imbalance": -0.1} {
		m, ok := got[key]
		if !ok {
			t.Errorf("%s missing from the comparison", key)
			continue
		}
		if d := m.Abs - abs; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: difference %v, want %v", key, m.Abs, abs)
		}
	}
	keys, _ := Metrics(engine.Summary{})
	if slices.ContainsFunc(keys, func(k string) bool { return len(k) > 5 && k[:5] == "load." }) {
		t.Error("a run without the load report lists load metrics")
	}
}
