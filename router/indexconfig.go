package router

import (
	"fmt"
	"math"
)

// IndexConfig holds the knobs of how a router knows the fleet: from KV events (after a
// propagation delay) or, with events off, from its own routing decisions expiring after a
// TTL (approx.go); how much a busy worker's cached prefix is still worth (the overlap
// credit's decay); and how many routers share the fleet, each with its own view, with or
// without replica sync (replicas.go). The zero value but for TTLSecs is Dynamo's default.
type IndexConfig struct {
	// NoKVEvents is Dynamo's --no-router-kv-events (use_kv_events false): the router ignores
	// the workers' KV events and predicts each worker's cache from its own routing decisions.
	NoKVEvents bool
	// TTLSecs is --router-ttl-secs: how long a predicted block stays in the index after the
	// last request routed with it (events off only).
	TTLSecs float64
	// KVEventDelayUS is how long a KV event takes from the engine's cache change to the
	// router's index (events on only). Dynamo has no such knob: it is the event plane's latency.
	KVEventDelayUS int64
	// OverlapScoreCreditDecay is --router-kv-overlap-score-credit-decay: a worker's overlap
	// credit is divided by 1 + decay × (its prefill tokens above the least-loaded worker's, in
	// request-sized units).
	OverlapScoreCreditDecay float64
	// Replicas is how many routers (frontends) share the fleet; requests reach them in turn.
	// 0 and 1 both mean one router.
	Replicas int
	// PredictedTTLSecs is --router-predicted-ttl-secs (events on only; 0: off): beside the
	// events' index the router keeps a second one of its own routing decisions, expiring
	// after this TTL, and credits each worker the longer of the two overlaps.
	PredictedTTLSecs float64
	// ReplicaSync is --router-replica-sync: every router books every router's requests in its
	// active load, ReplicaSyncDelayUS after the routing router does.
	ReplicaSync        bool
	ReplicaSyncDelayUS int64
	// SessionAffinityTTLSecs is --router-session-affinity-ttl-secs (0: off): a session's
	// requests go to the worker its first was routed to until the session has been idle this
	// long (affinity.go).
	SessionAffinityTTLSecs float64 `json:",omitempty"`
}

// DefaultIndexConfig is Dynamo's default: KV events on without delay, TTL 120 s (unused with
// events on), no credit decay, one router, no replica sync.
func DefaultIndexConfig() IndexConfig { return IndexConfig{TTLSecs: DefaultTTLSecs} }

// DefaultTTLSecs is Dynamo's router_ttl_secs default.
const DefaultTTLSecs = 120

// MaxReplicas bounds router_replicas: every replica keeps its own index of the fleet.
const MaxReplicas = 64

// maxDelayUS bounds the delays (one day), so a delivery time stays far inside int64.
const maxDelayUS = 24 * 3600 * 1_000_000

func (c IndexConfig) validate() error {
	for _, k := range []struct {
		name string
		v    float64
	}{
		{"router_ttl_secs", c.TTLSecs},
		{"overlap_score_credit_decay", c.OverlapScoreCreditDecay},
		{"router_predicted_ttl_secs", c.PredictedTTLSecs},
	} {
		if math.IsNaN(k.v) || math.IsInf(k.v, 0) || k.v < 0 {
			return fmt.Errorf("%s: %v must be a finite number >= 0", k.name, k.v)
		}
	}
	if c.TTLSecs > maxDelayUS/1e6 || c.PredictedTTLSecs > maxDelayUS/1e6 {
		return fmt.Errorf("router_ttl_secs, router_predicted_ttl_secs: %v, %v: longer than a day", c.TTLSecs, c.PredictedTTLSecs)
	}
	if c.PredictedTTLSecs > 0 && c.NoKVEvents {
		// Dynamo's validate_kv_router_config refuses the combination as well.
		return fmt.Errorf("router_predicted_ttl_secs: %v needs use_kv_events true (with events off every decision is predicted already)", c.PredictedTTLSecs)
	}
	for _, k := range []struct {
		name string
		v    int64
	}{
		{"router_kv_event_delay_ms", c.KVEventDelayUS},
		{"router_replica_sync_delay_ms", c.ReplicaSyncDelayUS},
	} {
		if k.v < 0 || k.v > maxDelayUS {
			return fmt.Errorf("%s: %g out of range (0 to one day)", k.name, float64(k.v)/1000)
		}
	}
	if c.Replicas < 0 || c.Replicas > MaxReplicas {
		return fmt.Errorf("router_replicas: %d out of range (1..%d)", c.Replicas, MaxReplicas)
	}
	return nil
}

// ttlUS is the TTL in simulation microseconds.
func (c IndexConfig) ttlUS() int64 { return int64(math.Round(c.TTLSecs * 1e6)) }

// replicasSupported refuses several routers with the load knobs only one router models: the
// router queue, busy thresholds, the AIC prefill-load model and output-block tracking need
// the engine's admission calls, which Replicas does not take.
func (c Config) replicasSupported() error {
	if c.Replicas > 1 && (c.Load.Admission() || !c.Load.PrefillLoadModel.None() || c.Load.TrackOutputBlocks) {
		return fmt.Errorf("router_replicas: %d routers with the router queue, busy thresholds, router_prefill_load_model aic or router_track_output_blocks are not modelled (one router only)", c.Replicas)
	}
	return nil
}
