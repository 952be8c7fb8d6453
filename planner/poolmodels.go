package planner

import "math"

// prefillRegression is PrefillRegressionModel (perf_model/prefill.py, a2b2ed2e): a prefill
// engine's pass time on its scheduled prefill tokens (one axis of B buckets).
type prefillRegression struct {
	samples
	avgISL movingAverage // scheduled prefill tokens per prefill request
}

func newPrefillRegression(maxSamples, minObs, buckets int) *prefillRegression {
	return &prefillRegression{samples: newSamples(maxSamples, minObs, buckets, 1), avgISL: movingAverage{n: maxSamples}}
}

func (m *prefillRegression) add(f FPM) {
	if f.PrefillRequests > 0 {
		m.avgISL.add(float64(f.PrefillTokens) / float64(f.PrefillRequests))
	}
	if f.WallS != 0 {
		m.observe([2]float64{float64(f.PrefillTokens), 0}, f.WallS)
	}
}

// ttft is estimate_next_ttft in seconds: the queue plus an average prompt in chunks of
// max_num_batched_tokens. The hit rate discounts them as the aggregated model does:
// load_scaling.py (0c6da1ec) passes the planner's KV hit rate here.
func (m *prefillRegression) ttft(queued int64, maxTokens int, hit float64) (float64, bool) {
	if !m.fit() || maxTokens <= 0 {
		return 0, false
	}
	total := (float64(queued) + m.avgISL.value()) * (1 - clampHit(hit))
	t := 0.0
	for rem := total; rem > 0; rem -= float64(maxTokens) {
		t += m.predict(min(rem, float64(maxTokens)), 0)
	}
	return t, true
}

// bestRPS is find_best_engine_prefill_rps: one prompt of isl tokens (in chunks of
// max_num_batched_tokens past it) per pass time, and that time as the TTFT (ms).
func (m *prefillRegression) bestRPS(isl float64, maxTokens int) (rps, ttftMS float64) {
	if !m.fit() || isl <= 0 {
		return 0, 0
	}
	var wt float64
	if mt := float64(maxTokens); maxTokens > 0 && isl > mt {
		n := math.Ceil(isl / mt)
		wt = (n-1)*m.predict(mt, 0) + m.predict(isl-(n-1)*mt, 0)
	} else {
		wt = m.predict(isl, 0)
	}
	return 1 / wt, wt * 1000
}

// decodeRegression is DecodeRegressionModel (perf_model/decode.py, 439d6458): a decode
// engine's pass time on its decoding requests and their KV tokens (a √B × √B grid); the
// request count's coefficient, collinear with the KV, is clipped to 0 when negative.
type decodeRegression struct {
	samples
	avgDecodeLen, avgNumDecode movingAverage
	maxKV                      float64 // the most decode KV seen in a pass
}

func newDecodeRegression(maxSamples, minObs, buckets int) *decodeRegression {
	m := &decodeRegression{samples: newSamples(maxSamples, minObs, buckets, 2),
		avgDecodeLen: movingAverage{n: maxSamples}, avgNumDecode: movingAverage{n: maxSamples}}
	m.clip[0] = true
	return m
}

func (m *decodeRegression) add(f FPM) {
	if f.DecodeRequests > 0 {
		m.avgDecodeLen.add(float64(f.DecodeKVTokens) / float64(f.DecodeRequests))
	}
	m.avgNumDecode.add(float64(f.DecodeRequests))
	m.maxKV = max(m.maxKV, float64(f.DecodeKVTokens))
	if f.WallS != 0 {
		m.observe([2]float64{float64(f.DecodeRequests), float64(f.DecodeKVTokens)}, f.WallS)
	}
}

// itl is estimate_next_itl in seconds: the next pass with one more request of average
// length beside what is scheduled and queued.
func (m *decodeRegression) itl(sched, queued float64) (float64, bool) {
	if !m.fit() {
		return 0, false
	}
	return m.predict(m.avgNumDecode.value()+1, sched+queued+m.avgDecodeLen.value()), true
}

// bestRPS is find_best_engine_decode_rps: the largest batch at context ctx whose pass
// time stays within the ITL target (bounded by KV capacity and max_num_seqs; at least 1),
// as requests per second by Little's law, and that pass time (ms).
func (m *decodeRegression) bestRPS(itlMS, ctx, osl float64, maxKV, maxSeqs int) (rps, itl float64) {
	if !m.fit() || ctx <= 0 || osl <= 0 || itlMS <= 0 {
		return 0, 0
	}
	kvCap := 256
	switch {
	case maxKV > 0:
		kvCap = max(1, int(float64(maxKV)/ctx))
	case m.maxKV > 0:
		kvCap = max(1, int(m.maxKV/ctx))
	}
	seqCap := kvCap
	if maxSeqs > 0 {
		seqCap = maxSeqs
	}
	best, wt := 1, m.predict(1, ctx)
	if wt*1000 <= itlMS {
		for lo, hi := 1, max(1, min(kvCap, seqCap)); lo <= hi; {
			mid := (lo + hi) / 2
			if w := m.predict(float64(mid), float64(mid)*ctx); w*1000 <= itlMS {
				best, wt, lo = mid, w, mid+1
			} else {
				hi = mid - 1
			}
		}
	}
	return float64(best) / (osl * wt), wt * 1000
}
