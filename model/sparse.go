package model

// DeepSeek sparse attention (DSA: DeepSeek-V3.2, GLM-5). Each layer is multi-head latent
// attention whose queries attend not to every cached token but to the index_topk tokens a
// lightning indexer picks: a small FP8 multi-query attention (index_n_heads heads of
// index_head_dim) scores every cached token against the query, and the sparse MLA kernel then
// reads the latents of the top-k only. Decode thus costs the indexer over the whole context
// plus MLA over min(context, index_topk) tokens.
//
// AIConfigurator measures the whole attention module per GPU at a head count
// (sparse_attention/<backend>/<version>/dsa_{context,generation}_module_perf: the projections,
// the indexer, the top-k selection, the sparse MLA kernel and o_proj, run by the engine's own
// DSA backend, kernel_source naming it) and composes a DSA model from these modules alone
// (ai-dynamo/aiconfigurator src/aiconfigurator/sdk/models/deepseek_v32.py at 0472efbc,
// DeepSeekV32Model: ContextDSAModule and GenerationDSAModule at num_heads / tp_size, beside the
// MoE and shared-expert operators). The tables are priced as measured: prefill (rows: chunks,
// cols: tokens per chunk) at step 0, decode (rows: decoding requests, cols: context length).
// Above the longest measured context, decode grows by the indexer's work alone: the sparse MLA
// reads index_topk tokens whatever the context, so the measured module's growth between
// index_topk and the longest context (which only the indexer's scoring and the top-k
// selection make) is carried on linearly.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
)

// dsaRow is a row of AIConfigurator's dsa_{context,generation}_module_perf tables.
type dsaRow struct {
	Op           string  `parquet:"op_name,optional"`
	Kernel       string  `parquet:"kernel_source,optional"`
	Architecture string  `parquet:"architecture,optional"`
	MLADtype     string  `parquet:"mla_dtype,optional"`
	KVDtype      string  `parquet:"kv_cache_dtype,optional"`
	GEMMType     string  `parquet:"gemm_type,optional"`
	Heads        int64   `parquet:"num_heads,optional"`
	Batch        int64   `parquet:"batch_size,optional"`
	ISL          int64   `parquet:"isl,optional"`
	TP           int64   `parquet:"tp_size,optional"`
	Step         int64   `parquet:"step,optional"`
	Latency      float64 `parquet:"latency,optional"`
}

// The module ops with the indexer (the _skip_indexer variants measure a layer that reuses a
// previous layer's top-k: GLM-5.2's, not GLM-5's).
const (
	dsaContextOp    = "dsa_context_module"
	dsaGenerationOp = "dsa_generation_module"
)

// DSAConfig is what a checkpoint's config.json says of its sparse attention.
type DSAConfig struct {
	Architecture string // architectures[0]: the tables key their rows by it
	IndexTopK    int    // tokens the indexer keeps per query
	IndexHeads   int    // the indexer's query heads
	IndexHeadDim int    // the indexer's key width
}

