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
	c := r.cfg
	bs := float64(c.BlockSize)
	// With a power-of-two block size the quotient is exact and so is the product with the
	// reciprocal (the same float), which costs a fraction of a division per worker.
	inv := 0.0
	if c.BlockSize&(c.BlockSize-1) == 0 {
		inv = 1 / bs
	}
	blocks := len(req.BlockHashes)
	for w := range r.workers {
		l := &r.load[w]
		blocksIn := float64(l.PrefillTokens + int64(req.InputLength))
		if inv != 0 {
			blocksIn *= inv
		} else {
			blocksIn /= bs
		}
		prefill := blocksIn - c.OverlapScoreCredit*float64(r.overlap[w])
		if prefill < 0 {
			prefill = 0
		}
		r.cost[w] = c.PrefillLoadScale*prefill + float64(l.ActiveBlocks+blocks-r.activePrefix[w])
	}
	if c.Temperature == 0 {
		return argminRandomTie(r, r.cost)
	}
	return softmaxSample(r, r.cost, c.Temperature)
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
