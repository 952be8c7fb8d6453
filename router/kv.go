package router

import "math"

// ModeKV is Dynamo's KV-cache-aware router: lowest prefill-plus-decode block cost.
const ModeKV Mode = "kv_router"

// kvPolicy is Dynamo's KV-aware router. For each worker w
//
//	cost_w = prefill_load_scale · max(0, (active_prefill_tokens_w + isl)/block_size − credit · overlap_w)
//	       + active_blocks_w + new_blocks_w
//
// where overlap_w is the request's cached prefix on w (blocks) and new_blocks_w are the
// request's prompt blocks not already among w's in-flight prompt blocks. Temperature 0
// picks the cheapest worker; above 0 it samples a softmax over min-max normalised costs.
type kvPolicy struct{}

func (kvPolicy) choose(r *Router, req *Request) int {
	if r.tiers != nil {
		return chooseTiered(r, req)
	}
	if r.cfg.OverlapScoreCreditDecay > 0 {
		return chooseDecayed(r, req)
	}
	k := newKVCost(r.cfg, req)
	n := r.workers
	load, overlap, active := r.view[:n], r.overlap[:n], r.activePrefix[:n]
	if r.cfg.Temperature == 0 {
		// argminRandomTie fused with the costs: one pass over the fleet and no cost array
		// (at 1,024 workers the two passes were a third of a route); the same comparisons in
		// the same order, so the same ties and the same draws (TestFusedArgminIsArgmin).
		best, ties, lo := 0, 1, k.cost(&load[0], overlap[0], active[0])
		for w := 1; w < n; w++ {
			switch v := k.cost(&load[w], overlap[w], active[w]); {
			case v < lo:
				best, ties, lo = w, 1, v
			case v == lo:
				ties++
				if r.rng.IntN(ties) == 0 {
					best = w
				}
			}
		}
		return best
	}
	cost := r.cost[:n]
	for w := range cost {
		cost[w] = k.cost(&load[w], overlap[w], active[w])
	}
	return softmaxSample(r, cost, r.cfg.Temperature)
}

// kvCost prices one request on a worker. The policy's loops copy it into a local, so its
// fields stay in registers across the fleet.
type kvCost struct {
	credit  float64
	scale   float64
	bs, inv float64 // block size, and its reciprocal when a power of two (else 0)
	isl     int64
	blocks  int
}

func newKVCost(c Config, req *Request) kvCost {
	k := kvCost{credit: c.OverlapScoreCredit, scale: c.PrefillLoadScale, bs: float64(c.BlockSize),
		isl: int64(req.InputLength), blocks: len(req.BlockHashes)}
	// With a power-of-two block size the quotient is exact and so is the product with the
	// reciprocal (the same float), which costs a fraction of a division per worker.
	if c.BlockSize&(c.BlockSize-1) == 0 {
		k.inv = 1 / k.bs
	}
	if lc := c.Load; !lc.Default() {
		if lc.NoTrackPrefillTokens {
			k.isl = 0
		}
		if lc.NoTrackActiveBlocks {
			k.blocks = 0
		} else if s := lc.stride(); s > 1 {
			k.blocks -= k.blocks % s
		}
	}
	return k
}

// cost is cost_w of a worker with load l on which the request's cached prefix is overlap
// blocks and its leading active blocks activePrefix.
func (k kvCost) cost(l *WorkerLoad, overlap, activePrefix int) float64 {
	blocksIn := float64(l.PrefillTokens + k.isl)
	if k.inv != 0 {
		blocksIn *= k.inv
	} else {
		blocksIn /= k.bs
	}
	prefill := blocksIn - k.credit*float64(overlap)
	if prefill < 0 {
		prefill = 0
	}
	return k.scale*prefill + float64(l.ActiveBlocks+k.blocks-activePrefix) + l.OutputBlocks
}

// softmaxSample draws w with p_w ∝ exp(−(c_w − c_min) / ((c_max − c_min) · T)), uniform
// when all costs are equal. Normalising by the cost range makes T unit-free, as Dynamo
// does. It overwrites cost with the unnormalised weights.
func softmaxSample(r *Router, cost []float64, temp float64) int {
	lo, hi := cost[0], cost[0]
	for _, v := range cost[1:] {
		lo = min(lo, v)
		hi = max(hi, v)
	}
	if hi == lo {
		return r.rng.IntN(len(cost))
	}
	scale := 1 / ((hi - lo) * temp)
	sum := 0.0
	for w, v := range cost {
		cost[w] = math.Exp(-(v - lo) * scale)
		sum += cost[w]
	}
	u := r.rng.Float64() * sum
	for w, p := range cost {
		u -= p
		if u < 0 {
			return w
		}
	}
	return len(cost) - 1 // rounding left u ≥ 0: the last worker
}
