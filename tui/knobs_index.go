package tui

import (
	"fmt"
	"strconv"
)

// IndexKnobs are the router's index knobs (docs/router.md): KV events or the router's own
// guesses with a TTL, the events' delay, the overlap credit's decay, several routers with or
// without sync, and the KV tiers. The zero value but for TTLSecs and the hit weights is
// Dynamo's default.
type IndexKnobs struct {
	NoKVEvents   bool    // use_kv_events false
	TTLSecs      float64 // router_ttl_secs
	EventDelayMS float64 // router_kv_event_delay_ms
	PredictedTTL float64 // router_predicted_ttl_secs (0: off)
	Decay        float64 // overlap_score_credit_decay
	Routers      int     // router_replicas (0 reads as 1)
	Sync         bool    // router_replica_sync
	SyncDelayMS  float64 // router_replica_sync_delay_ms
	AffinityTTL  float64 // router_session_affinity_ttl_secs (0: off)
	// KV tiers (docs/kv-tiers.md): G2 blocks per worker (0: off) and the router's credit per
	// host and disk block.
	G2Blocks               int     // num_g2_blocks
	HostWeight, DiskWeight float64 // host_cache_hit_weight, disk_cache_hit_weight
}

// IndexSpace is the values the index knobs step through; with no Routers the explorer has
// no index knobs.
type IndexSpace struct {
	TTLs, EventDelays, PredictedTTLs, Decays, SyncDelays, AffinityTTLs []float64
	Routers                                                            []int
	G2Blocks                                                           []int // num_g2_blocks ladder (0 first: off)
	HitWeights                                                         []float64
}

// The index knobs' rows follow router_temperature in the pane; their ids follow the load
// group's (knobgroups.go).
const (
	knobKVEvents knob = numKnobs + knob(len(loadKeys)) + iota
	knobTTL
	knobEventDelay
	knobPredictedTTL
	knobDecay
	knobRouters
	knobSync
	knobSyncDelay
	knobAffinityTTL
	knobG2Blocks
	knobHostWeight
	knobDiskWeight
	endIndexKnobs
)

func (k knob) isIndex() bool { return k >= knobKVEvents && k < endIndexKnobs }

func (k knob) indexKey() string {
	return [...]string{"use_kv_events", "router_ttl_secs", "router_kv_event_delay_ms", "router_predicted_ttl_secs", "overlap_score_credit_decay",
		"router_replicas", "router_replica_sync", "router_replica_sync_delay_ms", "router_session_affinity_ttl_secs",
		"num_g2_blocks", "host_cache_hit_weight", "disk_cache_hit_weight"}[k-knobKVEvents]
}

// indexLabel is index knob k's name in the pane, short enough not to be cut at 80 columns
// (the help line names the key in full).
func (k knob) indexLabel() string {
	return [...]string{"use_kv_events", "router_ttl_secs", "kv_event_delay_ms", "predicted_ttl_secs", "credit_decay",
		"router_replicas", "replica_sync", "replica_sync_delay_ms", "affinity_ttl_secs",
		"g2_blocks", "host_hit_weight", "disk_hit_weight"}[k-knobKVEvents]
}

func (k knob) indexAbout() string {
	return [...]string{
		"Dynamo --router-kv-events: on, the router indexes the workers' KV events; off, it guesses each cache from its own routing decisions",
		"Dynamo --router-ttl-secs (s), events off: a guessed block is forgotten this long after the last request routed with it",
		"KV event plane latency (ms), events on: how late the router's index learns of a cache change",
		"Dynamo --router-predicted-ttl-secs (s, 0 off), events on: the router also predicts blocks from its own decisions for this long",
		"Dynamo --router-kv-overlap-score-credit-decay (unitless): shrinks the cache credit of workers with more prefill than the least loaded",
		"Dynamo frontends (routers) in front of the fleet, requests reaching them in turn; each counts only its own load unless synced",
		"Dynamo --router-replica-sync: every router books every router's requests in its active load",
		"replica sync latency (ms): how late the other routers learn of a router's bookings and frees",
		"Dynamo --router-session-affinity-ttl-secs (s, 0 off): a session's requests stay on its first worker until idle this long",
		"KV tiers: host-memory (G2) blocks per worker that GPU evictions are offloaded to and hits onboarded from (0: off)",
		"Dynamo --router-host-cache-hit-weight (0–1): the router's credit per prefix block in a worker's host tier",
		"Dynamo --router-disk-cache-hit-weight (0–1): the credit per prefix block in its disk tier (G3, from the experiment file)",
	}[k-knobKVEvents]
}

// indexRows are the index knobs worth a row at ks: a TTL only with events off, an event
// delay only with them on, sync only with several routers, its delay only with sync, and
// session affinity with one router (Dynamo's bindings between routers are not modelled).
func (s Space) indexRows(ks Knobs) []knob {
	if len(s.Index.Routers) == 0 {
		return nil
	}
	x := ks.Index
	rows := []knob{knobKVEvents}
	if x.NoKVEvents {
		rows = append(rows, knobTTL)
	} else {
		rows = append(rows, knobEventDelay, knobPredictedTTL)
	}
	rows = append(rows, knobDecay, knobRouters)
	if x.Routers > 1 {
		rows = append(rows, knobSync)
		if x.Sync {
			rows = append(rows, knobSyncDelay)
		}
	} else if len(s.Index.AffinityTTLs) > 0 {
		rows = append(rows, knobAffinityTTL)
	}
	if len(s.Index.G2Blocks) > 0 {
		rows = append(rows, knobG2Blocks)
		if x.G2Blocks > 0 {
			rows = append(rows, knobHostWeight, knobDiskWeight)
		}
	}
	return rows
}

