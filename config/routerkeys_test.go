package config

import (
	"slices"
	"strings"
	"testing"
)

// The router key blocks keep what each key was before they were one type: the order of the
// dimensions, which keys only kv_router reads, and a fingerprint without any key at Dynamo's
// default; a key off its default adds exactly itself.
func TestRouterKeyBlocks(t *testing.T) {
	if got := strings.Join(IndexKVKnobs(), " "); got != "use_kv_events router_ttl_secs router_kv_event_delay_ms router_predicted_ttl_secs overlap_score_credit_decay host_cache_hit_weight disk_cache_hit_weight" {
		t.Errorf("IndexKVKnobs %q", got)
	}
	if got := strings.Join(KVLoadKeys(), " "); got != "router_track_active_blocks router_assume_kv_reuse router_track_prefill_tokens router_track_output_blocks router_active_sequence_stride router_prefill_load_model router_queue_threshold router_queue_policy" {
		t.Errorf("KVLoadKeys %q", got)
	}
	base := Default().Fingerprint()
	offDefault := map[string]string{"true": "false", "false": "true", "none": "1", "1": "2", "0": "3", "fcfs": "wspt",
		"7": "3.5", "0.75": "0.5", "0.25": "0.5"}
	for _, b := range routerKeyBlocks() {
		for _, k := range b {
			if i := slices.IndexFunc(base, func(s Setting) bool { return s.Key == "search_space."+k.key }); i >= 0 {
				t.Errorf("the seed's fingerprint lists %s at its default", k.key)
			}
			other, ok := offDefault[k.def]
			if k.key == KeyPrefillLoadModel {
				other = "aic"
			} else if !ok {
				other = "7"
			}
			f := Default()
			if err := f.Set(k.key + "=" + other); err != nil {
				t.Errorf("%s=%s: %v", k.key, other, err)
				continue
			}
			if d := Diff(base, f.Fingerprint()); len(d) != 1 || d[0].Key != "search_space."+k.key {
				t.Errorf("%s=%s changes the fingerprint by %v, want itself alone", k.key, other, d)
			}
		}
	}
}

// One check for every list value: the router keys' errors say what File.checkKnob's say for
// other keys — the allowed values, or the range — naming the file, line and key; a value in
// another case is refused (it used to pass the check and then route as the default:
// "WSPT" ran first-come-first-served).
func TestRouterKeyErrors(t *testing.T) {
	for line, want := range map[string]string{
		"router_track_prefill_tokens: [maybe]":   `k.yaml:2: search_space.router_track_prefill_tokens: unsupported value "maybe" (want one of true, false)`,
		"use_kv_events: [maybe]":                 `k.yaml:2: search_space.use_kv_events: unsupported value "maybe" (want one of true, false)`,
		"router_queue_policy: [WSPT]":            `k.yaml:2: search_space.router_queue_policy: unsupported value "WSPT" (want one of fcfs, wspt, lcfs)`,
		"router_prefill_load_model: [AIC]":       `k.yaml:2: search_space.router_prefill_load_model: unsupported value "AIC" (want one of none, aic)`,
		"router_queue_threshold: [-1]":           `k.yaml:2: search_space.router_queue_threshold: value "-1" out of range: want none or a number in [0, 1e+06]`,
		"active_prefill_tokens_threshold: [0.5]": `k.yaml:2: search_space.active_prefill_tokens_threshold: value "0.5" out of range: want none or an integer in [0, 1e+12]`,
		"router_active_sequence_stride: [0]":     `k.yaml:2: search_space.router_active_sequence_stride: value "0" out of range: want an integer in [1, 65536]`,
		"router_replicas: [none]":                `k.yaml:2: search_space.router_replicas: value "none" out of range: want an integer in [1, 64]`,
		"router_ttl_secs: [86401]":               `k.yaml:2: search_space.router_ttl_secs: value "86401" out of range: want a number in [0, 86400]`,
	} {
		_, err := Parse([]byte("search_space:\n  "+line+"\n"), "k.yaml")
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v\nwant %s", line, err, want)
		}
	}
}
