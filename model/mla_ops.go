package model

// Multi-head latent attention under SGLang and TensorRT-LLM. Their AIConfigurator tables do
// not measure a whole attention module, as vLLM's do (mla.go), but its operators: the
// attention kernel for prefill (context_mla_perf: MLA over up-projected keys and values) and
// for decode (generation_mla_perf: MLA over the cached latent), and the two batched matmuls
// that absorb the key and value up-projections into decode (mla_bmm_perf: mla_gen_pre, q_nope
// by W_UK; mla_gen_post, the latent output by W_UV). AIConfigurator composes a DeepSeek layer
// from them (ai-dynamo/aiconfigurator src/aiconfigurator/sdk/models/deepseek.py at 28db9123,
// DeepSeekModel): prefill runs the down-projection, q_b, kv_b, the context MLA and o_proj;
// decode runs the down-projection, q_b, the pre-BMM, the generation MLA, the post-BMM and
// o_proj. The importer prices the projections both run (down, q_b, o_proj) at the step's
// tokens like every other projection, kv_b with the prefill attention over the chunk's tokens,
// and the BMMs with the decode attention over its requests.

import (
	"fmt"
	"path/filepath"
)

// mlaBMMRow is a row of AIConfigurator's mla_bmm_perf tables.
type mlaBMMRow struct {
	Op      string  `parquet:"op_name,optional"`
	Dtype   string  `parquet:"bmm_dtype,optional"`
	Heads   int64   `parquet:"num_heads,optional"`
	Tokens  int64   `parquet:"num_tokens,optional"`
	Latency float64 `parquet:"latency,optional"`
}

// mlaInputs are the measured MLA rows an import prices from: vLLM's modules (ctxs, gens), or
// SGLang's and TensorRT-LLM's operators (ops: ctxs and gens are then the attention kernels'
// rows, bmms the absorbed up-projections').
type mlaInputs struct {
	ctxs, gens []mlaRow
	bmms       []mlaBMMRow
	bmmRel     string
	ops        bool
	// dsa: DeepSeek sparse attention's module rows (sparse.go) and the checkpoint's
	// architecture that keys them.
	dsaCtxs, dsaGens []mlaRow
	dsaArch          string
}

// readMLAOps reads a backend's MLA operator tables at version.
func readMLAOps(aicDir, sku string, b Backend, version string, srcs *[]Source) (mlaInputs, string, string, error) {
	in := mlaInputs{ops: true}
	dir := filepath.Join(sku, "mla", string(b), version)
	ctxRel, genRel := filepath.Join(dir, "context_mla_perf.parquet"), filepath.Join(dir, "generation_mla_perf.parquet")
	in.bmmRel = filepath.Join(sku, "mla_bmm", string(b), version, "mla_bmm_perf.parquet")
	var err error
	if in.ctxs, err = readParquet[mlaRow](aicDir, ctxRel, srcs); err != nil {
		return in, "", "", err
	}
	if in.gens, err = readParquet[mlaRow](aicDir, genRel, srcs); err != nil {
		return in, "", "", err
	}
	if in.bmms, err = readParquet[mlaBMMRow](aicDir, in.bmmRel, srcs); err != nil {
		return in, "", "", err
	}
	return in, ctxRel, genRel, nil
}

// mlaBMMDtype is the BMMs' dtype under backend b: FP8 for a quantised model, as
// AIConfigurator's DeepSeek model asks (mla_bmm_quant_mode), where the table measures FP8 BMMs
// at these heads; BF16 otherwise. SGLang runs them in BF16 whatever the checkpoint: on CUDA it
// dequantises a 128 × 128 block-FP8 kv_b_proj to BF16 once at load (block_quant_dequant in
// DeepseekV2ForCausalLM.post_load_weights, unless SGL_USE_DEEPGEMM_BMM, off by default, on
// Hopper), so W_UK and W_UV are BF16 and forward_absorb multiplies by them with torch.bmm, not
// bmm_fp8 (python/sglang/srt/models/deepseek_v2.py at 3e4a39ee; the same in the later
// deepseek_common/deepseek_weight_loader.py at 0201c04e, whichever GPU); an NVFP4 checkpoint's
// kv_b_proj is BF16 already.
func mlaBMMDtype(b Backend, rows []mlaBMMRow, heads int, gemmQuant string) string {
	if gemmQuant == unquantGEMMDtype || b == BackendSGLang {
		return unquantGEMMDtype
	}
	for _, r := range rows {
		if r.Dtype == "fp8" && r.Heads == int64(heads) {
			return "fp8"
		}
	}
	return unquantGEMMDtype
}

