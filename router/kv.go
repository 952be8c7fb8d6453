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
	k := newKVCost(r, req)
	if r.cfg.Temperature == 0 {
		// argminRandomTie fused with the costs: one pass over the fleet and no cost array
		// (at 1,024 workers two passes were a sixth of a route); the same comparisons in the
		// same order, so the same ties and the same draws (TestFusedArgminIsArgmin).
		best, ties, lo := 0, 1, k.cost(0)
		for w := 1; w < r.workers; w++ {
			switch v := k.cost(w); {
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
	for w := range r.workers {
		r.cost[w] = k.cost(w)
	}
	return softmaxSample(r, r.cost, r.cfg.Temperature)
}

// kvCost prices one request on the workers, from the overlaps of the last scan.
type kvCost struct {
	r       *Router
	credit  float64
	scale   float64
	bs, inv float64 // block size, and its reciprocal when a power of two (else 0)
	isl     int64
	blocks  int
}

func newKVCost(r *Router, req *Request) kvCost {
	c := r.cfg
	k := kvCost{r: r, credit: c.OverlapScoreCredit, scale: c.PrefillLoadScale, bs: float64(c.BlockSize),
		isl: int64(req.InputLength), blocks: len(req.BlockHashes)}
	// With a power-of-two block size the quotient is exact and so is the product with the
	// reciprocal (the same float), which costs a fraction of a division per worker.
	if c.BlockSize&(c.BlockSize-1) == 0 {
		k.inv = 1 / k.bs
	}
	return k
}

// cost is cost_w of worker w.
func (k *kvCost) cost(w int) float64 {
	l := &k.r.load[w]
	blocksIn := float64(l.PrefillTokens + k.isl)
	if k.inv != 0 {
		blocksIn *= k.inv
	} else {
		blocksIn /= k.bs
	}
	prefill := blocksIn - k.credit*float64(k.r.overlap[w])
	if prefill < 0 {
		prefill = 0
	}
	return k.scale*prefill + float64(l.ActiveBlocks+k.blocks-k.r.activePrefix[w])
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
