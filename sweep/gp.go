package sweep

import (
	"errors"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// Hyper are the hyperparameters of the Matérn-5/2 kernel with automatic relevance
// determination: one length-scale per input axis, a signal variance and a noise variance, all
// on the scale of standardised targets.
type Hyper struct {
	LengthScales []float64
	SignalVar    float64
	NoiseVar     float64
}

// minNoise keeps the kernel matrix positive definite when the fit drives the noise to zero
// (the simulator at temperature 0 is deterministic, so it tries to).
const minNoise = 1e-6

// The fit maximises the log marginal likelihood plus a weak log-normal prior on every
// hyperparameter, centred on values that suit inputs in [0,1] and standardised targets; the
// prior only keeps the optimiser out of the flat far tails (length-scales of 1e6, noise 1e-30)
// where the likelihood is nearly constant.
const (
	priorLogLengthMean = -0.7 // ℓ ≈ 0.5 of the unit axis
	priorLogSignalMean = 0
	priorLogNoiseMean  = -9.2 // noise variance ≈ 1e-4 of the target variance: runs at T=0 are deterministic
	priorLogSD         = 3
)

func (h Hyper) theta() []float64 {
	t := make([]float64, 0, len(h.LengthScales)+2)
	for _, l := range h.LengthScales {
		t = append(t, math.Log(l))
	}
	return append(t, math.Log(h.SignalVar), math.Log(h.NoiseVar-minNoise))
}

func hyperFromTheta(t []float64) Hyper {
	d := len(t) - 2
	h := Hyper{LengthScales: make([]float64, d)}
	for i := range d {
		h.LengthScales[i] = math.Exp(t[i])
	}
	h.SignalVar = math.Exp(t[d])
	h.NoiseVar = math.Exp(t[d+1]) + minNoise
	return h
}

// matern52 is the Matérn-5/2 correlation at scaled distance r.
func matern52(r float64) float64 {
	s := math.Sqrt(5) * r
	return (1 + s + s*s/3) * math.Exp(-s)
}

// scaledDist returns r = ‖(a−b)/ℓ‖.
func scaledDist(a, b, ls []float64) float64 {
	var s float64
	for i := range a {
		d := (a[i] - b[i]) / ls[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// kernelMatrix builds K = σ²·M(X,X) + σn²·I.
func kernelMatrix(x [][]float64, h Hyper) *mat.SymDense {
	n := len(x)
	k := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			v := h.SignalVar * matern52(scaledDist(x[i], x[j], h.LengthScales))
			if i == j {
				v += h.NoiseVar
			}
			k.SetSym(i, j, v)
		}
	}
	return k
}

// logMarginal returns the log marginal likelihood of standardised targets z at inputs x under
// the log-hyperparameters theta, and its gradient with respect to theta:
//
//	L = −½ zᵀK⁻¹z − ½ log|K| − n/2 log 2π
//	∂L/∂θ = ½ tr((ααᵀ − K⁻¹) ∂K/∂θ),  α = K⁻¹z.
//
// For a length-scale, ∂k/∂log ℓᵢ = σ² (5/3)(1+√5 r) e^{−√5 r} (Δᵢ/ℓᵢ)², which is finite at r = 0.
func logMarginal(theta []float64, x [][]float64, z []float64) (float64, []float64, error) {
	h := hyperFromTheta(theta)
	n, d := len(x), len(h.LengthScales)
	var chol mat.Cholesky
	if !chol.Factorize(kernelMatrix(x, h)) {
		return 0, nil, errors.New("gp: kernel matrix is not positive definite")
	}
	alpha := mat.NewVecDense(n, nil)
	if err := chol.SolveVecTo(alpha, mat.NewVecDense(n, append([]float64(nil), z...))); err != nil {
		return 0, nil, err
	}
	lml := -0.5*mat.Dot(mat.NewVecDense(n, append([]float64(nil), z...)), alpha) -
		0.5*chol.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)

	var kinv mat.SymDense
	if err := chol.InverseTo(&kinv); err != nil {
		return 0, nil, err
	}
	// W = ααᵀ − K⁻¹; every gradient is ½ Σᵢⱼ Wᵢⱼ ∂Kᵢⱼ.
	grad := make([]float64, d+2)
	for i := range n {
		for j := range n {
			w := alpha.AtVec(i)*alpha.AtVec(j) - kinv.At(i, j)
			r := scaledDist(x[i], x[j], h.LengthScales)
			s := math.Sqrt(5) * r
			e := math.Exp(-s)
			common := h.SignalVar * (5.0 / 3.0) * (1 + s) * e
			for a := range d {
				u := (x[i][a] - x[j][a]) / h.LengthScales[a]
				grad[a] += 0.5 * w * common * u * u
			}
			grad[d] += 0.5 * w * h.SignalVar * (1 + s + s*s/3) * e
			if i == j {
				grad[d+1] += 0.5 * w * (h.NoiseVar - minNoise)
			}
		}
	}
	return lml, grad, nil
}

// logPrior is the weak log-normal prior on the hyperparameters and its gradient.
func logPrior(theta []float64) (float64, []float64) {
	d := len(theta) - 2
	var lp float64
	g := make([]float64, len(theta))
	for i, t := range theta {
		mu := priorLogLengthMean
		switch i {
		case d:
			mu = priorLogSignalMean
		case d + 1:
			mu = priorLogNoiseMean
		}
		u := (t - mu) / priorLogSD
		lp -= 0.5 * u * u
		g[i] = -u / priorLogSD
	}
	return lp, g
}

// GP is a Gaussian-process regression of targets y on inputs x in [0,1]^d.
type GP struct {
	Hyper Hyper
	x     [][]float64
	z     []float64 // standardised targets (y−mean)/std
	mean  float64
	std   float64
	chol  mat.Cholesky
	alpha *mat.VecDense
}

// restarts are the deterministic starting points of the hyperparameter fit:
// (length-scale, noise variance) pairs, signal variance 1.
var restarts = [][2]float64{{0.5, 1e-2}, {0.2, 1e-3}, {1.5, 1e-1}}

// FitGP standardises y and fits the hyperparameters by maximising the (weakly regularised)
// log marginal likelihood with L-BFGS over log-parameters from a few deterministic starts.
func FitGP(x [][]float64, y []float64) (*GP, error) {
	if len(x) == 0 || len(x) != len(y) {
		return nil, errors.New("gp: need as many targets as inputs, at least one")
	}
	d := len(x[0])
	mean, std := standardise(y)
	z := make([]float64, len(y))
	for i, v := range y {
		z[i] = (v - mean) / std
	}
	objective := func(t []float64) (float64, []float64) {
		lml, g, err := logMarginal(t, x, z)
		if err != nil {
			return math.Inf(1), make([]float64, len(t))
		}
		lp, gp := logPrior(t)
		for i := range g {
			g[i] = -(g[i] + gp[i])
		}
		return -(lml + lp), g
	}
	// The restarts are independent: they run at once, one goroutine each (the proposal
	// between a sweep's rounds is otherwise serial, with cores idle), and the best is chosen
	// in restart order as a loop over them would, so the fit does not depend on scheduling.
	type fit struct {
		t []float64
		f float64
	}
	fits := make([]fit, len(restarts))
	var wg sync.WaitGroup
	for k, r := range restarts {
		wg.Go(func() {
			start := Hyper{LengthScales: make([]float64, d), SignalVar: 1, NoiseVar: r[1] + minNoise}
			for i := range start.LengthScales {
				start.LengthScales[i] = r[0]
			}
			t0 := start.theta()
			p := optimize.Problem{
				Func: func(t []float64) float64 { f, _ := objective(t); return f },
				Grad: func(g, t []float64) { _, gg := objective(t); copy(g, gg) },
			}
			// A line-search failure still returns a usable, improved point, so the error is
			// not fatal: the best finite point of all restarts wins.
			res, _ := optimize.Minimize(p, t0, &optimize.Settings{MajorIterations: 200, GradientThreshold: 1e-6}, &optimize.LBFGS{})
			t, f := t0, math.Inf(1)
			if f0, _ := objective(t0); !math.IsInf(f0, 1) {
				f = f0
			}
			if res != nil && !math.IsNaN(res.F) && res.F < f && allFinite(res.X) {
				t, f = res.X, res.F
			}
			fits[k] = fit{t, f}
		})
	}
	wg.Wait()
	var best []float64
	bestF := math.Inf(1)
	for _, x := range fits {
		if x.f < bestF {
			best, bestF = append([]float64(nil), x.t...), x.f
		}
	}
	if best == nil {
		return nil, errors.New("gp: no hyperparameters give a positive-definite kernel")
	}
	return conditioned(x, mean, std, z, hyperFromTheta(best))
}

// conditioned builds the posterior of standardised targets z at x under fixed hyperparameters.
func conditioned(x [][]float64, mean, std float64, z []float64, h Hyper) (*GP, error) {
	g := &GP{Hyper: h, x: x, z: z, mean: mean, std: std}
	if !g.chol.Factorize(kernelMatrix(x, h)) {
		return nil, errors.New("gp: kernel matrix is not positive definite")
	}
	g.alpha = mat.NewVecDense(len(x), nil)
	if err := g.chol.SolveVecTo(g.alpha, mat.NewVecDense(len(z), append([]float64(nil), z...))); err != nil {
		return nil, err
	}
	return g, nil
}

// WithPending returns the posterior after also observing xs, with the same hyperparameters.
// Only its variance is meaningful: the GP-UCB-PE batch rule treats pending points as observed
// for exploration, and the posterior variance does not depend on the (unknown) targets.
func (g *GP) WithPending(xs [][]float64) (*GP, error) {
	x := append(append([][]float64(nil), g.x...), xs...)
	z := append(append([]float64(nil), g.z...), make([]float64, len(xs))...)
	return conditioned(x, g.mean, g.std, z, g.Hyper)
}

// Predict returns the posterior mean and variance of the latent function at x, in the units
// of the original targets (observation noise excluded).
func (g *GP) Predict(x []float64) (mean, variance float64) {
	n := len(g.x)
	kx := mat.NewVecDense(n, nil)
	for i := range n {
		kx.SetVec(i, g.Hyper.SignalVar*matern52(scaledDist(x, g.x[i], g.Hyper.LengthScales)))
	}
	mu := mat.Dot(kx, g.alpha)
	v := mat.NewVecDense(n, nil)
	if err := g.chol.SolveVecTo(v, kx); err != nil {
		return g.mean + g.std*mu, g.std * g.std * g.Hyper.SignalVar
	}
	s2 := math.Max(g.Hyper.SignalVar-mat.Dot(kx, v), 0)
	return g.mean + g.std*mu, g.std * g.std * s2
}

func standardise(y []float64) (mean, std float64) {
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	for _, v := range y {
		std += (v - mean) * (v - mean)
	}
	std = math.Sqrt(std / float64(len(y)))
	if std == 0 || math.IsNaN(std) {
		std = 1
	}
	return mean, std
}

func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