// mlaOpAttention is one layer's MLA attention from the operator rows at the layer's heads per
// GPU: prefill (rows: chunks, cols: tokens per chunk) is the context MLA kernel plus kv_b over
// the chunk's tokens, decode (rows: requests, cols: context length) the generation MLA kernel
// plus both BMMs over the requests. The attention rows measured at tp_size × num_heads = the
// model's heads are the ones collected for it.
func mlaOpAttention(in mlaInputs, ctxRel, genRel string, s LLMSpec, heads int, kvDtype, bmmDtype string,
	kvB func(m float64) float64) (ctx, gen func(b, n, pow float64) float64, err error) {
	collect := func(rows []mlaRow, context bool) surfaceSeries {
		pts := map[float64][]point{}
		for _, r := range rows {
			if r.Heads != int64(heads) || r.TP*r.Heads != int64(s.Heads) || r.KVDtype != kvDtype || r.MLADtype != attentionDtype {
				continue
			}
			if context && r.Step != 0 {
				continue
			}
			length, us := float64(r.ISL), msToUS(r.Latency)
			if context {
				us += kvB(float64(r.Batch * r.ISL))
			} else {
				length = float64(r.Step)
			}
			pts[float64(r.Batch)] = append(pts[float64(r.Batch)], point{length, us})
		}
		return newSurfaceSeries(pts)
	}
	what := fmt.Sprintf("%d heads per GPU (of %d), %s attention, %s KV cache", heads, s.Heads, attentionDtype, kvDtype)
	c, g := collect(in.ctxs, true), collect(in.gens, false)
	if len(c.rows) == 0 {
		return nil, nil, missing(ctxRel, what)
	}
	if len(g.rows) == 0 {
		return nil, nil, missing(genRel, what)
	}
	bmm := map[string][]point{}
	for _, r := range in.bmms {
		if r.Heads == int64(heads) && r.Dtype == bmmDtype {
			bmm[r.Op] = append(bmm[r.Op], point{float64(r.Tokens), msToUS(r.Latency)})
		}
	}
	if len(bmm["mla_gen_pre"]) == 0 || len(bmm["mla_gen_post"]) == 0 {
		return nil, nil, missing(in.bmmRel, fmt.Sprintf("mla_gen_pre and mla_gen_post at %d heads, %s", heads, bmmDtype))
	}
	pre, post := newSeries(bmm["mla_gen_pre"]), newSeries(bmm["mla_gen_post"])
	return c.at, func(b, n, pow float64) float64 { return g.at(b, n, pow) + pre.at(b, 1) + post.at(b, 1) }, nil
}

// mlaLatentNormsUnmeasured reports whether backend b's MLA layer, priced from the MLA operator
// tables (mlaOps), runs q_a and kv_a latent RMSNorms none of those tables times: a q LoRA, and
// no DeepSeek sparse attention, whose module rows run the norms inside (sparse.go). SGLang's
// DeepseekV2AttentionMLA applies them outside the call its collector times
// (sglangDeepSeekSharedAdd has the source), and so does TensorRT-LLM's MLA.forward
// (tensorrt_llm/_torch/modules/attention.py, the 1.1–1.2-era versions the search index stores,
// with DeepSeek-V3.2's indexer): q_a_layernorm and kv_a_layernorm between the fused q_a/kv_a
// projection and q_b through maybe_execute_in_parallel, two streams under CUDA graphs, outside
// the attention backend call that AIConfigurator's collector times
// (collector/trtllm/collect_mla.py at 13669a172, the 1.2.0rc5 rows: create_attention(...)
// forward on a fused q and the latent cache).
func mlaLatentNormsUnmeasured(b Backend, s LLMSpec, mlaOps bool) bool {
	return (b == BackendSGLang || b == BackendTRTLLM) && mlaOps && s.MLA() && !s.DSA() && s.QLoRARank > 0
}

// mlaLatentNormsUS is one layer's q_a and kv_a RMSNorms at tokens: each reads and writes its
// latent, and under CUDA graphs the two run on two streams, so the longer is priced; the eager
// steps' series (one launch more a layer) is not.
func mlaLatentNormsUS(memOp func(float64) float64, s LLMSpec, tokens float64) float64 {
	act := float64(s.ActivationBytes)
	return max(memOp(2*tokens*float64(s.QLoRARank)*act), memOp(2*tokens*float64(s.KVLoRARank)*act))
}
