package model

// Multi-head latent attention (DeepSeek-V3, Kimi-K2): AIConfigurator measures vLLM's whole
// attention module (DeepseekV2MLAAttention: the fused q_a/kv_a down-projection, the q_b and
// kv_b up-projections, RoPE, the latent KV-cache write, attention and o_proj) per GPU at a
// head count, for prefill and decode. The importer splits each measured module into its
// projections, priced from the GEMM rows at the step's token count like every other
// projection (so a mixed step runs them once over all its tokens, and a chunk after a cached
// prefix pays them for its new tokens only), and the rest, which becomes the attention grids.

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml"
)

// mlaRow is a row of AIConfigurator's mla_{context,generation}_module_perf tables, and of its
// dsa_{context,generation}_module_perf ones (sparse.go), which add the op and the checkpoint's
// architecture.
type mlaRow struct {
	Op           string  `parquet:"op_name,optional"`
	Architecture string  `parquet:"architecture,optional"`
	Kernel       string  `parquet:"kernel_source,optional"`
	Model        string  `parquet:"model,optional"`
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

// mlaProjections prices one layer's MLA projections at m tokens on one GPU: the replicated
// fused down-projection (q_lora_rank + kv_lora_rank + qk_rope_head_dim outputs; without a
// q_lora_rank the queries come straight from the hidden state), the column-parallel q_b and
// kv_b up-projections and the row-parallel o_proj, in the attention's GEMM dtype (o_proj in
// its own where the checkpoint quantises it apart, LLMSpec.OProjQuant). Without
// kvB, kv_b is left to the prefill attention (mla_ops.go: decode absorbs it).
func mlaProjections(gemms []gemmRow, quant string, s LLMSpec, tp int, kvB bool, note func(string)) (func(m float64) float64, string, error) {
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
	oQuant := s.oProjQuant(quant)
	if !kvB {
		shapes = append(shapes[:1], shapes[2:]...)
	}
	if s.QLoRARank > 0 {
		shapes = append([]shape{{"fused q_a/kv_a", s.QLoRARank + s.KVLoRARank + s.QKRopeDim, h}}, shapes...)
	} else {
		shapes = append([]shape{{"kv_a", s.KVLoRARank + s.QKRopeDim, h}, {"q", heads * (s.QKNopeDim + s.QKRopeDim), h}}, shapes[1:]...)
	}
	var curves []func(float64) float64
	words := quant + " GEMM"
	for _, sh := range shapes {
		dtype, name := quant, sh.name
		if name == "o_proj" && oQuant != quant {
			dtype, name = oQuant, oQuant+" o_proj"
		}
		c, err := gemmCurve(gemms, dtype, sh.n, sh.k, note)
		if err != nil {
			return nil, "", err
		}
		curves = append(curves, c)
		words += fmt.Sprintf(" %s n=%d k=%d,", name, sh.n, sh.k)
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

// The collections of MLA module rows an import may price from (ImportOptions.MLAModuleRows).
const (
	// MLARowsFusedNorms takes the module rows from the GPU's collection run with the norm
	// kernels a serving engine runs, where it has one (mlaModuleVersion).
	MLARowsFusedNorms = "fused-norms"
	// MLARowsVersion takes them from the deployment's own version (or --attention-version),
	// whatever their collector ran.
	MLARowsVersion = "version"
)

// fusedNormDispatch is what AIConfigurator's collection_meta.yaml records (norm_dispatch) for
// module tables collected with its fused-op collector (ai-dynamo/aiconfigurator#1423,
// collector/vllm/utils.py enable_engine_fused_ops, 2026-07-29). Before it, the vLLM module
// collector ran the DeepseekV2MLAAttention module outside a serving worker, where vLLM's
// RMSNorm and its other custom ops (RoPE) dispatch to their native decompositions — an eager
// chain of mean/pow/rsqrt/mul kernels that a serving engine never runs (torch.compile fuses
// them; eager regions use the vllm_c CUDA kernels). The PR measured that chain at ~50–65 µs
// per layer, batch-independent, on B200 (MLA generation module, 64 heads, context 8,192,
// FP8 KV: batch 1 109.5 → 78.6 µs, 16 143.7 → 95.2 µs, 64 198.6 → 147.9 µs); the fixed
// collection reads 9 % below an in-engine per-layer trace at batch 16, the old one 34 % above.
const fusedNormDispatch = "vllm_c_eager_surrogate"

// mlaCollectionMeta is the part of a collection_meta.yaml that says how the module tables
// were collected.
type mlaCollectionMeta struct {
	Tables map[string]struct {
		NormDispatch string `yaml:"norm_dispatch"`
	} `yaml:"tables"`
}

// mlaModuleVersion is the version directory whose MLA module rows price o, and in words which
// collection it is. Under MLARowsFusedNorms (the default) it is the version nearest o's whose
// collection_meta.yaml records both module tables collected with the fused norm kernels
// (fusedNormDispatch), when the GPU has one and no --attention-version was asked for; else o's
// attention version. The collection_meta.yaml read is recorded as a source.
func mlaModuleVersion(aicDir string, o ImportOptions, srcs *[]Source) (string, string, error) {
	own := cmp.Or(o.AttentionVersion, o.BackendVersion)
	switch o.MLAModuleRows {
	case "", MLARowsFusedNorms:
	case MLARowsVersion:
		return own, fmt.Sprintf("the %s collection (--mla-module-rows %s)", own, MLARowsVersion), nil
	default:
		return "", "", fmt.Errorf("model import: MLA module rows %q: want %s or %s", o.MLAModuleRows, MLARowsFusedNorms, MLARowsVersion)
	}
	if o.AttentionVersion != "" {
		return own, fmt.Sprintf("the %s collection (--attention-version)", own), nil
	}
	base := filepath.Join(o.HardwareSKU, "mla", string(o.Backend))
	entries, err := os.ReadDir(filepath.Join(aicDir, base))
	if err != nil {
		return "", "", fmt.Errorf("model import: %w", err)
	}
	want, _ := releaseNumber(o.BackendVersion)
	best, bestDist := "", 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		rel := filepath.Join(base, e.Name(), "collection_meta.yaml")
		b, err := os.ReadFile(filepath.Join(aicDir, rel))
		if err != nil {
			continue // a version without collection metadata says nothing of its collector
		}
		var m mlaCollectionMeta
		if err := yaml.Unmarshal(b, &m); err != nil {
			return "", "", fmt.Errorf("model import: %s: %w", rel, err)
		}
		if m.Tables["mla_context_module_perf"].NormDispatch != fusedNormDispatch || m.Tables["mla_generation_module_perf"].NormDispatch != fusedNormDispatch {
			continue
		}
		v, ok := releaseNumber(e.Name())
		if !ok {
			continue
		}
		if d := max(v-want, want-v); best == "" || d < bestDist {
			best, bestDist = e.Name(), d
		}
	}
	if best == "" {
		return own, fmt.Sprintf("the %s collection (no collection of this GPU ran the fused norm kernels)", own), nil
	}
	if _, err := digestFile(aicDir, filepath.Join(base, best, "collection_meta.yaml"), srcs); err != nil {
		return "", "", err
	}
	return best, fmt.Sprintf("the %s collection, run with the norm kernels a serving engine runs (collection_meta.yaml norm_dispatch %s, ai-dynamo/aiconfigurator#1423)", best, fusedNormDispatch), nil
}
