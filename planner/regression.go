package planner

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// samples is _BaseRegressionModel (perf_model/base.py, 439d6458): a forward pass's wall time
// as a linear function of one or two features, fitted by least squares with an intercept
// (sklearn's LinearRegression) over retained observations. Observations are kept in
// equal-width buckets over the axes' observed ranges (B buckets on one axis, a √B × √B grid
// on two); past max_num_fpm_samples the oldest observation of the fullest bucket is retired,
// so one operating point cannot push out the others. A fit with a negative coefficient is
// rejected (the model is not ready until more data arrives), except on a clippable feature,
// whose coefficient is set to 0 after the fit, the intercept left as fitted.
type samples struct {
	max, minObs, perAxis int
	clip                 [2]bool
	buckets              map[[2]int][]obs
	order                [][2]int // bucket keys in creation order, so ties are broken as a dict iterates
	total                int
	lo, hi               [2]float64
	fitted               bool
	coef                 [3]float64 // intercept, then the features'
}

func newSamples(maxSamples, minObs, buckets, ndim int) samples {
	per := buckets
	if ndim == 2 {
		per = isqrt(buckets)
	}
	return samples{
		max: maxSamples, minObs: minObs, perAxis: per,
		buckets: map[[2]int][]obs{},
		lo:      [2]float64{math.Inf(1), math.Inf(1)}, hi: [2]float64{math.Inf(-1), math.Inf(-1)},
	}
}

type obs struct {
	x    [2]float64
	wall float64
}

// aggRegression is AggRegressionModel (perf_model/agg.py, 518a7027): wall time on the
// pass's scheduled prefill tokens and decode KV tokens.
type aggRegression struct {
	samples
	avgISL, avgDecodeLen, avgPrefill movingAverage
}

func newAggRegression(maxSamples, minObs, buckets int) *aggRegression {
	return &aggRegression{
		samples: newSamples(maxSamples, minObs, buckets, 2),
		avgISL:  movingAverage{n: maxSamples}, avgDecodeLen: movingAverage{n: maxSamples}, avgPrefill: movingAverage{n: maxSamples},
	}
}

// FPM is one engine's forward-pass metrics, as the planner samples them at a load tick:
// the last pass's scheduled work and wall time, and what waits.
type FPM struct {
	PrefillTokens       int64   // scheduled: prompt tokens computed in the pass
	PrefillRequests     int     // scheduled: requests prefilling in the pass
	DecodeKVTokens      int64   // scheduled: context tokens of the decoding requests
	DecodeRequests      int     // scheduled: decoding requests
	WallS               float64 // the pass's duration; 0: the engine was idle
	QueuedPrefillTokens int64   // waiting requests' prompt tokens still to compute
	QueuedDecodeKV      int64   // waiting (preempted) requests' context tokens
}

func (m *aggRegression) add(f FPM) {
	if f.PrefillRequests > 0 {
		m.avgISL.add(float64(f.PrefillTokens) / float64(f.PrefillRequests))
	}
	if f.DecodeRequests > 0 {
		m.avgDecodeLen.add(float64(f.DecodeKVTokens) / float64(f.DecodeRequests))
	}
	m.avgPrefill.add(float64(f.PrefillTokens))
	if f.WallS != 0 {
		m.observe([2]float64{float64(f.PrefillTokens), float64(f.DecodeKVTokens)}, f.WallS)
	}
}

// observe keeps one pass's features x and wall time.
func (m *samples) observe(x [2]float64, wall float64) {
	changed := false
	for i, v := range x {
		if v < m.lo[i] {
			m.lo[i], changed = v, true
		}
		if v > m.hi[i] {
			m.hi[i], changed = v, true
		}
	}
	if changed && m.total > 0 {
		m.rebuild()
	}
	m.push(m.key(x), obs{x, wall})
	m.total++
	if m.total > m.max {
		fattest, n := [2]int{}, -1
		for _, k := range m.order {
			if len(m.buckets[k]) > n {
				fattest, n = k, len(m.buckets[k])
			}
		}
		b := m.buckets[fattest][1:]
		m.buckets[fattest] = b
		m.total--
		if len(b) == 0 {
			m.drop(fattest)
		}
	}
	m.fitted = false
}

func (m *samples) key(x [2]float64) [2]int {
	var k [2]int
	for i, v := range x {
		if m.hi[i] > m.lo[i] {
			k[i] = max(0, min(int((v-m.lo[i])/(m.hi[i]-m.lo[i])*float64(m.perAxis)), m.perAxis-1))
		}
	}
	return k
}

func (m *samples) push(k [2]int, o obs) {
	b, ok := m.buckets[k]
	if !ok {
		m.order = append(m.order, k)
	}
	m.buckets[k] = append(b, o)
}

func (m *samples) drop(k [2]int) {
	delete(m.buckets, k)
	for i, o := range m.order {
		if o == k {
			m.order = append(m.order[:i], m.order[i+1:]...)
			return
		}
	}
}

// rebuild re-buckets every observation under new axis bounds, in gathering order.
func (m *samples) rebuild() {
	all := m.gather()
	m.buckets, m.order = map[[2]int][]obs{}, m.order[:0]
	for _, o := range all {
		m.push(m.key(o.x), o)
	}
}

func (m *samples) gather() []obs {
	var all []obs
	for _, k := range m.order {
		all = append(all, m.buckets[k]...)
	}
	return all
}

func (m *samples) sufficient() bool { return m.total >= m.minObs }

