package config

import (
	"strings"
	"testing"

	"github.com/routerlab/routerlab/router"
)

// The index knobs: Dynamo's defaults leave the fingerprint as it was, --set reaches the
// router, the replay's default point takes Dynamo's default from a list, and a bad value is
// an error naming the file, line and key.
func TestIndexKnobs(t *testing.T) {
	def := Default()
	for _, s := range def.Fingerprint() {
		if _, ok := indexBlock.lookup(strings.TrimPrefix(s.Key, "search_space.")); ok {
			t.Errorf("default fingerprint lists %s", s.Key)
		}
	}
	f, cfg, _ := seedRun(t, "use_kv_events=false", "router_ttl_secs=30", "router_kv_event_delay_ms=2.5",
		"overlap_score_credit_decay=0.5", "router_replicas=4", "router_replica_sync=true", "router_replica_sync_delay_ms=1", "overlap_score_credit=2")
	want := router.IndexConfig{NoKVEvents: true, TTLSecs: 30, KVEventDelayUS: 2500, OverlapScoreCreditDecay: 0.5,
		Replicas: 4, ReplicaSync: true, ReplicaSyncDelayUS: 1000}
	if cfg.Router.IndexConfig != want || cfg.Router.OverlapScoreCredit != 2 {
		t.Errorf("router config %+v, want %+v and credit 2", cfg.Router, want)
	}
	if d := Diff(def.Fingerprint(), f.Fingerprint()); len(d) != 8 {
		t.Errorf("fingerprint changes %v, want the 8 knobs set", d)
	}

	g := Default()
	setAll(t, g, "use_kv_events=[false, true]", "router_replicas=[4, 1]")
	e, err := NewExperiment(g)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.EngineConfig(g.DefaultPoint())
	if err != nil {
		t.Fatal(err)
	}
	if c.Router.NoKVEvents || c.Router.Replicas != 1 {
		t.Errorf("default point of listed knobs: %+v, want Dynamo's default (events on, one router)", c.Router.IndexConfig)
	}

	bad := strings.Replace(string(seedYAML), "  router_temperature:", "  router_replicas: [1, 65]\n  router_temperature:", 1)
	if _, err := Parse([]byte(bad), "x.yaml"); err == nil || !strings.Contains(err.Error(), "x.yaml:") || !strings.Contains(err.Error(), "router_replicas") {
		t.Errorf("router_replicas 65: %v", err)
	}
	if err := Default().Apply([]string{"use_kv_events=false", "router_predicted_ttl_secs=5"}); err == nil || !strings.Contains(err.Error(), "router_predicted_ttl_secs") {
		t.Errorf("predicted TTL with events off: %v", err)
	}
	if err := Default().Apply([]string{"use_kv_events=[true, false]", "router_predicted_ttl_secs=5"}); err != nil {
		t.Errorf("predicted TTL with events on in some points: %v", err)
	}
	for _, s := range []string{"use_kv_events=maybe", "router_ttl_secs=-1", "overlap_score_credit_decay=-1", "router_replica_sync_delay_ms=1e12", "router_replicas=1.5"} {
		if err := Default().Set(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}

// IndexKnobIgnored: a knob the point's other knobs make moot.
func TestIndexKnobIgnored(t *testing.T) {
	f := Default()
	setAll(t, f, "use_kv_events=[true, false]", "router_replicas=[1, 2]", "router_replica_sync=[false, true]")
	point := func(vals map[string]int) Point { return pointOf(f, vals) }
	p := point(map[string]int{KeyUseKVEvents: 0, KeyRouterReplicas: 0})
	if !IndexKnobIgnored(f, p, KeyRouterTTLSecs) || IndexKnobIgnored(f, p, KeyRouterKVEventDelayMS) || !IndexKnobIgnored(f, p, KeyRouterReplicaSync) {
		t.Error("events on, one router: TTL and sync should be moot, the event delay not")
	}
	p = point(map[string]int{KeyUseKVEvents: 1, KeyRouterReplicas: 1, KeyRouterReplicaSync: 1})
	if IndexKnobIgnored(f, p, KeyRouterTTLSecs) || !IndexKnobIgnored(f, p, KeyRouterKVEventDelayMS) || IndexKnobIgnored(f, p, KeyRouterReplicaSyncDelayMS) {
		t.Error("events off, two synced routers: TTL and sync delay count, the event delay is moot")
	}
}

// Session affinity: off by default and then out of the fingerprint; --set reaches the router
// and the fingerprint; a list is a sweep dimension; several routers beside it are refused.
func TestSessionAffinityKnob(t *testing.T) {
	def := Default()
	f, cfg, _ := seedRun(t, "router_session_affinity_ttl_secs=600")
	if cfg.Router.SessionAffinityTTLSecs != 600 {
		t.Errorf("router config %+v, want affinity 600 s", cfg.Router.IndexConfig)
	}
	d := Diff(def.Fingerprint(), f.Fingerprint())
	if len(d) != 1 || d[0].Key != "search_space."+KeyRouterSessionAffinityTTLSecs || d[0].New != "600" {
		t.Errorf("fingerprint changes %v, want the affinity TTL alone", d)
	}
	g := Default()
	setAll(t, g, "router_session_affinity_ttl_secs=[0, 60, 600]")
	found := false
	for _, dim := range g.Dimensions() {
		found = found || dim.Key == KeyRouterSessionAffinityTTLSecs && len(dim.Values) == 3
	}
	if !found {
		t.Errorf("dimensions %v lack the affinity TTL's three values", g.Dimensions())
	}
	if err := Default().Apply([]string{"router_session_affinity_ttl_secs=60", "router_replicas=[1, 2]"}); err == nil || !strings.Contains(err.Error(), "with router_replicas 2 is not modelled") {
		t.Errorf("affinity with two routers: %v", err)
	}
	if err := Default().Set("router_session_affinity_ttl_secs=1.5"); err == nil {
		t.Error("1.5 s accepted")
	}
}
