package sweep

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Algorithms a sweep can use.
const (
	GPBandit = "gp_bandit"
	Random   = "random"
	Grid     = "grid"
)

// observation is one finished evaluation as the search sees it.
type observation struct {
	cand  int
	score float64 // Objective.Score: lower is better
}

// proposer picks the candidates of the next round. An empty answer means the search has
// nothing left worth evaluating.
type proposer interface {
	next(obs []observation, done []bool, k int) ([]int, error)
}

// rngStream separates the sweep's random stream from other seeded subsystems.
const rngStream = 0x5eed5ee9

func newProposer(algorithm string, space *Space, seed uint64) (proposer, error) {
	rng := rand.New(rand.NewPCG(seed, rngStream))
	switch algorithm {
	case GPBandit:
		return &gpBandit{space: space, rng: rng}, nil
	case Random:
		if len(space.shapes) > 0 {
			return &projectedRandom{space: space, rng: rng, rest: rng.Perm(len(space.Candidates))}, nil
		}
		return &ordered{order: rng.Perm(len(space.Candidates))}, nil
	case Grid:
		order := make([]int, len(space.Candidates))
		for i := range order {
			order[i] = i
		}
		return &ordered{order: order}, nil
	}
	return nil, fmt.Errorf("sweep: unknown algorithm %q (want gp_bandit, random or grid)", algorithm)
}

// ordered proposes candidates in a fixed order: enumeration order for grid search, a seeded
// permutation for random search.
type ordered struct{ order []int }

func (o *ordered) next(_ []observation, done []bool, k int) ([]int, error) {
	var picks []int
	for _, c := range o.order {
		if len(picks) == k {
			break
		}
		if !done[c] {
			picks = append(picks, c)
		}
	}
	return picks, nil
}

// explore is √β of the confidence bounds μ ± √β σ. A constant rather than GP-UCB's growing
// schedule: the candidate set is small and finite and the budget a few rounds.
const explore = 2.0

// priorHyper are the kernel hyperparameters before any data: they only shape the
// space-filling first round.
func priorHyper(d int) Hyper {
	h := Hyper{LengthScales: make([]float64, d), SignalVar: 1, NoiseVar: minNoise}
	for i := range h.LengthScales {
		h.LengthScales[i] = 0.5
	}
	return h
}

// gpBandit is batch GP-UCB-PE (Contal et al. 2013) on the discrete candidates, minimising
// the score: the first pick of a round has the lowest lower confidence bound; each further
// pick has the largest posterior variance, with the round's earlier picks treated as
// observed, among the candidates whose lower bound is below the best upper bound (those that
// can still be the minimum); stochastic candidates' variance is discounted by their cost. The
// first round, without data, is the same variance rule from a seeded random first pick: a
// space-filling design. The search stops when no unevaluated candidate's lower bound is below
// the best score observed.
type gpBandit struct {
	space *Space
	rng   *rand.Rand
}

func (b *gpBandit) next(obs []observation, done []bool, k int) ([]int, error) {
	cands := b.space.Candidates
	var open []int
	for c := range cands {
		if !done[c] {
			open = append(open, c)
		}
	}
	if len(open) == 0 {
		return nil, nil
	}
	if len(obs) == 0 {
		first := open[b.rng.IntN(len(open))]
		return b.byVariance(&GP{Hyper: priorHyper(len(cands[0].X)), std: 1}, []int{first}, open, k)
	}
	x := make([][]float64, len(obs))
	y := make([]float64, len(obs))
	bestObs := math.Inf(1)
	for i, o := range obs {
		x[i], y[i] = cands[o.cand].X, o.score
		bestObs = math.Min(bestObs, o.score)
	}
	g, err := FitGP(x, y)
	if err != nil {
		return nil, err
	}
	lcb := make([]float64, len(cands))
	bestUCB := math.Inf(1)
	for c := range cands {
		m, v := g.Predict(cands[c].X)
		s := explore * math.Sqrt(v)
		lcb[c] = m - s
		bestUCB = math.Min(bestUCB, m+s)
	}
	first := -1
	for _, c := range open {
		if first < 0 || lcb[c] < lcb[first] {
			first = c
		}
	}
	if lcb[first] >= bestObs {
		return nil, nil // converged: nothing unevaluated can beat the best seen
	}
	var relevant []int
	for _, c := range open {
		if lcb[c] <= bestUCB {
			relevant = append(relevant, c)
		}
	}
	picks, err := b.byVariance(g, []int{first}, relevant, k)
	if err != nil {
		return nil, err
	}
	// Fill a round the relevant region cannot fill by the lower bound.
	for len(picks) < k && len(picks) < len(open) {
		best := -1
		for _, c := range open {
			if !slices.Contains(picks, c) && (best < 0 || lcb[c] < lcb[best]) {
				best = c
			}
		}
		picks = append(picks, best)
	}
	// Dispatch the round in order of promise (posterior mean): the set is what GP-UCB-PE
	// chose, but with fewer workers than picks, or a sweep cut short, the likeliest winners
	// are simulated first.
	mean := make(map[int]float64, len(picks))
	for _, c := range picks {
		mean[c], _ = g.Predict(cands[c].X)
	}
	slices.SortStableFunc(picks, func(a, b int) int { return cmp.Compare(mean[a], mean[b]) })
	return picks, nil
}

// byVariance extends picks, up to k, with the candidates of pool of largest posterior
// variance (per unit of simulation cost), conditioning on every pick so far as if it were
// observed.
func (b *gpBandit) byVariance(g *GP, picks, pool []int, k int) ([]int, error) {
	cands := b.space.Candidates
	// Stochastic candidates cost StochasticSeeds simulations instead of one, so per
	// simulation they teach less: their variance is discounted. By √cost rather than the
	// full cost, so that the temperature axis is still explored, later and less densely.
	discount := math.Sqrt(StochasticSeeds)
	for len(picks) < k {
		xs := make([][]float64, len(picks))
		for i, c := range picks {
			xs[i] = cands[c].X
		}
		cond, err := g.WithPending(xs)
		if err != nil {
			return nil, err
		}
		best, bestVar := -1, 0.0
		for _, c := range pool {
			if slices.Contains(picks, c) {
				continue
			}
			_, v := cond.Predict(cands[c].X)
			if cands[c].Stochastic {
				v /= discount
			}
			if best < 0 || v > bestVar {
				best, bestVar = c, v
			}
		}
		if best < 0 {
			break
		}
		picks = append(picks, best)
	}
	return picks, nil
}
