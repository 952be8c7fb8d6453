package model

// The GEMM curves at a layer's shapes: the attention (or MLA, or DeltaNet) projections, the
// logits and the dense MLP.

import (
	"fmt"
	"sort"
)

// gemmCurve is the measured latency (µs) of an m×k by k×n GEMM as a function of m. An n
// between two measured n (same k) is interpolated linearly in n, and beyond the widest held at
// its utilisation. A k the tables never measured is interpolated linearly between the nearest
// measured k (or above the largest scaled by k, holding its utilisation); note records that.
func gemmCurve(rows []gemmRow, dtype string, n, k int, note func(string)) (func(m float64) float64, error) {
	ks := map[int64]bool{}
	for _, r := range rows {
		if r.Dtype == dtype {
			ks[r.K] = true
		}
	}
	c, lo, hi, err := acrossK(ks, int64(k), func(x int64) (func(float64) float64, error) { return gemmCurveAtK(rows, dtype, n, int(x)) })
	switch {
	case err != nil:
		return nil, err
	case lo == 0:
		return nil, missing("gemm_perf", fmt.Sprintf("%s n=%d k=%d (no measured k at or below it)", dtype, n, k))
	case hi == 0:
		note(fmt.Sprintf("gemm_perf: %s n=%d k=%d extrapolated from the measured k=%d (× %.3g)", dtype, n, k, lo, float64(k)/float64(lo)))
	case lo != int64(k):
		note(fmt.Sprintf("gemm_perf: %s n=%d k=%d interpolated between the measured k=%d and k=%d", dtype, n, k, lo, hi))
	}
	return c, nil
}

// acrossK is a curve of m at inner dimension k from the curves measured at other k (at): at a
// measured k that one; between the nearest measured k below and above it, linearly in k; above
// the largest measured, that one scaled by k (its utilisation held). lo and hi are the k it
// read: lo == hi == k where k was measured, hi 0 where it scaled lo; lo 0 (and no curve) where
// no k at or below it was measured.
func acrossK[V any](measured map[int64]V, k int64, at func(int64) (func(float64) float64, error)) (c func(float64) float64, lo, hi int64, err error) {
	if _, ok := measured[k]; ok {
		c, err = at(k)
		return c, k, k, err
	}
	lo, hi = neighbours(measured, k)
	if lo == 0 {
		return nil, 0, hi, nil
	}
	a, err := at(lo)
	if err != nil {
		return nil, lo, hi, err
	}
	if hi == 0 {
		r := float64(k) / float64(lo)
		return func(m float64) float64 { return a(m) * r }, lo, 0, nil
	}
	b, err := at(hi)
	if err != nil {
		return nil, lo, hi, err
	}
	w := float64(k-lo) / float64(hi-lo)
	return func(m float64) float64 { x := a(m); return x + (b(m)-x)*w }, lo, hi, nil
}

// neighbours are the largest measured key below x and the smallest above it, 0 where there is
// none.
func neighbours[V any](measured map[int64]V, x int64) (lo, hi int64) {
	for v := range measured {
		if v < x && v > lo {
			lo = v
		} else if v > x && (hi == 0 || v < hi) {
			hi = v
		}
	}
	return lo, hi
}