// parseDSAConfig reads the sparse-attention fields of a config.json (a multimodal
// checkpoint's text_config when it has one).
func parseDSAConfig(path string, b []byte) (DSAConfig, error) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	var wrap struct {
		Text json.RawMessage `json:"text_config"`
	}
	if err := json.Unmarshal(b, &wrap); err != nil {
		return DSAConfig{}, fmt.Errorf("model import: %s: %w", path, err)
	}
	if len(wrap.Text) > 0 && string(wrap.Text) != "null" {
		b = wrap.Text
	}
	var c struct {
		Architectures []string `json:"architectures"`
		IndexTopK     int      `json:"index_topk"`
		IndexHeads    int      `json:"index_n_heads"`
		IndexHeadDim  int      `json:"index_head_dim"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return DSAConfig{}, fmt.Errorf("model import: %s: %w", path, err)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"index_topk", c.IndexTopK}, {"index_n_heads", c.IndexHeads}, {"index_head_dim", c.IndexHeadDim}} {
		if f.v <= 0 {
			return DSAConfig{}, fmt.Errorf("model import: %s: field %s: missing or not positive", path, f.name)
		}
	}
	if len(c.Architectures) == 0 || c.Architectures[0] == "" {
		return DSAConfig{}, fmt.Errorf("model import: %s: field architectures: missing (the DSA tables key their rows by it)", path)
	}
	return DSAConfig{Architecture: c.Architectures[0], IndexTopK: c.IndexTopK, IndexHeads: c.IndexHeads, IndexHeadDim: c.IndexHeadDim}, nil
}

// readDSATables reads a backend's DSA module tables at version, recording their digests.
func readDSATables(aicDir, sku string, b Backend, version string, srcs *[]Source) (ctxs, gens []dsaRow, ctxRel, genRel string, err error) {
	dir := filepath.Join(sku, "sparse_attention", string(b), version)
	ctxRel, genRel = filepath.Join(dir, "dsa_context_module_perf.parquet"), filepath.Join(dir, "dsa_generation_module_perf.parquet")
	if ctxs, err = readParquet[dsaRow](aicDir, ctxRel, srcs); err != nil {
		return nil, nil, "", "", err
	}
	if gens, err = readParquet[dsaRow](aicDir, genRel, srcs); err != nil {
		return nil, nil, "", "", err
	}
	return ctxs, gens, ctxRel, genRel, nil
}

// dsaSelect names the measured modules one deployment prices from: the engine's DSA kernels
// (kernel_source), the checkpoint's architecture, the heads per GPU, the projections' GEMM
// dtype and the KV cache's dtype, as the tables spell them.
type dsaSelect struct {
	Kernel, Architecture string
	Heads                int
	GEMMType, KVDtype    string
}

func (s dsaSelect) match(r dsaRow, op string) bool {
	return r.Op == op && r.Kernel == s.Kernel && r.Architecture == s.Architecture && r.Heads == int64(s.Heads) &&
		r.GEMMType == s.GEMMType && r.KVDtype == s.KVDtype && r.MLADtype == attentionDtype && r.TP == 1
}

func (s dsaSelect) String() string {
	return fmt.Sprintf("%s %s, %d heads per GPU, %s projections, %s KV cache", s.Kernel, s.Architecture, s.Heads, s.GEMMType, s.KVDtype)
}

// dsaDecode is the measured decode module: per measured batch a curve over context length,
// and per batch the indexer's growth per token of context beyond index_topk.
type dsaDecode struct {
	rows  []float64
	by    []series
	slope []float64
}

// newDSADecode takes each batch's indexer growth from its own points between index_topk and
// its longest context; a batch measured no further than index_topk (the large ones) takes it
// from the largest batch that is, per request: the indexer scores every request's whole
// context, so its work grows with requests × context.
func newDSADecode(g surfaceSeries, topk float64) dsaDecode {
	d := dsaDecode{rows: g.rows, by: g.by, slope: make([]float64, len(g.rows))}
	perRequest := 0.0
	for i, s := range g.by {
		if last := s[len(s)-1]; last.x > topk {
			d.slope[i] = max(0, last.us-s.at(topk, 1)) / (last.x - topk)
			perRequest = d.slope[i] / g.rows[i]
		} else {
			d.slope[i] = perRequest * g.rows[i]
		}
	}
	return d
}

// at is one layer's decode module (µs) for b requests at context n.
func (d dsaDecode) at(b, n float64) float64 {
	if b <= d.rows[0] {
		return d.curve(0, n)
	}
	last := len(d.rows) - 1
	if b >= d.rows[last] {
		return d.curve(last, n) * b / d.rows[last]
	}
	i := 1
	for d.rows[i] < b {
		i++
	}
	lo, hi := d.curve(i-1, n), d.curve(i, n)
	return lo + (hi-lo)*(b-d.rows[i-1])/(d.rows[i]-d.rows[i-1])
}

// curve is batch row i at context n: measured within its lengths, beyond the longest growing
// by the indexer's work alone (the sparse MLA reads index_topk tokens whatever the context).
func (d dsaDecode) curve(i int, n float64) float64 {
	s := d.by[i]
	last := s[len(s)-1]
	if n <= last.x {
		return s.at(n, 1)
	}
	return last.us + d.slope[i]*(n-last.x)
}

// dsaModule is one layer's DSA attention from the module rows: prefill (b chunks of n tokens,
// the measured surface) and decode (b requests at context n).
func dsaModule(ctxs, gens []dsaRow, ctxRel, genRel string, sel dsaSelect, topk int) (ctx func(b, n, pow float64) float64, gen func(b, n float64) float64, err error) {
	cpts, gpts := map[float64][]point{}, map[float64][]point{}
	for _, r := range ctxs {
		if sel.match(r, dsaContextOp) && r.Step == 0 {
			cpts[float64(r.Batch)] = append(cpts[float64(r.Batch)], point{float64(r.ISL), msToUS(r.Latency)})
		}
	}
	for _, r := range gens {
		if sel.match(r, dsaGenerationOp) {
			gpts[float64(r.Batch)] = append(gpts[float64(r.Batch)], point{float64(r.Step), msToUS(r.Latency)})
		}
	}
	if len(cpts) == 0 {
		return nil, nil, missing(ctxRel, sel.String())
	}
	if len(gpts) == 0 {
		return nil, nil, missing(genRel, sel.String())
	}
	g := newSurfaceSeries(gpts)
	return newSurfaceSeries(cpts).at, newDSADecode(g, float64(topk)).at, nil
}

// dsaIndexerQuantBlock is the indexer cache's FP8 quantisation block: one float32 scale per
// 128 values.
const dsaIndexerQuantBlock = 128

// dsaKVBytesPerToken is one token's cache in one layer under SGLang's NSA pool
// (python/sglang/srt/mem_cache/memory_pool.py, NSATokenToKVPool, as the index holds it): the
// MLA latent — kv_lora_rank + qk_rope_head_dim BF16 elements, or with the FP8 cache the latent
// in FP8 with a float32 scale per 128 values and the RoPE key kept in BF16 (SGLang's 656-byte
// row for GLM-5) — beside the indexer's key, always FP8 with its scales (index_head_dim +
// index_head_dim / 128 × 4 bytes: 132).
func dsaKVBytesPerToken(s LLMSpec, d DSAConfig, kvDtype string) int64 {
	latent := int64(s.KVLoRARank+s.QKRopeDim) * 2
	if kvDtype == KVFP8 {
		latent = int64(s.KVLoRARank) + int64(s.KVLoRARank/dsaIndexerQuantBlock)*4 + int64(s.QKRopeDim)*2
	}
	indexer := int64(d.IndexHeadDim) + int64(d.IndexHeadDim/dsaIndexerQuantBlock)*4
	return latent + indexer
}
