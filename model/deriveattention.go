package model

// Attention per KV-cache dtype: the measured rows at the layer's heads per GPU (or the MLA and
// DSA modules), the sliding-window layers, and the FP8 cache levelled to the BF16 price.

import (
	"fmt"
	"sort"
)

// attention prices the attention of one forward pass, context and decode, per KV-cache dtype.
func (d *deriver) attention() error {
	for _, kv := range []struct{ dtype, aic string }{{KVBF16, attentionDtype}, {KVFP8, "fp8"}} {
		a, err := d.attentionAt(kv.dtype, kv.aic)
		if err != nil {
			return err
		}
		d.t.Attention = append(d.t.Attention, a)
	}
	d.levelFP8KV()
	return nil
}

// attentionAt is the attention grids with the KV cache in kvDtype (kvAIC as the rows spell it).
func (d *deriver) attentionAt(kvDtype, kvAIC string) (Attention, error) {
	s := d.s
	layers, fullLayers := float64(s.Layers), float64(s.FullAttentionLayers())
	// Full-attention layers, plus the sliding-window layers from the rows measured with
	// that window (each layer one call).
	full, sliding := layers-float64(s.SlidingLayers), float64(s.SlidingLayers)
	ctxFull, genFull, err := d.fullAttention(kvAIC)
	if err != nil {
		return Attention{}, err
	}
	ctx, gen := ctxFull, genFull
	if s.SlidingLayers > 0 {
		ctxWin, err := d.attn(d.ctxs, "context_attention_perf", kvAIC, true, s.SlidingWindow)
		if err != nil {
			return Attention{}, err
		}
		genWin, err := d.attn(d.gens, "generation_attention_perf", kvAIC, false, s.SlidingWindow)
		if err != nil {
			return Attention{}, err
		}
		ctx = func(b, n, pow float64) float64 { return (full*ctxFull(b, n, pow) + sliding*ctxWin(b, n, pow)) / layers }
		gen = func(b, n, pow float64) float64 { return (full*genFull(b, n, pow) + sliding*genWin(b, n, pow)) / layers }
	}
	cr, cc := axisNodes(chunkOctaves), axisNodes(equivLenOctaves)
	dr, dc := axisNodes(decodeOctaves), axisNodes(decodeCtxOctaves)
	return Attention{
		KVCacheDtype: kvDtype,
		Context: Grid{Rows: cr, Cols: cc, Values: round(sample2(cr, cc, func(b, n float64) float64 {
			return fullLayers * ctx(b, n, 2)
		}))},
		Decode: Grid{Rows: dr, Cols: dc, Values: round(sample2(dr, dc, func(b, n float64) float64 {
			return fullLayers * gen(b, n, 1)
		}))},
	}, nil
}

// fullAttention is a full-attention layer's context and decode attention with the KV cache
// in kvAIC: the DSA or MLA module, or the measured attention rows.
func (d *deriver) fullAttention(kvAIC string) (ctx, gen func(b, n, pow float64) float64, err error) {
	s, mla := d.s, d.mla
	switch {
	case s.DSA():
		sel := dsaSelect{Architecture: mla.dsaArch, Heads: d.headsPerGPU, ModelHeads: s.Heads, GEMMType: d.attnQuant, KVDtype: kvAIC}
		ctx, gen, d.dsaWords, err = dsaModule(mla.dsaCtxs, mla.dsaGens, d.ctxRel, d.genRel, sel, s.IndexTopK, d.attnProj, d.note)
		return ctx, gen, err
	case s.MLA() && mla.ops:
		return mlaOpAttention(mla, d.ctxRel, d.genRel, s, d.headsPerGPU, kvAIC, d.mlaBMM, d.mlaKVB)
	case s.MLA():
		return mlaAttention(mla.ctxs, mla.gens, d.ctxRel, d.headsPerGPU, d.attnQuant, kvAIC, d.attnProj, d.note)
	}
	if ctx, err = d.attn(d.ctxs, "context_attention_perf", kvAIC, true, 0); err != nil {
		return nil, nil, err
	}
	gen, err = d.attn(d.gens, "generation_attention_perf", kvAIC, false, 0)
	return ctx, gen, err
}

// An FP8 cache moves half the bytes of a BF16 one through the same kernels, so it is never
// slower; where its measured point lies above the BF16 one (up to 20 % at a few short,
// launch-bound shapes) that is measurement noise, levelled to the BF16 price.
func (d *deriver) levelFP8KV() {
	t := d.t
	bf16, fp8KV := &t.Attention[0], &t.Attention[1]
	for _, g := range []struct{ lo, hi []float64 }{{fp8KV.Context.Values, bf16.Context.Values}, {fp8KV.Decode.Values, bf16.Decode.Values}} {
		for i := range g.lo {
			g.lo[i] = min(g.lo[i], g.hi[i])
		}
	}
	sort.Slice(t.Attention, func(i, j int) bool { return t.Attention[i].KVCacheDtype < t.Attention[j].KVCacheDtype })
}

