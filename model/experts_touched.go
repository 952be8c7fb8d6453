package model

// How many experts a step's tokens reach, under AIConfigurator's sampled token distributions
// and under independent routing: the narrow_independent ablation of the expert rows (issue 19,
// docs/validation.md "How a step's tokens spread over the experts").
//
// A memory-bound expert kernel (a decode step's few tokens) reads the weights of every expert
// holding a token, so what it costs follows how many experts the step reaches. AIConfigurator's
// collector draws its power-law rows from two ranges (collector/helper.py,
// _generate_power_law_distribution): per-expert weights from a power law on [1, 0.8 × tokens]
// when tokens × top-k exceeds the experts, on [0.01, 2] otherwise, normalised to tokens × top-k
// and rounded. The narrow range rounds most experts to none, so below the switch a step's tokens
// crowd onto far fewer experts than just above it (MiniMax-M2.5, 256 experts, top-8: 117 at
// 32 tokens, 173 at 40).

import (
	"math"
	"math/rand/v2"
)

// NarrowIndependent names the ablation: the power-law rows, except at token counts the sampler
// draws from its narrow range, priced at the experts independently routed tokens reach.
const NarrowIndependent = "narrow_independent"

// narrowBranch is whether AIConfigurator's sampler draws a step of tokens from its narrow range.
func narrowBranch(tokens, experts, topK int) bool { return tokens*topK <= experts }

// powerLawDraws is how many of the sampler's draws are averaged: its spread over 64 draws is a
// fraction of an expert (the collector times the mean of 5).
const powerLawDraws = 64

// narrowPowerLawTouched is the mean number of experts on the measured rank (the busiest, which
// the collector moves to rank 0) holding at least one of tokens under the collector's narrow
// power law: weights on [0.01, 2], rounded half to even to sum tokens × top-k, each expert
// capped at tokens, the shortfall or excess settled one token at a time, rank by rank, on the
// emptiest (fullest) expert. Seeded: the same counts every import.
func narrowPowerLawTouched(tokens, experts, topK, ep int, alpha float64) float64 {
	rng := rand.New(rand.NewPCG(uint64(tokens), uint64(experts*topK*ep)))
	per := experts / ep
	lo, hi := math.Pow(0.01, 1-alpha), math.Pow(2, 1-alpha)
	counts := make([]int, experts)
	weights := make([]float64, experts)
	touched := 0
	for range powerLawDraws {
		sum := 0.0
		for i := range weights {
			weights[i] = math.Pow((hi-lo)*rng.Float64()+lo, 1/(1-alpha))
			sum += weights[i]
		}
		target, total := tokens*topK, 0
		for i, w := range weights {
			counts[i] = min(tokens, int(math.RoundToEven(w/sum*float64(target))))
			total += counts[i]
		}
		settle(counts, per, target-total, tokens)
		busiest, most := 0, -1
		for r := range ep {
			n := 0
			for _, c := range counts[r*per : (r+1)*per] {
				n += c
			}
			if n > most {
				busiest, most = r, n
			}
		}
		for _, c := range counts[busiest*per : (busiest+1)*per] {
			if c > 0 {
				touched++
			}
		}
	}
	return float64(touched) / powerLawDraws
}

// settle moves counts by delta tokens, one at a time and one rank after another: a missing
// token to the rank's emptiest expert below the cap, a surplus one from its fullest.
func settle(counts []int, per, delta, capacity int) {
	for delta != 0 {
		moved := false
		for r := 0; r < len(counts)/per && delta != 0; r++ {
			rank, pick := counts[r*per:(r+1)*per], -1
			for i, c := range rank {
				switch {
				case delta > 0 && c < capacity && (pick < 0 || c < rank[pick]):
					pick = i
				case delta < 0 && c > 0 && (pick < 0 || c > rank[pick]):
					pick = i
				}
			}
			if pick < 0 {
				continue
			}
			if delta > 0 {
				rank[pick]++
				delta--
			} else {
				rank[pick]--
				delta++
			}
			moved = true
		}
		if !moved {
			return
		}
	}
}

// balancedTouched is the experts of rank 0 the collector's balanced rows reach
// (collector/helper.py, balanced_logits): token i's j-th expert is (i + j × stride) mod experts
// with stride = ⌈experts / top-k⌉, or i × stride / tokens + j × stride (truncated) when tokens
// are fewer than stride.
func balancedTouched(tokens, experts, topK, ep int) float64 {
	stride := (experts + topK - 1) / topK
	seen := make([]bool, experts/ep)
	n := 0
	for i := range tokens {
		for j := range topK {
			e := (i + j*stride) % experts
			if tokens < stride {
				e = int(float64(i)*float64(stride)/float64(tokens)+float64(j*stride)) % experts
			}
			if e < len(seen) && !seen[e] {
				seen[e] = true
				n++
			}
		}
	}
	return float64(n)
}

// independentTouched is the mean number of a rank's experts reached when each token picks its
// top-k experts uniformly and independently of the other tokens: every expert is equally
// likely, as a router trained towards balanced load (MiniMax-M2's routing bias) aims at, and a
// decode step's tokens come from different requests.
func independentTouched(tokens, experts, topK, ep int) float64 {
	return float64(experts/ep) * (1 - math.Pow(1-float64(topK)/float64(experts), float64(tokens)))
}

// narrowIndependent re-prices the power-law rows the sampler drew from its narrow range at the
// experts independent routing reaches, linearly in experts reached between the power-law and
// the balanced row of the same token count (a memory-bound kernel's cost grows with the
// weights it reads); other token counts keep the power-law rows. Points are at measured tokens.
// unpaired lists the narrow-range token counts left as measured for want of a balanced row.
func narrowIndependent(powerLaw, balanced []point, at MoEShape, ep int, alpha float64) (out []point, unpaired []int) {
	bal := map[float64]float64{}
	for _, p := range newSeries(balanced) {
		bal[p.x] = p.us
	}
	out = newSeries(powerLaw)
	for i, p := range out {
		tokens := int(p.x)
		if !narrowBranch(tokens, at.Experts, at.TopK) {
			continue
		}
		b, ok := bal[p.x]
		if !ok {
			unpaired = append(unpaired, tokens)
			continue
		}
		pl := narrowPowerLawTouched(tokens, at.Experts, at.TopK, ep, alpha)
		bt := balancedTouched(tokens, at.Experts, at.TopK, ep)
		if bt <= pl {
			continue
		}
		w := (independentTouched(tokens, at.Experts, at.TopK, ep) - pl) / (bt - pl)
		out[i].us = p.us + max(0, min(1, w))*(b-p.us)
	}
	return out, unpaired
}
