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
// MoE and shared-expert operators). The importer prices the modules as measured, less the MLA
// projections it prices from the GEMM rows at the step's tokens (as for vLLM's MLA modules,
// mla.go): prefill (rows: chunks, cols: tokens per chunk) at step 0, decode (rows: decoding
// requests, cols: context length). Above the longest measured context, decode grows by the indexer's work alone: the sparse MLA
// reads index_topk tokens whatever the context, so the measured module's growth between
// index_topk and the longest context (which only the indexer's scoring and the top-k
// selection make) is carried on linearly.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// The module ops with the indexer (the _skip_indexer variants measure a layer that reuses a
// previous layer's top-k: GLM-5.2's, not GLM-5's).
const (
	dsaContextOp    = "dsa_context_module"
	dsaGenerationOp = "dsa_generation_module"
)

// dsaArchitecture is a checkpoint's architectures[0] (its text_config's in a multimodal
// checkpoint), by which the DSA tables key their rows (GlmMoeDsaForCausalLM,
// DeepseekV32ForCausalLM).
func dsaArchitecture(path string, b []byte) (string, error) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	var wrap struct {
		Text json.RawMessage `json:"text_config"`
	}
	if err := json.Unmarshal(b, &wrap); err != nil {
		return "", fmt.Errorf("model import: %s: %w", path, err)
	}
	if len(wrap.Text) > 0 && string(wrap.Text) != "null" {
		b = wrap.Text
	}
	var c struct {
		Architectures []string `json:"architectures"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return "", fmt.Errorf("model import: %s: %w", path, err)
	}
	if len(c.Architectures) == 0 || c.Architectures[0] == "" {
		return "", fmt.Errorf("model import: %s: field architectures: missing (the DSA tables key their rows by it)", path)
	}
	return c.Architectures[0], nil
}

// readDSATables reads a backend's DSA module tables at version, recording their digests.
func readDSATables(aicDir, sku string, b Backend, version string, srcs *[]Source) (ctxs, gens []mlaRow, ctxRel, genRel string, err error) {
	dir := filepath.Join(sku, "sparse_attention", string(b), version)
	ctxRel, genRel = filepath.Join(dir, "dsa_context_module_perf.parquet"), filepath.Join(dir, "dsa_generation_module_perf.parquet")
	if ctxs, err = readParquet[mlaRow](aicDir, ctxRel, srcs); err != nil {
		return nil, nil, "", "", err
	}
	if gens, err = readParquet[mlaRow](aicDir, genRel, srcs); err != nil {
		return nil, nil, "", "", err
	}
	return ctxs, gens, ctxRel, genRel, nil
}

// dsaSelect names the measured modules one deployment prices from: the checkpoint's
// architecture, the heads per GPU (of the model's), the projections' GEMM dtype and the KV
// cache's dtype, as the tables spell them.
type dsaSelect struct {
	Architecture      string
	Heads, ModelHeads int
	GEMMType, KVDtype string
}

// match keeps a row of op at the selection. The legacy collections record one GPU's share of
// the heads at tp_size 1, the later ones the whole layer's split over tp_size.
func (s dsaSelect) match(r mlaRow, op string) bool {
	return r.Op == op && r.Architecture == s.Architecture && r.Heads == int64(s.Heads) && (r.TP == 1 || r.TP*r.Heads == int64(s.ModelHeads)) &&
		r.GEMMType == s.GEMMType && r.KVDtype == s.KVDtype && r.MLADtype == attentionDtype
}

func (s dsaSelect) String() string {
	return fmt.Sprintf("%s, %d heads per GPU, %s projections, %s KV cache", s.Architecture, s.Heads, s.GEMMType, s.KVDtype)
}

// dsaKernel is the one DSA backend (kernel_source) the table measures op with at the
// selection; a table measuring several names them, and which one the engine runs is not
// guessed.
func dsaKernel(rows []mlaRow, rel, op string, sel dsaSelect) (string, error) {
	var kernels []string
	for _, r := range rows {
		if sel.match(r, op) && !slices.Contains(kernels, r.Kernel) {
			kernels = append(kernels, r.Kernel)
		}
	}
	switch len(kernels) {
	case 0:
		return "", missing(rel, op+" at "+sel.String())
	case 1:
		return kernels[0], nil
	}
	slices.Sort(kernels)
	return "", fmt.Errorf("%s: %s at %s is measured with %d DSA backends (%s): which one the engine runs is not chosen here",
		rel, op, sel, len(kernels), strings.Join(kernels, ", "))
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

// dsaModule is one layer's DSA attention without its MLA projections, which the importer
// prices from the GEMM rows at the step's tokens like every other projection (proj, at a
// token count): prefill (b chunks of n tokens, the measured surface) and decode (b requests
// at context n). The indexer's own projections stay in the module. A measured module faster
// than its projections priced alone leaves no attention time there; note counts such points.
func dsaModule(ctxs, gens []mlaRow, ctxRel, genRel string, sel dsaSelect, topk int, proj func(float64) float64,
	note func(string)) (ctx, gen func(b, n, pow float64) float64, words string, err error) {
	ctxKernel, err := dsaKernel(ctxs, ctxRel, dsaContextOp, sel)
	if err != nil {
		return nil, nil, "", err
	}
	genKernel, err := dsaKernel(gens, genRel, dsaGenerationOp, sel)
	if err != nil {
		return nil, nil, "", err
	}
	floored := 0
	less := func(ms, tokens float64) float64 {
		us := msToUS(ms) - proj(tokens)
		if us < 0 {
			us, floored = 0, floored+1
		}
		return us
	}
	cpts, gpts := map[float64][]point{}, map[float64][]point{}
	for _, r := range ctxs {
		if sel.match(r, dsaContextOp) && r.Step == 0 { // a cached prefix (step) is not a whole prefill
			cpts[float64(r.Batch)] = append(cpts[float64(r.Batch)], point{float64(r.ISL), less(r.Latency, float64(r.Batch*r.ISL))})
		}
	}
	for _, r := range gens {
		if sel.match(r, dsaGenerationOp) {
			gpts[float64(r.Batch)] = append(gpts[float64(r.Batch)], point{float64(r.Step), less(r.Latency, float64(r.Batch))})
		}
	}
	if len(cpts) == 0 {
		return nil, nil, "", missing(ctxRel, dsaContextOp+" at step 0 at "+sel.String())
	}
	if floored > 0 {
		note(fmt.Sprintf("%s, %s: %s: %d measured modules ran faster than their projections priced alone; their attention is priced 0", ctxRel, genRel, sel, floored))
	}
	g := newDSADecode(newSurfaceSeries(gpts), float64(topk))
	words = fmt.Sprintf("prefill %s, decode %s", ctxKernel, genKernel)
	return newSurfaceSeries(cpts).at, func(b, n, _ float64) float64 { return g.at(b, n) }, words, nil
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
func dsaKVBytesPerToken(s LLMSpec, kvDtype string) int64 {
	latent := int64(s.KVLoRARank+s.QKRopeDim) * 2
	if kvDtype == KVFP8 {
		latent = int64(s.KVLoRARank) + int64(s.KVLoRARank/dsaIndexerQuantBlock)*4 + int64(s.QKRopeDim)*2
	}
	indexer := int64(s.IndexHeadDim) + int64(s.IndexHeadDim/dsaIndexerQuantBlock)*4
	return latent + indexer
}

// DSA reports whether the model's latent attention is sparse (an indexer picks its tokens).
func (s LLMSpec) DSA() bool { return s.IndexTopK > 0 }

// indexerWeightBytes is one layer's lightning indexer, replicated on every GPU (SGLang's
// Indexer, python/sglang/srt/layers/attention/nsa/nsa_indexer.py as the index holds it: wq_b
// and wk ReplicatedLinear in the attention's quantisation, weights_proj ReplicatedLinear
// unquantised, k_norm a LayerNorm with bias).
func (s LLMSpec) indexerWeightBytes(attnProj func(rows, cols int64) int64, unquant int64) int64 {
	h, heads, dim := int64(s.Hidden), int64(s.IndexHeads), int64(s.IndexHeadDim)
	return attnProj(int64(s.QLoRARank), heads*dim) + attnProj(h, dim) + h*heads*unquant + 2*dim*unquant
}
