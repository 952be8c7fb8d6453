package sweep

import (
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

func gridInputs(n int) [][]float64 {
	x := make([][]float64, n)
	for i := range x {
		x[i] = []float64{float64(i) / float64(n-1)}
	}
	return x
}

func TestGPInterpolatesNoiselessData(t *testing.T) {
	x := gridInputs(9)
	y := make([]float64, len(x))
	for i, xi := range x {
		y[i] = 100 + 30*math.Sin(5*xi[0])
	}
	g, err := FitGP(x, y)
	if err != nil {
		t.Fatal(err)
	}
	_, prior := g.Predict([]float64{100})
	for i, xi := range x {
		m, v := g.Predict(xi)
		if math.Abs(m-y[i]) > 0.05 {
			t.Errorf("mean at observed x=%.3f: %.4f, want %.4f", xi[0], m, y[i])
		}
		if v > 1e-3*prior {
			t.Errorf("variance at observed x=%.3f: %.4g, want ≈ 0", xi[0], v)
		}
	}
	// Between observations the fit must still follow the smooth function closely …
	mid := []float64{0.5 / 8}
	if m, _ := g.Predict(mid); math.Abs(m-(100+30*math.Sin(5*mid[0]))) > 1 {
		t.Errorf("mean between observations %.3f, want ≈ %.3f", m, 100+30*math.Sin(5*mid[0]))
	}
	// … and be less sure there than at the data, and least sure far outside it.
	_, vObs := g.Predict(x[1])
	_, vMid := g.Predict(mid)
	_, vFar := g.Predict([]float64{3})
	if !(vObs < vMid && vMid < vFar) {
		t.Errorf("variance should grow away from data: observed %.3g, between %.3g, far %.3g", vObs, vMid, vFar)
	}
}

func TestGPVarianceShrinksWithPendingPoints(t *testing.T) {
	x := [][]float64{{0.1, 0.1}, {0.9, 0.2}, {0.4, 0.8}}
	g, err := FitGP(x, []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	p := []float64{0.6, 0.6}
	_, v0 := g.Predict(p)
	gp, err := g.WithPending([][]float64{p})
	if err != nil {
		t.Fatal(err)
	}
	_, v1 := gp.Predict(p)
	if !(v1 < 0.01*v0) {
		t.Errorf("variance at a pending point %.4g, want ≪ %.4g", v1, v0)
	}
	// Pending points must not move the posterior mean at the observed data.
	for i, xi := range x {
		a, _ := g.Predict(xi)
		b, _ := gp.Predict(xi)
		if math.Abs(a-b) > 0.05 {
			t.Errorf("mean at observation %d moved from %.4f to %.4f", i, a, b)
		}
	}
}

func TestGPFitFindsIrrelevantAxis(t *testing.T) {
	// y depends on axis 0 only: ARD must give axis 1 the longer length-scale.
	r := rand.New(rand.NewPCG(7, 1))
	var x [][]float64
	var y []float64
	for range 25 {
		a, b := r.Float64(), r.Float64()
		x = append(x, []float64{a, b})
		y = append(y, math.Cos(4*a))
	}
	g, err := FitGP(x, y)
	if err != nil {
		t.Fatal(err)
	}
	ls := g.Hyper.LengthScales
	if !(ls[1] > 3*ls[0]) {
		t.Errorf("length-scales %v: want the irrelevant axis 1 ≥ 3× axis 0", ls)
	}
}

// TestLogMarginalGradient checks the analytic gradient against central differences.
func TestLogMarginalGradient(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 8).Draw(t, "n")
		d := rapid.IntRange(1, 3).Draw(t, "d")
		seed := rapid.Uint64().Draw(t, "seed")
		r := rand.New(rand.NewPCG(seed, 2))
		x := make([][]float64, n)
		z := make([]float64, n)
		for i := range x {
			x[i] = make([]float64, d)
			for j := range x[i] {
				x[i][j] = r.Float64()
			}
			z[i] = r.NormFloat64()
		}
		theta := make([]float64, d+2)
		for i := range theta {
			theta[i] = rapid.Float64Range(-2, 1).Draw(t, "theta")
		}
		_, g, err := logMarginal(theta, x, z)
		if err != nil {
			t.Skip("ill-conditioned draw")
		}
		const h = 1e-5
		for i := range theta {
			tp := append([]float64(nil), theta...)
			tm := append([]float64(nil), theta...)
			tp[i] += h
			tm[i] -= h
			fp, _, err1 := logMarginal(tp, x, z)
			fm, _, err2 := logMarginal(tm, x, z)
			if err1 != nil || err2 != nil {
				t.Skip("ill-conditioned draw")
			}
			fd := (fp - fm) / (2 * h)
			if math.Abs(fd-g[i]) > 1e-4*math.Max(1, math.Abs(fd)) {
				t.Fatalf("∂L/∂θ[%d]: analytic %.8g, finite difference %.8g (θ=%v)", i, g[i], fd, theta)
			}
		}
	})
}

func TestLogPriorGradient(t *testing.T) {
	theta := []float64{-1, 0.3, 0.5, -3}
	_, g := logPrior(theta)
	const h = 1e-6
	for i := range theta {
		tp := append([]float64(nil), theta...)
		tm := append([]float64(nil), theta...)
		tp[i] += h
		tm[i] -= h
		fp, _ := logPrior(tp)
		fm, _ := logPrior(tm)
		if fd := (fp - fm) / (2 * h); math.Abs(fd-g[i]) > 1e-6 {
			t.Errorf("prior gradient %d: %.8g vs %.8g", i, g[i], fd)
		}
	}
}

func TestFitGPRejectsBadInput(t *testing.T) {
	if _, err := FitGP(nil, nil); err == nil {
		t.Error("empty data: want an error")
	}
	if _, err := FitGP([][]float64{{0}}, []float64{1, 2}); err == nil {
		t.Error("mismatched lengths: want an error")
	}
}