// fit solves the least-squares problem; false when the data are too few, singular, or give
// a negative coefficient.
func (m *samples) fit() bool {
	if m.fitted {
		return true
	}
	all := m.gather()
	if len(all) < m.minObs {
		return false
	}
	// Centre the features (as sklearn does before solving), then least squares by QR; a
	// constant feature gets coefficient 0, as sklearn's minimum-norm solution gives it.
	var mean [2]float64
	var my float64
	for _, o := range all {
		mean[0] += o.x[0]
		mean[1] += o.x[1]
		my += o.wall
	}
	n := float64(len(all))
	mean[0], mean[1], my = mean[0]/n, mean[1]/n, my/n
	var cols []int
	for j := range 2 {
		for _, o := range all {
			if o.x[j] != mean[j] {
				cols = append(cols, j)
				break
			}
		}
	}
	coef := [2]float64{}
	if len(cols) > 0 {
		a := mat.NewDense(len(all), len(cols), nil)
		y := mat.NewVecDense(len(all), nil)
		for i, o := range all {
			for c, j := range cols {
				a.Set(i, c, o.x[j]-mean[j])
			}
			y.SetVec(i, o.wall-my)
		}
		var sol mat.VecDense
		if err := sol.SolveVec(a, y); err != nil {
			return false
		}
		for c, j := range cols {
			coef[j] = sol.AtVec(c)
		}
	}
	m.coef = [3]float64{my - coef[0]*mean[0] - coef[1]*mean[1], coef[0], coef[1]}
	for j := range 2 {
		switch {
		case coef[j] >= 0:
		case m.clip[j]:
			m.coef[1+j] = 0
		default:
			return false
		}
	}
	m.fitted = true
	return true
}

// predict is the fitted wall time at features (a, b), at least a microsecond.
func (m *samples) predict(a, b float64) float64 {
	return max(1e-6, m.coef[0]+m.coef[1]*a+m.coef[2]*b)
}

// ttft is estimate_next_ttft in seconds: the queue plus an average prompt, discounted by
// the KV hit rate, in chunks of max_num_batched_tokens, each beside the current decode KV.
func (m *aggRegression) ttft(queued int64, maxTokens int, decodeKV float64, hit float64) (float64, bool) {
	if !m.fit() || maxTokens <= 0 {
		return 0, false
	}
	total := (float64(queued) + m.avgISL.value()) * (1 - clampHit(hit))
	if total <= 0 {
		return 0, true
	}
	t := 0.0
	for rem := total; rem > 0; rem -= float64(maxTokens) {
		t += m.predict(min(rem, float64(maxTokens)), decodeKV)
	}
	return t, true
}

// itl is estimate_next_itl in seconds.
func (m *aggRegression) itl(sched, queued float64) (float64, bool) {
	if !m.fit() {
		return 0, false
	}
	return m.predict(m.avgPrefill.value(), sched+queued+m.avgDecodeLen.value()), true
}

// bestRPS is find_best_engine_agg_rps: the largest decode concurrency whose ITL and TTFT
// stay within the targets (bounded by KV capacity, max_num_seqs and the prefill/decode
// balance), as requests per second by Little's law.
func (m *aggRegression) bestRPS(isl, osl float64, maxTokens int, ttftMS, itlMS float64, maxKV, maxSeqs int, hit float64) (rps, ttft, itl float64) {
	if !m.fit() || isl <= 0 || osl <= 0 || maxTokens <= 0 {
		return 0, 0, 0
	}
	effISL := isl * (1 - clampHit(hit))
	ctx := isl + osl/2
	kvCap := 1024
	if maxKV > 0 {
		kvCap = max(1, int(float64(maxKV)/max(1, ctx)))
	}
	seqCap := kvCap
	if maxSeqs > 0 {
		seqCap = maxSeqs
	}
	hard := min(kvCap, seqCap, maxTokens-1)
	balanced := func(x int) bool {
		b := maxTokens - x
		return b > 0 && isl/float64(b) <= osl
	}
	lo, hi := 1, max(1, hard)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if balanced(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for bs := 1; bs <= lo; bs++ {
		kv := float64(bs) * ctx
		pre := min(float64(bs)*effISL/max(1, osl), float64(maxTokens))
		wt := m.predict(pre, kv)
		est, _ := m.ttft(int64(pre), maxTokens, float64(int64(kv)), 0)
		if wt*1000 > itlMS || est*1000 > ttftMS {
			if bs == 1 {
				rps, ttft, itl = 1/(osl*wt), est*1000, wt*1000
			}
			break
		}
		rps, ttft, itl = float64(bs)/(osl*wt), est*1000, wt*1000
	}
	return rps, ttft, itl
}

func clampHit(h float64) float64 {
	if math.IsNaN(h) {
		return 0
	}
	return max(0, min(1, h))
}

// movingAverage is _MovingAverage: a window of n values, leading zeros skipped.
type movingAverage struct {
	n    int
	vals []float64
	sum  float64
	seen bool
}

func (a *movingAverage) add(v float64) {
	if v == 0 && !a.seen {
		return
	}
	if v != 0 {
		a.seen = true
	}
	if len(a.vals) == a.n {
		a.sum -= a.vals[0]
		a.vals = a.vals[1:]
	}
	a.vals = append(a.vals, v)
	a.sum += v
}

func (a *movingAverage) value() float64 {
	if len(a.vals) == 0 {
		return 0
	}
	return a.sum / float64(len(a.vals))
}