// kvOnly reports whether knob k changes nothing outside kv_router.
func (k knob) kvOnly() bool {
	switch k {
	case knobCredit, knobScale, knobTemperature, knobKVEvents, knobTTL, knobEventDelay, knobPredictedTTL, knobDecay, knobHostWeight, knobDiskWeight:
		return true
	}
	return false
}

func (k knob) indexValue(ks Knobs) string {
	x := ks.Index
	switch k {
	case knobKVEvents:
		return strconv.FormatBool(!x.NoKVEvents)
	case knobTTL:
		return formatNum(x.TTLSecs)
	case knobEventDelay:
		return formatNum(x.EventDelayMS)
	case knobPredictedTTL:
		return formatNum(x.PredictedTTL)
	case knobDecay:
		return formatNum(x.Decay)
	case knobRouters:
		return strconv.Itoa(max(1, x.Routers))
	case knobSync:
		return strconv.FormatBool(x.Sync)
	case knobAffinityTTL:
		return formatNum(x.AffinityTTL)
	case knobG2Blocks:
		return strconv.Itoa(x.G2Blocks)
	case knobHostWeight:
		return formatNum(x.HostWeight)
	case knobDiskWeight:
		return formatNum(x.DiskWeight)
	default:
		return formatNum(x.SyncDelayMS)
	}
}

// stepIndex is step for an index knob: like every knob it stops at its list's ends and says
// so.
func (s Space) stepIndex(ks Knobs, k knob, dir int) (Knobs, string) {
	x, sp := &ks.Index, s.Index
	before := *x
	// A switch's list starts at Dynamo's default: → leaves it, ← comes back.
	flip := func(v *bool, def bool) {
		next, _ := stepList([]string{strconv.FormatBool(def), strconv.FormatBool(!def)}, strconv.FormatBool(*v), dir)
		*v = next == "true"
	}
	switch k {
	case knobKVEvents:
		on := !x.NoKVEvents
		flip(&on, true)
		x.NoKVEvents = !on
	case knobTTL:
		x.TTLSecs = stepFloat(sp.TTLs, x.TTLSecs, dir)
	case knobEventDelay:
		x.EventDelayMS = stepFloat(sp.EventDelays, x.EventDelayMS, dir)
	case knobPredictedTTL:
		x.PredictedTTL = stepFloat(sp.PredictedTTLs, x.PredictedTTL, dir)
	case knobDecay:
		x.Decay = stepFloat(sp.Decays, x.Decay, dir)
	case knobRouters:
		x.Routers = stepInt(sp.Routers, max(1, x.Routers), dir)
	case knobSync:
		flip(&x.Sync, false)
	case knobSyncDelay:
		x.SyncDelayMS = stepFloat(sp.SyncDelays, x.SyncDelayMS, dir)
	case knobAffinityTTL:
		x.AffinityTTL = stepFloat(sp.AffinityTTLs, x.AffinityTTL, dir)
	case knobG2Blocks:
		x.G2Blocks = stepInt(sp.G2Blocks, x.G2Blocks, dir)
	case knobHostWeight:
		x.HostWeight = stepFloat(sp.HitWeights, x.HostWeight, dir)
	case knobDiskWeight:
		x.DiskWeight = stepFloat(sp.HitWeights, x.DiskWeight, dir)
	}
	if *x == before {
		return ks, k.atEnd(ks, dir)
	}
	return ks, ""
}

// changed is " key=value" for each index knob away from Dynamo's default that counts (the
// KV-only ones when kv is set), for a point's one-line description.
func (x IndexKnobs) changed(kv bool) string {
	out := ""
	if kv && x.NoKVEvents {
		out += " events=off ttl=" + formatNum(x.TTLSecs)
	}
	if kv && !x.NoKVEvents && x.EventDelayMS != 0 {
		out += " event_delay=" + formatNum(x.EventDelayMS) + "ms"
	}
	if kv && !x.NoKVEvents && x.PredictedTTL != 0 {
		out += " predicted_ttl=" + formatNum(x.PredictedTTL)
	}
	if kv && x.Decay != 0 {
		out += " decay=" + formatNum(x.Decay)
	}
	if x.Routers > 1 {
		out += fmt.Sprintf(" routers=%d", x.Routers)
		if x.Sync {
			out += " sync=" + formatNum(x.SyncDelayMS) + "ms"
		}
	}
	if x.AffinityTTL != 0 {
		out += " affinity_ttl=" + formatNum(x.AffinityTTL)
	}
	if x.G2Blocks > 0 {
		out += fmt.Sprintf(" g2=%d", x.G2Blocks)
		if kv {
			out += " host_w=" + formatNum(x.HostWeight) + " disk_w=" + formatNum(x.DiskWeight)
		}
	}
	return out
}