// Attention runs in BF16 whatever the KV-cache dtype (vLLM dequantises an FP8 cache in the
// kernel), so each KV dtype has its own measured rows with attn_dtype bfloat16.
// A collection that measures an FP8 cache at a shape only with FP8 attention math (SGLang
// 0.5.14's head_dim 256 rows on H200) prices it with those rows, stated in t.Extrapolated.
func (d *deriver) attnDtype(rows []attentionRow, table, kvDtype string) string {
	s, headsPerGPU, kvPerGPU := d.s, d.headsPerGPU, d.kvPerGPU
	key := [2]string{table, kvDtype}
	if ad, ok := d.attnDtypes[key]; ok {
		return ad
	}
	d.attnDtypes[key] = attentionDtype
	for _, r := range rows {
		if r.KVDtype == kvDtype && r.AttnDtype == attentionDtype && r.HeadDim == int64(s.HeadDim) && r.KVHeads == int64(kvPerGPU) && r.Heads == int64(headsPerGPU) {
			return attentionDtype
		}
	}
	for _, r := range rows {
		if r.KVDtype == kvDtype && r.AttnDtype == kvDtype && r.HeadDim == int64(s.HeadDim) && r.KVHeads == int64(kvPerGPU) && r.Heads == int64(headsPerGPU) {
			d.note(fmt.Sprintf("%s: %s KV cache at %d heads, %d KV heads, head_dim %d measured only with %s attention: priced from those rows", table, kvDtype, headsPerGPU, kvPerGPU, s.HeadDim, kvDtype))
			d.attnDtypes[key] = kvDtype
			return kvDtype
		}
	}
	return attentionDtype
}

// attnAt is the measured attention rows at heads query heads per GPU, as a surface of the
// batch and the context length.
func (d *deriver) attnAt(rows []attentionRow, table, kvDtype string, stepIsContext bool, heads, window int) surfaceSeries {
	pts := map[float64][]point{}
	ad := d.attnDtype(rows, table, kvDtype)
	for _, r := range rows {
		if r.Heads == int64(heads) && r.KVHeads == int64(d.kvPerGPU) && r.HeadDim == int64(d.s.HeadDim) &&
			r.Beam == 1 && r.Window == int64(window) && r.AttnDtype == ad && r.KVDtype == kvDtype {
			length := r.ISL
			if !stepIsContext {
				length = r.ISL + r.Step // generation rows: context = prompt + generated so far
			}
			pts[float64(r.Batch)] = append(pts[float64(r.Batch)], point{float64(length), msToUS(r.Latency)})
		}
	}
	return newSurfaceSeries(pts)
}

// attn prices the layer's attention at its query heads per GPU. A head count the tables
// never measured (with this many KV heads) is interpolated linearly between the nearest
// measured counts, or above the largest scaled by heads (the work per head is the same);
// either is stated in t.Extrapolated.
func (d *deriver) attn(rows []attentionRow, table, kvDtype string, stepIsContext bool, window int) (func(b, n, pow float64) float64, error) {
	s, headsPerGPU, kvPerGPU := d.s, d.headsPerGPU, d.kvPerGPU
	at := func(heads int) surfaceSeries { return d.attnAt(rows, table, kvDtype, stepIsContext, heads, window) }
	if exact := at(headsPerGPU); len(exact.rows) > 0 {
		return exact.at, nil
	}
	lo, hi := 0, 0
	for _, r := range rows {
		if r.KVHeads == int64(kvPerGPU) && r.HeadDim == int64(s.HeadDim) && r.AttnDtype == d.attnDtype(rows, table, kvDtype) && r.KVDtype == kvDtype && r.Window == int64(window) {
			if n := int(r.Heads); n < headsPerGPU && n > lo {
				lo = n
			} else if n > headsPerGPU && (hi == 0 || n < hi) {
				hi = n
			}
		}
	}
	what := fmt.Sprintf("%d heads, %d KV heads, head_dim %d, %s attention, %s KV cache", headsPerGPU, kvPerGPU, s.HeadDim, d.attnDtype(rows, table, kvDtype), kvDtype)
	if window > 0 {
		what += fmt.Sprintf(", window %d", window)
	}
	switch {
	case lo > 0 && hi > 0:
		a, b := at(lo), at(hi)
		w := float64(headsPerGPU-lo) / float64(hi-lo)
		d.note(fmt.Sprintf("%s: %s interpolated between the measured %d and %d heads", table, what, lo, hi))
		return func(x, n, pow float64) float64 { u := a.at(x, n, pow); return u + (b.at(x, n, pow)-u)*w }, nil
	case lo > 0:
		a, r := at(lo), float64(headsPerGPU)/float64(lo)
		d.note(fmt.Sprintf("%s: %s extrapolated from the measured %d heads (× %g)", table, what, lo, r))
		return func(x, n, pow float64) float64 { return a.at(x, n, pow) * r }, nil
	}
	return nil, missing(table, what)
}