func gemmCurveAtK(rows []gemmRow, dtype string, n, k int) (func(m float64) float64, error) {
	byN := map[int64][]point{}
	for _, r := range rows {
		if r.Dtype == dtype && r.K == int64(k) {
			byN[r.N] = append(byN[r.N], point{float64(r.M), msToUS(r.Latency)})
		}
	}
	if pts, ok := byN[int64(n)]; ok {
		s := newSeries(pts)
		return func(m float64) float64 { return s.at(m, 1) }, nil
	}
	var ns []int64
	for x := range byN {
		ns = append(ns, x)
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
	i := sort.Search(len(ns), func(i int) bool { return ns[i] > int64(n) })
	if i == 0 {
		return nil, missing("gemm_perf", fmt.Sprintf("%s n=%d k=%d (measured n at this k: %v)", dtype, n, k, ns))
	}
	if i == len(ns) {
		// Above the widest measured n the measured utilisation is held, as on the other axes:
		// the work (and the weight bytes) grow as n.
		top := ns[len(ns)-1]
		s, r := newSeries(byN[top]), float64(n)/float64(top)
		return func(m float64) float64 { return s.at(m, 1) * r }, nil
	}
	lo, hi := newSeries(byN[ns[i-1]]), newSeries(byN[ns[i]])
	w := float64(int64(n)-ns[i-1]) / float64(ns[i]-ns[i-1])
	return func(m float64) float64 { a := lo.at(m, 1); return a + (hi.at(m, 1)-a)*w }, nil
}

// gemmAt is gemmCurve at dtype, or for a per-tensor FP8 GEMM under a static input scale
// (fp8static.go): the row less the quantisation the run does not do.
func (d *deriver) gemmAt(dtype string, n, k int, fp8Input bool) (func(float64) float64, error) {
	if dtype != gemmFP8Static {
		return gemmCurve(d.gemms, dtype, n, k, d.note)
	}
	c, err := gemmCurve(d.gemms, "fp8", n, k, d.note)
	if err != nil {
		return nil, err
	}
	return d.fp8.gemm(c, n, k, fp8Input)
}

// projections prices one layer's attention projections, the logits and a hybrid model's
// DeltaNet projections.
func (d *deriver) projections() error {
	if err := d.attentionProjections(); err != nil {
		return err
	}
	logits, err := gemmCurve(d.gemms, unquantGEMMDtype, d.s.Vocab/d.l.TP, d.s.Hidden, d.note)
	if err != nil {
		return err
	}
	d.logits = logits
	return d.linearProjections()
}

// The attention projections of one layer: QKV and output, or MLA's down-, up- and output
// projections.
func (d *deriver) attentionProjections() error {
	s, l, mla, h := d.s, d.l, d.mla, d.s.Hidden
	if s.MLA() {
		p, words, err := mlaProjections(d.gemms, d.attnQuant, s, l.TP, !mla.ops, d.note)
		if err != nil {
			return err
		}
		d.attnProj, d.attnWords = p, "MLA projections: "+words
		if mla.ops {
			n, k := d.headsPerGPU*(s.QKNopeDim+s.VHeadDim), s.KVLoRARank
			if d.mlaKVB, err = gemmCurve(d.gemms, d.attnQuant, n, k, d.note); err != nil {
				return err
			}
			d.mlaBMM = mlaBMMDtype(d.t.Backend, mla.bmms, d.headsPerGPU, d.attnQuant)
			d.attnWords += fmt.Sprintf("; kv_b n=%d k=%d with the prefill attention, the decode BMMs %s (%s)", n, k, d.mlaBMM, mla.bmmRel)
		}
		return nil
	}
	qHeads := d.headsPerGPU
	if s.AttnOutputGate {
		qHeads *= 2 // q_proj yields the query and its output gate
	}
	qkvN := (qHeads + 2*d.kvPerGPU) * s.HeadDim
	qkv, err := d.gemmAt(d.attnQuant, qkvN, h, d.fp8In.qkv)
	if err != nil {
		return err
	}
	proj, err := d.gemmAt(d.attnQuant, h, d.headsPerGPU*s.HeadDim, d.fp8In.oProj)
	if err != nil {
		return err
	}
	d.attnProj = func(x float64) float64 { return qkv(x) + proj(x) }
	d.attnWords = fmt.Sprintf("%s GEMM qkv n=%d k=%d, proj n=%d k=%d", d.attnQuant, qkvN, h, h, d.headsPerGPU*s.HeadDim)
	return nil
}

// A hybrid model's DeltaNet layers have projections of their own; the attention
// projections, RoPE, KV write and QK-norm belong to its full-attention layers only.
func (d *deriver) linearProjections() error {
	s := d.s
	if !s.Hybrid() {
		return nil
	}
	p, words, err := linearProjections(d.gemms, d.t.GEMMQuant, s, d.l.TP, d.t.BackendVersion, d.note)
	if err != nil {
		return err
	}
	d.linearProj, d.attnWords = p, fmt.Sprintf("%d full-attention layers: %s%s", s.FullAttentionLayers(), d.attnWords, words)
	return nil
}

// mlps prices the dense MLP and a MoE model's shared experts; shared experts folded into the
// routed experts' kernel (fusedShared) are the MoE stage's, and have no words of their own.
func (d *deriver) mlps() error {
	var err error
	if d.mlp, d.mlpWords, err = d.mlpCurve(d.s.Inter); err != nil {
		return err
	}
	if d.shared, d.sharedWords, err = d.mlpCurve(d.s.SharedInter); d.fusedShared > 0 {
		d.sharedWords = ""
	}
	return err
}

// The dense MLP (and a MoE model's shared experts) is column- then row-parallel over tp:
// one gate_up GEMM of n = 2 × inter / tp and one down GEMM of k = inter / tp.
func (d *deriver) mlpCurve(inter int) (func(float64) float64, string, error) {
	tp, h := d.l.TP, d.s.Hidden
	if inter == 0 {
		return zero, "", nil
	}
	if inter%tp != 0 {
		return nil, "", fmt.Errorf("intermediate size %d is not divisible by tp %d", inter, tp)
	}
	up, err := d.gemmAt(d.t.GEMMQuant, 2*inter/tp, h, d.fp8In.gateUp)
	if err != nil {
		return nil, "", err
	}
	down, err := d.gemmAt(d.t.GEMMQuant, h, inter/tp, d.fp8In.down)
	if err != nil {
		return nil, "", err
	}
	return func(m float64) float64 { return up(m) + down(m) },
		fmt.Sprintf("; MLP gate_up n=%d k=%d, down n=%d k=%d", 2*inter/tp, h, h, inter/tp), nil
}
