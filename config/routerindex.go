package config

import (
	"fmt"
	"math"

	"github.com/routerlab/routerlab/router"
)

// The router's index, credit-decay and replica knobs (router.IndexConfig), under Dynamo's
// names (lib/kv-router/src/scheduling/config.rs, KvRouterConfig, at 057096c3) where Dynamo
// has the knob; the two delays are the event plane's latency, which Dynamo does not set.
const (
	KeyUseKVEvents              = "use_kv_events"
	KeyRouterTTLSecs            = "router_ttl_secs"
	KeyRouterKVEventDelayMS     = "router_kv_event_delay_ms"
	KeyOverlapScoreCreditDecay  = "overlap_score_credit_decay"
	KeyRouterPredictedTTLSecs   = "router_predicted_ttl_secs"
	KeyRouterReplicas           = "router_replicas"
	KeyRouterReplicaSync        = "router_replica_sync"
	KeyRouterReplicaSyncDelayMS = "router_replica_sync_delay_ms"
	// KeyRouterSessionAffinityTTLSecs is Dynamo's --router-session-affinity-ttl-secs
	// (docs/components/router/router-configuration.md at 057096c3; router/affinity.go).
	KeyRouterSessionAffinityTTLSecs = "router_session_affinity_ttl_secs"
)

// indexBlock is these knobs in the order dimensions are reported (after the load keys),
// with Dynamo's defaults, then the KV tiers' (kvtiers.go); the replica knobs apply in every
// mode, the rest in kv_router only.
var indexBlock = append(routerKeyBlock{
	{KeyUseKVEvents, "true", true, boolKey},
	{KeyRouterTTLSecs, num(router.DefaultTTLSecs), true, numKey(0, day, false)},
	{KeyRouterKVEventDelayMS, "0", true, numKey(0, day*1000, false)},
	{KeyRouterPredictedTTLSecs, "0", true, numKey(0, day, false)},
	{KeyOverlapScoreCreditDecay, "0", true, numKey(0, 1e6, false)},
	{KeyRouterReplicas, "1", false, numKey(1, router.MaxReplicas, true)},
	{KeyRouterReplicaSync, "false", false, boolKey},
	{KeyRouterReplicaSyncDelayMS, "0", false, numKey(0, day*1000, false)},
	{KeyRouterSessionAffinityTTLSecs, "0", false, numKey(0, router.MaxSessionAffinityTTLSecs, true)},
}, tierBlock...)

// day is the longest TTL, in seconds (delays: in milliseconds).
const day = 86400.0

// IndexKeys lists the index knobs' search_space keys.
func IndexKeys() []string { return indexBlock.names() }

// IndexKVKnobs lists the index knobs only kv_router reads (a sweep leaves them out of other
// modes' configurations).
func IndexKVKnobs() []string { return indexBlock.kvOnlyNames() }

// indexConfig reads the index knobs of one point.
func indexConfig(val func(string) Value) router.IndexConfig {
	us := func(key string) int64 { return int64(math.Round(val(key).Num * 1000)) }
	predicted := val(KeyRouterPredictedTTLSecs).Num
	if val(KeyUseKVEvents).Text == "false" {
		predicted = 0 // moot with events off (IndexKnobIgnored); checkIndex refuses it alone
	}
	return router.IndexConfig{
		NoKVEvents:              val(KeyUseKVEvents).Text == "false",
		TTLSecs:                 val(KeyRouterTTLSecs).Num,
		KVEventDelayUS:          us(KeyRouterKVEventDelayMS),
		PredictedTTLSecs:        predicted,
		OverlapScoreCreditDecay: val(KeyOverlapScoreCreditDecay).Num,
		Replicas:                int(val(KeyRouterReplicas).Num),
		ReplicaSync:             val(KeyRouterReplicaSync).Text == "true",
		ReplicaSyncDelayUS:      us(KeyRouterReplicaSyncDelayMS),
		SessionAffinityTTLSecs:  val(KeyRouterSessionAffinityTTLSecs).Num,
	}
}

// IndexKnobIgnored reports whether index knob key has no effect at point p of f, given the
// point's other index knobs: router_ttl_secs with KV events on, router_kv_event_delay_ms
// with them off, replica sync with one router, and its delay without sync. A sweep leaves
// such a knob out of a configuration.
func IndexKnobIgnored(f *File, p Point, key string) bool {
	at := func(k string) Value {
		v, _ := f.At(p, k)
		return v
	}
	if ignored, ok := tierKnobIgnored(at, key); ok {
		return ignored
	}
	events := at(KeyUseKVEvents).Text != "false"
	one := at(KeyRouterReplicas).Num == 1
	switch key {
	case KeyRouterTTLSecs:
		return events
	case KeyRouterKVEventDelayMS, KeyRouterPredictedTTLSecs:
		return !events
	case KeyRouterReplicaSync:
		return one
	case KeyRouterReplicaSyncDelayMS:
		return one || at(KeyRouterReplicaSync).Text != "true"
	}
	return false
}

// checkIndex refuses a predicted-block TTL that no point can use: with KV events off in every
// point, as Dynamo refuses router_predicted_ttl_secs without use_kv_events; and session
// affinity beside several routers.
func (f *File) checkIndex() error {
	if err := f.checkAffinity(); err != nil {
		return err
	}
	for _, v := range f.Values(KeyUseKVEvents) {
		if v.Text != "false" {
			return nil
		}
	}
	for _, v := range f.Values(KeyRouterPredictedTTLSecs) {
		if v.Num > 0 {
			return &Error{File: f.Name, Key: "search_space." + KeyRouterPredictedTTLSecs,
				Msg: fmt.Sprintf("%s needs use_kv_events true (with events off every routing decision is predicted already)", v.Text)}
		}
	}
	return nil
}

// checkAffinity refuses session affinity in a file that also has several routers: bindings
// shared between routers are not modelled (router/affinity.go).
func (f *File) checkAffinity() error {
	for _, a := range f.Values(KeyRouterSessionAffinityTTLSecs) {
		for _, r := range f.Values(KeyRouterReplicas) {
			if a.Num > 0 && r.Num > 1 {
				return &Error{File: f.Name, Key: "search_space." + KeyRouterSessionAffinityTTLSecs,
					Msg: fmt.Sprintf("%s with router_replicas %s is not modelled (Dynamo shares bindings between routers best effort); use one router", a.Text, r.Text)}
			}
		}
	}
	return nil
}
