package router

import (
	"fmt"
	"math"
)

// Lower KV tiers in the router's score, as Dynamo's indexer and selector count them
// (ai-dynamo/dynamo lib/kv-router/src/indexer/lower_tier_indexers.rs @ 1783f723,
// query_lower_tiers; lib/kv-router/src/scheduling/selector/default.rs, the worker's credit;
// weights and bounds from lib/kv-router/src/scheduling/config.rs @ 057096c3): engines
// publish KV events naming the storage tier, one index per tier keeps which worker holds
// which block there, and a request's match on worker w walks on from where its device
// match stopped — first through w's host blocks, then, from where those stop, through its
// disk blocks. The credit against the prefill load becomes
//
//	credit · device_w + host_cache_hit_weight · host_w + disk_cache_hit_weight · disk_w
//
// and the booked prefill tokens stay the request's tokens beyond its device match.

// StorageTier is where a KV event's blocks are, as Dynamo's StorageTier names them.
type StorageTier uint8

const (
	TierDevice StorageTier = 0 // the GPU cache (G1); the index of cached.go
	TierHost   StorageTier = 2 // host memory (G2, HostPinned)
	TierDisk   StorageTier = 3 // local disk (G3)
)

// TierWeights are the lower tiers' credits per matched block (Dynamo's
// host_cache_hit_weight and disk_cache_hit_weight, each in [0, 1]).
type TierWeights struct {
	Host float64 `json:"host_cache_hit_weight"`
	Disk float64 `json:"disk_cache_hit_weight"`
}

// DefaultTierWeights are Dynamo's defaults at 057096c3.
func DefaultTierWeights() TierWeights { return TierWeights{Host: 0.75, Disk: 0.25} }

func (t TierWeights) validate() error {
	for _, k := range []struct {
		name string
		v    float64
	}{{"host_cache_hit_weight", t.Host}, {"disk_cache_hit_weight", t.Disk}} {
		if math.IsNaN(k.v) || k.v < 0 || k.v > 1 {
			return fmt.Errorf("%s: %v must be in [0, 1]", k.name, k.v)
		}
	}
	return nil
}

// tierKey is one engine block: sub-block sub of the trace block keyed key.
type tierKey struct {
	key uint64
	sub uint8
}

// tierIndex is, per lower tier and worker, the blocks the worker holds there.
type tierIndex struct {
	w          TierWeights
	host, disk []map[tierKey]struct{}
	hostN      []int // per worker: host blocks matched by the last walk
	diskN      []int
	cost       []float64 // per worker: the last tieredCosts
}

func newTierIndex(w TierWeights, workers int) *tierIndex {
	t := &tierIndex{w: w, host: make([]map[tierKey]struct{}, workers), disk: make([]map[tierKey]struct{}, workers),
		hostN: make([]int, workers), diskN: make([]int, workers), cost: make([]float64, workers)}
	for i := range workers {
		t.host[i], t.disk[i] = map[tierKey]struct{}{}, map[tierKey]struct{}{}
	}
	return t
}

// applyTier updates the lower-tier index with a KV event of a lower tier; a router without
// lower tiers ignores it, as an indexer that never allocated the tier does.
func (r *Router) applyTier(ev *KVEvent) {
	t := r.tiers
	if t == nil {
		return
	}
	m := t.host
	if ev.Tier == TierDisk {
		m = t.disk
	}
	set := m[ev.Worker]
	for i, h := range ev.Hashes {
		k := tierKey{key: h} // an ungrouped router's blocks are their own trace blocks
		if ev.Keys != nil {
			k = tierKey{ev.Keys[i], ev.Subs[i]}
		}
		if ev.Kind == BlocksStored {
			set[k] = struct{}{}
		} else {
			delete(set, k)
		}
	}
}

// walkTiers fills hostN and diskN for hashes (the request's trace-block keys per engine
// block), each worker starting where its device overlap stops.
func (r *Router) walkTiers(hashes []uint64) {
	t := r.tiers
	n := len(hashes)
	for w := range r.workers {
		j := r.overlap[w]
		from := j
		for ; j < n; j++ {
			if _, ok := t.host[w][tierKey{hashes[j-j%r.g], uint8(j % r.g)}]; !ok {
				break
			}
		}
		t.hostN[w] = j - from
		from = j
		for ; j < n; j++ {
			if _, ok := t.disk[w][tierKey{hashes[j-j%r.g], uint8(j % r.g)}]; !ok {
				break
			}
		}
		t.diskN[w] = j - from
	}
}

// chooseTiered is kvPolicy.choose with the lower tiers' credit (and the credit's decay).
func chooseTiered(r *Router, req *Request) int {
	cost := r.tieredCosts(req)
	if r.cfg.Temperature == 0 {
		return argminRandomTie(r, cost)
	}
	return softmaxSample(r, cost, r.cfg.Temperature)
}

// tieredCosts prices every worker for req with the lower tiers' credit (and the credit's
// decay), in the tier index's own buffer.
func (r *Router) tieredCosts(req *Request) []float64 {
	r.walkTiers(req.BlockHashes)
	t := r.tiers
	n := r.workers
	load, overlap, active := r.view[:n], r.overlap[:n], r.activePrefix[:n]
	lo, reqBlocks := decayBase(load, req, r.cfg.BlockSize)
	k := newKVCost(r.cfg, req)
	cost := t.cost[:n]
	for w := range cost {
		device := r.cfg.OverlapScoreCredit
		if d := r.cfg.OverlapScoreCreditDecay; d > 0 {
			device /= 1 + d*(float64(load[w].PrefillTokens-lo)/float64(r.cfg.BlockSize))/reqBlocks
		}
		credit := device*float64(overlap[w]) + t.w.Host*float64(t.hostN[w]) + t.w.Disk*float64(t.diskN[w])
		l := &load[w]
		prefill := max(0, float64(l.PrefillTokens+k.isl)/k.bs-credit)
		cost[w] = k.scale*prefill + float64(l.ActiveBlocks+k.blocks-active[w]) + l.OutputBlocks
	}
	return cost
}
