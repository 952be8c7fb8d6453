package backend

import (
	"slices"
	"strconv"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/kvtier"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/tui"
)

// The explorer's index knobs (docs/router.md): their ladders, where they start, and what they
// set in a run and in the replay command that repeats it.

// indexSpace is the index knobs' ladders, each with the experiment's own values added.
func indexSpace(f *config.File) tui.IndexSpace {
	nums := func(key string, base ...float64) []float64 {
		for _, v := range f.Values(key) {
			base = append(base, v.Num)
		}
		slices.Sort(base)
		return slices.Compact(base)
	}
	return tui.IndexSpace{
		TTLs:          nums(config.KeyRouterTTLSecs, 1, 10, 30, router.DefaultTTLSecs, 600),
		EventDelays:   nums(config.KeyRouterKVEventDelayMS, 0, 1, 10, 100, 1000),
		PredictedTTLs: nums(config.KeyRouterPredictedTTLSecs, 0, 1, 10, 30, router.DefaultTTLSecs),
		Decays:        nums(config.KeyOverlapScoreCreditDecay, 0, 0.25, 0.5, 1, 2),
		Routers:       ladder(powersOfTwo(1, router.MaxReplicas), ints(f.Values(config.KeyRouterReplicas))...),
		SyncDelays:    nums(config.KeyRouterReplicaSyncDelayMS, 0, 1, 10, 100, 1000),
		AffinityTTLs:  nums(config.KeyRouterSessionAffinityTTLSecs, 0, 1, 10, 60, 600, 3600),
		G2Blocks:      ladder([]int{0, 8192, 16384, 32768, 65536, 131072}, ints(f.Values(config.KeyNumG2Blocks))...),
		HitWeights:    nums(config.KeyHostCacheHitWeight, append([]float64{0, 0.25, 0.5, 0.75, 1}, nums(config.KeyDiskCacheHitWeight)...)...),
	}
}

// indexKnobs reads the index knobs of a point.
func indexKnobs(val func(string) config.Value) tui.IndexKnobs {
	return tui.IndexKnobs{
		NoKVEvents:   val(config.KeyUseKVEvents).Text == "false",
		TTLSecs:      val(config.KeyRouterTTLSecs).Num,
		EventDelayMS: val(config.KeyRouterKVEventDelayMS).Num,
		PredictedTTL: val(config.KeyRouterPredictedTTLSecs).Num,
		Decay:        val(config.KeyOverlapScoreCreditDecay).Num,
		Routers:      int(val(config.KeyRouterReplicas).Num),
		Sync:         val(config.KeyRouterReplicaSync).Text == "true",
		SyncDelayMS:  val(config.KeyRouterReplicaSyncDelayMS).Num,
		AffinityTTL:  val(config.KeyRouterSessionAffinityTTLSecs).Num,
		G2Blocks:     int(val(config.KeyNumG2Blocks).Num),
		HostWeight:   val(config.KeyHostCacheHitWeight).Num,
		DiskWeight:   val(config.KeyDiskCacheHitWeight).Num,
	}
}

// indexConfig is the router's IndexConfig of the knobs.
func indexConfig(x tui.IndexKnobs) router.IndexConfig {
	us := func(ms float64) int64 { return int64(ms * 1000) }
	predicted, affinity := x.PredictedTTL, x.AffinityTTL
	if x.Routers > 1 {
		affinity = 0 // not modelled with several routers (the row is hidden)
	}
	if x.NoKVEvents {
		predicted = 0 // moot with events off (the row is hidden)
	}
	return router.IndexConfig{NoKVEvents: x.NoKVEvents, TTLSecs: x.TTLSecs, KVEventDelayUS: us(x.EventDelayMS), PredictedTTLSecs: predicted,
		OverlapScoreCreditDecay: x.Decay, Replicas: max(1, x.Routers), ReplicaSync: x.Sync, ReplicaSyncDelayUS: us(x.SyncDelayMS),
		SessionAffinityTTLSecs: affinity}
}

// tierConfig is the KV tiers of the knobs for a worker of capacity c (nil, nil with G2 off):
// the experiment's tier settings (base, when it has tiers) with the knobs' G2 size, blocks of
// the explored deployment's per-GPU KV bytes unless the experiment sets kv_bytes_per_token.
func tierConfig(f *config.File, base *kvtier.Config, x tui.IndexKnobs, c model.Capacity) (*kvtier.Config, *router.TierWeights) {
	if x.G2Blocks == 0 {
		return nil, nil
	}
	tc := kvtier.Config{G1ToG2GBps: kvtier.DefaultG1G2GBps, G2ToG1GBps: kvtier.DefaultG1G2GBps, G2ToG3GBps: kvtier.DefaultG2G3GBps,
		G3ToG2GBps: kvtier.DefaultG2G3GBps, OffloadBatchSize: kvtier.DefaultOffloadBatchSize}
	if base != nil {
		tc = *base
	}
	tc.NumG2Blocks = x.G2Blocks
	perToken := c.KVBytesPerToken
	if v := f.Values(config.KeyKVBytesPerToken); len(v) > 0 && v[0].Num > 0 {
		perToken = int64(v[0].Num)
	}
	tc.BlockBytes = int64(c.BlockSize) * perToken
	return &tc, &router.TierWeights{Host: x.HostWeight, Disk: x.DiskWeight}
}

// indexSets are the --set overrides of the index knobs that differ from was (the point a
// bare replay runs).
func indexSets(x, was tui.IndexKnobs) []string {
	fl := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var sets []string
	add := func(key, v, w string) {
		if v != w {
			sets = append(sets, key+"="+v)
		}
	}
	add(config.KeyUseKVEvents, strconv.FormatBool(!x.NoKVEvents), strconv.FormatBool(!was.NoKVEvents))
	add(config.KeyRouterTTLSecs, fl(x.TTLSecs), fl(was.TTLSecs))
	add(config.KeyRouterKVEventDelayMS, fl(x.EventDelayMS), fl(was.EventDelayMS))
	add(config.KeyRouterPredictedTTLSecs, fl(x.PredictedTTL), fl(was.PredictedTTL))
	add(config.KeyOverlapScoreCreditDecay, fl(x.Decay), fl(was.Decay))
	add(config.KeyRouterReplicas, strconv.Itoa(max(1, x.Routers)), strconv.Itoa(max(1, was.Routers)))
	add(config.KeyRouterReplicaSync, strconv.FormatBool(x.Sync), strconv.FormatBool(was.Sync))
	add(config.KeyRouterReplicaSyncDelayMS, fl(x.SyncDelayMS), fl(was.SyncDelayMS))
	add(config.KeyRouterSessionAffinityTTLSecs, fl(x.AffinityTTL), fl(was.AffinityTTL))
	add(config.KeyNumG2Blocks, strconv.Itoa(x.G2Blocks), strconv.Itoa(was.G2Blocks))
	add(config.KeyHostCacheHitWeight, fl(x.HostWeight), fl(was.HostWeight))
	add(config.KeyDiskCacheHitWeight, fl(x.DiskWeight), fl(was.DiskWeight))
	return sets
}
