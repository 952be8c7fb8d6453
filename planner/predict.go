package planner

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// predictor forecasts the next interval's value of one series (num_req, ISL or OSL) from
// the values observed so far (core/load/predictors.py).
type predictor interface {
	add(v float64)
	next() float64
}

func newPredictor(p Predictor) predictor {
	if p.Family == "kalman" {
		return newKalman(p)
	}
	return &constant{}
}

// idleSkip drops the leading run of zeros (the idle period before traffic) and treats a
// non-finite reading as zero, as BasePredictor.add_data_point does; it reports whether v
// is kept.
type idleSkip struct{ seen bool }

func (s *idleSkip) keep(v *float64) bool {
	if math.IsNaN(*v) || math.IsInf(*v, 0) {
		*v = 0
	}
	if *v == 0 && !s.seen {
		return false
	}
	if *v != 0 {
		s.seen = true
	}
	return true
}

// constant predicts the last value (ConstantPredictor).
type constant struct {
	skip idleSkip
	last float64
}

func (c *constant) add(v float64) {
	if c.skip.keep(&v) {
		c.last = v
	}
}

func (c *constant) next() float64 { return c.last }

// kalman is KalmanPredictor: a local linear trend, state [level, trend],
// x_t = x_{t−1} + v_{t−1} + w, v_t = v_{t−1} + u, observing the level, as filterpy's
// KalmanFilter runs it (P starts at 1000·I). A forecast advances the filter once per
// interval; the next observation then updates it without predicting again.
type kalman struct {
	skip             idleSkip
	log1p            bool
	init, cached     bool
	last, cachedPred float64
	x                *mat.VecDense
	P, F, Q          *mat.Dense
	r                float64
}

func newKalman(p Predictor) *kalman {
	k := &kalman{
		log1p: p.Log1p,
		x:     mat.NewVecDense(2, nil),
		P:     mat.NewDense(2, 2, []float64{1000, 0, 0, 1000}),
		F:     mat.NewDense(2, 2, []float64{1, 1, 0, 1}),
		Q:     mat.NewDense(2, 2, []float64{max(1e-12, p.KalmanQLevel), 0, 0, max(1e-12, p.KalmanQTrend)}),
		r:     max(1e-9, p.KalmanR),
	}
	return k
}

// predict is x = F x, P = F P Fᵀ + Q.
func (k *kalman) predict() {
	var x mat.VecDense
	x.MulVec(k.F, k.x)
	k.x = &x
	var fp, p mat.Dense
	fp.Mul(k.F, k.P)
	p.Mul(&fp, k.F.T())
	p.Add(&p, k.Q)
	k.P = &p
}

// update folds in observation z of the level (H = [1 0]).
func (k *kalman) update(z float64) {
	y := z - k.x.AtVec(0)
	s := k.P.At(0, 0) + k.r
	k0, k1 := k.P.At(0, 0)/s, k.P.At(1, 0)/s
	k.x.SetVec(0, k.x.AtVec(0)+k0*y)
	k.x.SetVec(1, k.x.AtVec(1)+k1*y)
	// Joseph form, as filterpy's update: P = (I − K H) P (I − K H)ᵀ + K R Kᵀ.
	ikh := mat.NewDense(2, 2, []float64{1 - k0, 0, -k1, 1})
	var p mat.Dense
	p.Mul(ikh, k.P)
	var pj mat.Dense
	pj.Mul(&p, ikh.T())
	kr := mat.NewDense(2, 2, []float64{k0 * k0 * k.r, k0 * k1 * k.r, k1 * k0 * k.r, k1 * k1 * k.r})
	pj.Add(&pj, kr)
	k.P = &pj
}

func (k *kalman) add(v float64) {
	if !k.skip.keep(&v) {
		return
	}
	k.last = v
	z := v
	if k.log1p {
		z = math.Log1p(max(0, v))
	}
	if !k.init {
		k.x.SetVec(0, z)
		k.x.SetVec(1, 0)
		k.init = true
	} else {
		if !k.cached {
			k.predict()
		}
		k.update(z)
	}
	k.cached = false
}

func (k *kalman) next() float64 {
	if !k.init {
		return k.last
	}
	if !k.cached {
		k.predict()
		k.cachedPred = k.x.AtVec(0)
		k.cached = true
	}
	if k.log1p {
		return max(0, math.Expm1(k.cachedPred))
	}
	return k.cachedPred
}
