package sweep

import "github.com/routerlab/routerlab/config"

// shapeAxes encodes a parallel_configs dimension as Spica's projector sees a configuration
// (layout.Projector.Normalised): share of the GPU budget used, log2 GPUs per engine, attention
// and FFN modes, instead of one categorical axis per entry. The Gaussian process then carries
// what it learns of one fleet to fleets of a similar size and pattern, and its pick among the
// candidates is the valid configuration nearest a latent request.
func (e *encoder) shapeAxes(f *config.File) error {
	for i, d := range e.dims {
		if d.Key != "parallel_configs" {
			continue
		}
		pr, err := f.Projector()
		if err != nil {
			return err
		}
		e.shape[i] = make([][]float64, len(d.Values))
		for j := range d.Values {
			e.shape[i][j] = pr.Normalised(j)
		}
	}
	return nil
}
