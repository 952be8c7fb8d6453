package sweep

import (
	"math/rand/v2"
	"slices"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/layout"
)

// shapeProjector finds the parallel_configs dimension and its projector (config.File.Projector):
// -1 and nil when the space has none.
func shapeProjector(f *config.File, dims []config.Dimension) (int, *layout.Projector, error) {
	i := slices.IndexFunc(dims, func(d config.Dimension) bool { return d.Key == "parallel_configs" })
	if i < 0 {
		return -1, nil, nil
	}
	pr, err := f.Projector()
	return i, pr, err
}

// shapeAxes encodes the parallel_configs dimension as Spica's projector sees a configuration
// (layout.Projector.Normalised): share of the GPU budget used, log2 GPUs per engine, attention
// and FFN modes, instead of one categorical axis per entry. The Gaussian process then carries
// what it learns of one fleet to fleets of a similar size and pattern, and its pick among the
// candidates is the valid configuration nearest a latent request.
func (e *encoder) shapeAxes(dim int, pr *layout.Projector) {
	if dim < 0 {
		return
	}
	e.shape[dim] = make([][]float64, pr.Len())
	for j := range pr.Len() {
		e.shape[dim][j] = pr.Normalised(j)
	}
}

// projectedRandom is random search over a space with a parallel_configs dimension, sampling
// shapes as Spica's sampler does: every other knob from a uniformly drawn candidate, the
// parallel configuration where a uniformly drawn latent request (layout.Projector.Sample)
// projects. A configuration evaluated already, or picked this round, is drawn again; after
// 11 × the round's size in draws (Spica's bound on replacement asks) the round is completed
// from a seeded permutation, so the budget is spent as random search spends it.
type projectedRandom struct {
	space *Space
	rng   *rand.Rand
	rest  []int // the seeded permutation
}

func (r *projectedRandom) next(_ []observation, done []bool, k int) ([]int, error) {
	s := r.space
	taken := map[int]bool{}
	var picks []int
	for draw := 0; len(picks) < k && draw < 11*k; draw++ {
		p := slices.Clone(s.Candidates[r.rng.IntN(len(s.Candidates))].Point)
		p[s.shapeDim] = s.shapes.Project(s.shapes.Sample(r.rng)).Index
		c, err := s.Lookup(s.file, p)
		if err != nil {
			return nil, err
		}
		if !done[c] && !taken[c] {
			picks, taken[c] = append(picks, c), true
		}
	}
	for _, c := range r.rest {
		if len(picks) == k {
			break
		}
		if !done[c] && !taken[c] {
			picks, taken[c] = append(picks, c), true
		}
	}
	return picks, nil
}
