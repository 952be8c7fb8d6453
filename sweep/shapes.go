package sweep

import (
	"math/rand/v2"
	"slices"

	"github.com/routerlab/routerlab/config"
)

// shapeBranches finds the parallel_configs dimension and its branches (config.File.Branches):
// -1 and nil when the space has none.
func shapeBranches(f *config.File, dims []config.Dimension) (int, []config.Branch, error) {
	i := slices.IndexFunc(dims, func(d config.Dimension) bool { return d.Key == "parallel_configs" })
	if i < 0 {
		return -1, nil, nil
	}
	brs, err := f.Branches()
	return i, brs, err
}

// shapeAxes encodes the parallel_configs dimension as Spica's projector sees a configuration
// (layout.Projector.Normalised): share of the GPU budget used, (disaggregated) prefill's
// share, log2 GPUs per engine, attention and FFN modes, instead of one categorical axis per
// entry. The Gaussian process then carries what it learns of one fleet to fleets of a similar
// size and pattern, and its pick among the candidates is the valid configuration nearest a
// latent request. With both deployment modes each branch has its own block of axes (zero in
// the other branch's configurations) after a 0/1 axis for the mode, as Spica's optimiser
// searches deployment_mode as a categorical beside each branch's latent features.
func (e *encoder) shapeAxes(dim int, brs []config.Branch) {
	if dim < 0 {
		return
	}
	width := 0
	for _, b := range brs {
		width += len(b.Projector.Normalised(0))
	}
	for bi, b := range brs {
		for j := range b.Projector.Len() {
			x := b.Projector.Normalised(j)
			if len(brs) > 1 {
				x = make([]float64, 1, 1+width)
				x[0] = float64(bi)
				for _, o := range brs {
					if o.Mode == b.Mode {
						x = append(x, b.Projector.Normalised(j)...)
					} else {
						x = append(x, make([]float64, len(o.Projector.Normalised(0)))...)
					}
				}
			}
			e.shape[dim] = append(e.shape[dim], x)
		}
	}
}

// project draws a latent request and projects it: the branch uniformly when there are
// several (Spica's deployment_mode categorical), then within it. It returns the value of
// parallel_configs.
func (s *Space) project(rng *rand.Rand) int {
	b := s.shapes[0]
	if len(s.shapes) > 1 {
		b = s.shapes[rng.IntN(len(s.shapes))]
	}
	return b.First + b.Projector.Project(b.Projector.Sample(rng)).Index
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
		p[s.shapeDim] = s.project(r.rng)
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
