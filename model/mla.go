package model

// Multi-head latent attention (DeepSeek-V3, Kimi-K2): AIConfigurator measures vLLM's whole
// attention module (DeepseekV2MLAAttention: the fused q_a/kv_a down-projection, the q_b and
// kv_b up-projections, RoPE, the latent KV-cache write, attention and o_proj) per GPU at a
// head count, for prefill and decode. The importer splits each measured module into its
// projections, priced from the GEMM rows at the step's token count like every other
// projection (so a mixed step runs them once over all its tokens, and a chunk after a cached
// prefix pays them for its new tokens only), and the rest, which becomes the attention grids.

import "fmt"

// mlaRow is a row of AIConfigurator's mla_{context,generation}_module_perf tables.
type mlaRow struct {
	Kernel   string  `parquet:"kernel_source,optional"`
	Model    string  `parquet:"model,optional"`
	MLADtype string  `parquet:"mla_dtype,optional"`
	KVDtype  string  `parquet:"kv_cache_dtype,optional"`
	GEMMType string  `parquet:"gemm_type,optional"`
	Heads    int64   `parquet:"num_heads,optional"`
	Batch    int64   `parquet:"batch_size,optional"`
	ISL      int64   `parquet:"isl,optional"`
	TP       int64   `parquet:"tp_size,optional"`
	Step     int64   `parquet:"step,optional"`
	Latency  float64 `parquet:"latency,optional"`
}

// mlaProjections prices one layer's MLA projections at m tokens on one GPU: the replicated
// fused down-projection (q_lora_rank + kv_lora_rank + qk_rope_head_dim outputs; without a
// q_lora_rank the queries come straight from the hidden state), the column-parallel q_b and
// kv_b up-projections and the row-parallel o_proj, in the attention's GEMM dtype.
func mlaProjections(gemms []gemmRow, quant string, s LLMSpec, tp int, note func(string)) (func(m float64) float64, string, error) {
	heads, h := s.Heads/tp, s.Hidden
	type shape struct {
		name string
		n, k int
	}
	shapes := []shape{
		{"q_b", heads * (s.QKNopeDim + s.QKRopeDim), s.QLoRARank},
		{"kv_b", heads * (s.QKNopeDim + s.VHeadDim), s.KVLoRARank},
		{"o_proj", h, heads * s.VHeadDim},
	}
	if s.QLoRARank > 0 {
		shapes = append([]shape{{"fused q_a/kv_a", s.QLoRARank + s.KVLoRARank + s.QKRopeDim, h}}, shapes...)
	} else {
		shapes = append([]shape{{"kv_a", s.KVLoRARank + s.QKRopeDim, h}, {"q", heads * (s.QKNopeDim + s.QKRopeDim), h}}, shapes[1:]...)
	}
	var curves []func(float64) float64
	words := quant + " GEMM"
	for _, sh := range shapes {
		c, err := gemmCurve(gemms, quant, sh.n, sh.k, note)
		if err != nil {
			return nil, "", err
		}
		curves = append(curves, c)
		words += fmt.Sprintf(" %s n=%d k=%d,", sh.name, sh.n, sh.k)
	}
	return func(m float64) float64 {
		var us float64
		for _, c := range curves {
			us += c(m)
		}
		return us
	}, words[:len(words)-1], nil
}

// mlaAttention is one layer's MLA attention without its projections, from the measured
// modules at the layer's heads per GPU: context (rows: prefill chunks, cols: tokens per chunk)
// and decode (rows: decoding requests, cols: context length). A measured module faster than
// its projections priced alone leaves no attention time (0) there; note counts such points.
func mlaAttention(ctxs, gens []mlaRow, table string, heads int, gemmQuant, kvDtype string, proj func(float64) float64,
	note func(string)) (ctx, gen func(b, n, pow float64) float64, err error) {
	var floored int
	collect := func(rows []mlaRow, context bool) surfaceSeries {
		pts := map[float64][]point{}
		for _, r := range rows {
			if r.Heads != int64(heads) || r.GEMMType != gemmQuant || r.KVDtype != kvDtype || r.MLADtype != attentionDtype || r.TP != 1 {
				continue
			}
			if context && r.Step != 0 {
				continue // a measured cached prefix: the grids take the prefix through the equivalent length
			}
			length, tokens := float64(r.ISL), float64(r.Batch*r.ISL)
			if !context {
				length, tokens = float64(r.Step), float64(r.Batch)
			}
			us := msToUS(r.Latency) - proj(tokens)
			if us < 0 {
				us, floored = 0, floored+1
			}
			pts[float64(r.Batch)] = append(pts[float64(r.Batch)], point{length, us})
		}
		return newSurfaceSeries(pts)
	}
	c, g := collect(ctxs, true), collect(gens, false)
	what := fmt.Sprintf("%d heads per GPU, %s projections, %s attention, %s KV cache", heads, gemmQuant, attentionDtype, kvDtype)
	if len(c.rows) == 0 {
		return nil, nil, missing(table+" mla_context_module_perf", what)
	}
	if len(g.rows) == 0 {
		return nil, nil, missing(table+" mla_generation_module_perf", what)
	}
	if floored > 0 {
		note(fmt.Sprintf("%s: %s: %d measured modules ran faster than their projections priced alone; their attention is priced 0", table, what, floored))
	}
	return c.at, g.at, nil
}

// mlaKVElements is the latent cache of one token in one layer: kv_lora_rank + qk_rope_head_dim
// elements, held whole on every GPU of the tensor-parallel group (vLLM does not split the
// latent across heads).
func mlaKVElements(s LLMSpec) int64 { return int64(s.KVLoRARank + s.QKRopeDim) }
