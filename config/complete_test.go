package config

import (
	"slices"
	"testing"
)

// Every key completion offers is one --set accepts, and every value it offers for a key is
// accepted there: completion cannot suggest what the parser refuses.
func TestCompletionOffersOnlyWhatSetAccepts(t *testing.T) {
	keys := SetKeys()
	for _, want := range []string{"router_mode", "search_space.router_mode", "replicas", "goal.sla.ttft_ms", "workload.replay_concurrency"} {
		if !slices.Contains(keys, want) {
			t.Errorf("SetKeys lacks %s", want)
		}
	}
	offered := 0
	for _, k := range keys {
		for _, v := range SetValues(k) {
			offered++
			f := Default()
			if err := f.Set(k + "=" + v); err != nil {
				t.Errorf("--set %s=%s (offered by completion): %v", k, v, err)
			}
		}
	}
	if offered < 20 {
		t.Errorf("completion offers %d values over all keys", offered)
	}
	if v := SetValues("router_mode"); !slices.Equal(v, []string{"kv_router", "round_robin", "random", "least_loaded", "power_of_two_choices", "device_aware_weighted"}) {
		t.Errorf("router_mode values %v", v)
	}
	if v := SetValues("hardware_sku"); !slices.Contains(v, "b200_sxm") || !slices.Contains(v, "h200_sxm") {
		t.Errorf("hardware_sku values %v", v)
	}
	if v := SetValues("use_kv_events"); !slices.Equal(v, []string{"true", "false"}) {
		t.Errorf("use_kv_events values %v", v)
	}
	if v := SetValues("overlap_score_credit"); v != nil {
		t.Errorf("a number offers %v", v)
	}
}
