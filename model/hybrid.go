package model

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
)

// Hybrid linear attention: Qwen3.5's (and Qwen3-Next's) decoder interleaves gated DeltaNet
// layers ("linear_attention" in config.json's layer_types) with full-attention layers. A
// DeltaNet layer keeps no KV cache: each request holds one fixed-size recurrent state per
// layer (a short-convolution window and the delta rule's key × value matrix per value head),
// whatever its length. Its kernels are AIConfigurator's linear_attention collection
// (<gpu>/linear_attention/sglang/<version>/gdn_perf.parquet): for prefill the short
// convolution (causal_conv1d_fn) and the chunked gated delta rule (chunk_gated_delta_rule),
// for decode the convolution's update (causal_conv1d_update) and the recurrence
// (fused_recurrent_gated_delta_rule, named …_packed_decode from 0.5.14).

// gdnRow is one row of gdn_perf.parquet (latency in milliseconds per call of one layer).
type gdnRow struct {
	Op       string  `parquet:"op_name,optional"`
	Kernel   string  `parquet:"kernel_source,optional"`
	Phase    string  `parquet:"phase,optional"`
	Batch    int64   `parquet:"batch_size,optional"`
	SeqLen   int64   `parquet:"seq_len,optional"`
	DModel   int64   `parquet:"d_model,optional"`
	DConv    int64   `parquet:"d_conv,optional"`
	KHeads   int64   `parquet:"num_k_heads,optional"`
	KHeadDim int64   `parquet:"head_k_dim,optional"`
	VHeads   int64   `parquet:"num_v_heads,optional"`
	VHeadDim int64   `parquet:"head_v_dim,optional"`
	Latency  float64 `parquet:"latency,optional"`
}

// The gated DeltaNet kernels a step runs, as gdn_perf names them.
const (
	gdnConvPrefill = "causal_conv1d_fn"
	gdnRulePrefill = "chunk_gated_delta_rule"
	gdnConvDecode  = "causal_conv1d_update"
	gdnRuleDecode  = "fused_recurrent_gated_delta_rule"
	// gdnRuleDecodePacked is the decode recurrence as the 0.5.14 collector names it (the
	// packed-input variant SGLang's GDN backend calls from then on).
	gdnRuleDecodePacked = "fused_recurrent_gated_delta_rule_packed_decode"
)

// LinearAttention prices the gated DeltaNet layers, all of them: Context by prefill chunks in
// the step (rows) and mean new tokens per chunk (cols), Decode by decoding requests.
type LinearAttention struct {
	Context Grid `json:"context"`
	Decode  Grid `json:"decode"`
}

// Hybrid reports whether the model interleaves linear-attention layers with full attention.
func (s LLMSpec) Hybrid() bool { return s.LinearLayers > 0 }

// FullAttentionLayers is how many layers attend over the KV cache.
func (s LLMSpec) FullAttentionLayers() int { return s.Layers - s.LinearLayers }

// linearKeyDim and linearValueDim are a DeltaNet layer's query/key and value widths, all heads.
func (s LLMSpec) linearKeyDim() int   { return s.LinearKeyHeads * s.LinearKeyHeadDim }
func (s LLMSpec) linearValueDim() int { return s.LinearValueHeads * s.LinearValueHeadDim }

// LinearStateBytesPerRequest is one request's recurrent state on one GPU of a tp-way worker,
// all DeltaNet layers: SGLang's mamba pool entry (mem_cache/memory_pool.py, MambaPool; its
// shapes from configs/mamba_utils.py at 001ccef0): the convolution window — conv_dim / tp
// channels (queries, keys and values: 2 × key_dim + value_dim) × (kernel − 1) positions in the
// model's dtype — and the temporal state, value_heads / tp × head_k_dim × head_v_dim in
// mamba_ssm_dtype (float32 by default).
func (s LLMSpec) LinearStateBytesPerRequest(tp int) int64 {
	if !s.Hybrid() {
		return 0
	}
	t := int64(tp)
	conv := int64(2*s.linearKeyDim()+s.linearValueDim()) / t * int64(s.LinearConvKernel-1) * int64(s.ActivationBytes)
	temporal := int64(s.LinearValueHeads) / t * int64(s.LinearKeyHeadDim) * int64(s.LinearValueHeadDim) * int64(s.LinearStateBytes)
	return int64(s.LinearLayers) * (conv + temporal)
}

// linearWeightBytes is one DeltaNet layer's weights on one GPU: in_proj_qkvz (hidden → 2 ×
// key_dim + 2 × value_dim: q, k, v and the output gate z), in_proj_ba (hidden → 2 ×
// value_heads, kept unquantised), out_proj (value_dim → hidden), split by tp; the depthwise
// convolution over conv_dim channels, A_log and dt_bias, and the gated RMSNorm's weight.
func (s LLMSpec) linearWeightBytes(tp int64, proj func(rows, cols int64) int64) int64 {
	h := int64(s.Hidden)
	k, v := int64(s.linearKeyDim()), int64(s.linearValueDim())
	ub := int64(s.UnquantBytes)
	conv := (2*k + v) * int64(s.LinearConvKernel) * ub
	return (proj(h, 2*k+2*v)+h*2*int64(s.LinearValueHeads)*ub+proj(v, h)+conv+2*int64(s.LinearValueHeads)*4)/tp + int64(s.LinearValueHeadDim)*ub
}

// checkLinearLayout says why a layout cannot shard the DeltaNet layers, or nil: SGLang splits
// them by heads over the attention TP group.
func (s LLMSpec) checkLinearLayout(l Layout) error {
	if !s.Hybrid() {
		return nil
	}
	if s.LinearKeyHeads%l.TP != 0 || s.LinearValueHeads%l.TP != 0 {
		return fmt.Errorf("layout %s: tp %d does not divide the linear-attention heads (%d key, %d value)", l, l.TP, s.LinearKeyHeads, s.LinearValueHeads)
	}
	return nil
}

// sglangFusedLinearProjRelease is the first SGLang release whose Qwen3.5 DeltaNet layer runs
// two input projections, in_proj_qkvz and in_proj_ba (sglang#21019, 5bdc07d97, merged
// 2026-03-23: after 0.5.9, whose image the runs of 2026-03-03 used, and before 0.5.10's first
// release candidate, whose tag the nightly wheel's version parsing met by 2026-03-29,
// d8ab41dce; SGLang cuts release branches from main). Before it
// Qwen3_5GatedDeltaNet ran four — in_proj_qkv, in_proj_z, in_proj_b and in_proj_a, each a
// GEMM of its own whose output the GDN backend takes as it is, no split kernel
// (python/sglang/srt/models/qwen3_5.py at d3bae71e, the B200 BF16 run's nightly, and at
// 5bdc07d97^).
const sglangFusedLinearProjRelease = "0.5.10"

// sglangFusedLinearProj reports whether SGLang release version runs the DeltaNet layer's two
// fused input projections and the Triton kernel that splits their outputs
// (fused_qkvzba_split_reshape_cat_contiguous, sglang#21019) rather than four projections.
func sglangFusedLinearProj(version string) bool {
	have, _ := releaseNumber(version)
	first, _ := releaseNumber(sglangFusedLinearProjRelease)
	return have >= first
}

// linearSplitBytes is what fused_qkvzba_split_reshape_cat_contiguous moves at a step of tokens
// on one GPU: it reads in_proj_qkvz's and in_proj_ba's outputs and writes them back as the
// packed convolution input, z, b and a, each its own tensor (jit_kernel/triton/gdn_fused_proj.py
// at 5bdc07d97).
func (s LLMSpec) linearSplitBytes(tokens float64, tp int) float64 {
	width := (2*s.linearKeyDim() + 2*s.linearValueDim() + 2*s.LinearValueHeads) / tp
	return 2 * tokens * float64(width*s.ActivationBytes)
}

// gdnGatingBytes is what fused_gdn_gating moves per token and value head: it reads a and b in
// the activation dtype and writes g and β in float32 (layers/attention/fla/fused_gdn_gating.py
// at d3bae71e).
func (s LLMSpec) gdnGatingBytes() float64 { return float64(2*s.ActivationBytes + 2*4) }

// linearProjections prices one DeltaNet layer's projections at a step of tokens under SGLang
// release version: in_proj_qkvz (or in_proj_qkv and in_proj_z before
// sglangFusedLinearProjRelease) and out_proj in the served GEMM dtype, in_proj_ba (or in_proj_b
// and in_proj_a) in BF16, each split by tp.
func linearProjections(gemms []gemmRow, quant string, s LLMSpec, tp int, version string, note func(string)) (func(float64) float64, string, error) {
	k, v, h := s.linearKeyDim()/tp, s.linearValueDim()/tp, s.Hidden
	// The input projections: (name, n, dtype) in the order the layer runs them.
	type proj struct {
		name  string
		n     int
		dtype string
	}
	heads := s.LinearValueHeads / tp
	ins := []proj{{"in_proj_qkvz", 2*k + 2*v, quant}, {"in_proj_ba", 2 * heads, unquantGEMMDtype}}
	if !sglangFusedLinearProj(version) {
		ins = []proj{{"in_proj_qkv", 2*k + v, quant}, {"in_proj_z", v, quant},
			{"in_proj_b", heads, unquantGEMMDtype}, {"in_proj_a", heads, unquantGEMMDtype}}
	}
	var curves []func(float64) float64
	words := fmt.Sprintf("; %d linear-attention layers:", s.LinearLayers)
	for _, p := range ins {
		if least := narrowestGEMM(gemms, p.dtype, h); p.n < least {
			// A GEMM narrower than any measured at this k is launch-bound: priced at the
			// narrowest measured n, never cheaper.
			note(fmt.Sprintf("gemm_perf: %s n=%d k=%d (%s) priced at the narrowest measured n=%d", p.dtype, p.n, h, p.name, least))
			p.n = least
		}
		c, err := gemmCurve(gemms, p.dtype, p.n, h, note)
		if err != nil {
			return nil, "", err
		}
		curves = append(curves, c)
		words += fmt.Sprintf(" %s %s n=%d k=%d,", p.dtype, p.name, p.n, h)
	}
	out, err := gemmCurve(gemms, quant, h, v, note)
	if err != nil {
		return nil, "", err
	}
	curves = append(curves, out)
	words += fmt.Sprintf(" out_proj n=%d k=%d", h, v)
	return func(x float64) float64 {
		us := 0.0
		for _, c := range curves {
			us += c(x)
		}
		return us
	}, words, nil
}

// gdnShape selects the rows of one kernel at the layer's per-GPU heads.
type gdnShape struct {
	dModel, dConv, kHeads, kDim, vHeads, vDim int64
}

func (g gdnShape) String() string {
	return fmt.Sprintf("d_model %d, d_conv %d, %d key heads × %d, %d value heads × %d", g.dModel, g.dConv, g.kHeads, g.kDim, g.vHeads, g.vDim)
}

// gdnKernel gathers one kernel's rows of the shape: by batch (rows) and seq_len (cols).
func gdnKernel(rows []gdnRow, rel string, shape gdnShape, phase string, ops ...string) (surfaceSeries, string, error) {
	pts := map[float64][]point{}
	op := ""
	for _, r := range rows {
		if r.Phase == phase && slices.Contains(ops, r.Kernel) && r.DModel == shape.dModel && r.DConv == shape.dConv &&
			r.KHeads == shape.kHeads && r.KHeadDim == shape.kDim && r.VHeads == shape.vHeads && r.VHeadDim == shape.vDim && r.Latency > 0 {
			pts[float64(r.Batch)] = append(pts[float64(r.Batch)], point{float64(r.SeqLen), msToUS(r.Latency)})
			op = r.Kernel
		}
	}
	if len(pts) == 0 {
		return surfaceSeries{}, "", missing(filepath.Base(rel), fmt.Sprintf("%s %v at %s", phase, ops, shape))
	}
	return newSurfaceSeries(pts), op, nil
}

// deriveLinear fills t.LinearAttention from the gdn_perf rows at the layout's per-GPU heads,
// summed over the DeltaNet layers. A prefill step runs each kernel once over its chunks, so
// the context grid is the kernels' price at (chunks, mean new tokens per chunk); decode's
// depends on the requests only (the state's size is fixed). Before chunk_gated_delta_rule a
// prefill step runs fused_gdn_gating, one Triton kernel per layer over its tokens turning a and
// b into the rule's gates g and β (forward_extend of SGLang's GDN backend:
// layers/attention/hybrid_linear_attn_backend.py at d3bae71e, linear/gdn_backend.py at
// 4e69f14b9); AIConfigurator's collector hands the rule gates it made itself
// (collector/sglang/collect_gdn.py), so the rows leave it out and it is priced by its bytes and
// launch. Decode's recurrence computes the gates inside, as the decode rows time it.
func deriveLinear(t *Table, rows []gdnRow, rel string) error {
	s, tp := t.LLM, int64(t.Layout.TP)
	shape := gdnShape{int64(s.Hidden), int64(s.LinearConvKernel), int64(s.LinearKeyHeads) / tp, int64(s.LinearKeyHeadDim),
		int64(s.LinearValueHeads) / tp, int64(s.LinearValueHeadDim)}
	convFn, _, err := gdnKernel(rows, rel, shape, "context", gdnConvPrefill)
	if err != nil {
		return err
	}
	rule, _, err := gdnKernel(rows, rel, shape, "context", gdnRulePrefill)
	if err != nil {
		return err
	}
	convUp, _, err := gdnKernel(rows, rel, shape, "generation", gdnConvDecode)
	if err != nil {
		return err
	}
	recur, recurOp, err := gdnKernel(rows, rel, shape, "generation", gdnRuleDecode, gdnRuleDecodePacked)
	if err != nil {
		return err
	}
	layers := float64(s.LinearLayers)
	cr, cc := axisNodes(chunkOctaves), axisNodes(tokenOctaves)
	t.LinearAttention = &LinearAttention{
		Context: Grid{Rows: cr, Cols: cc, Values: round(sample2(cr, cc, func(b, n float64) float64 {
			gating := t.GPU.memOpUS(b * n * float64(shape.vHeads) * s.gdnGatingBytes())
			return layers * (convFn.at(b, n, 1) + rule.at(b, n, 1) + gating)
		}))},
		Decode: Grid{Cols: axisNodes(decodeOctaves), Values: round(sample(axisNodes(decodeOctaves), func(b float64) float64 {
			return layers * (convUp.at(b, 1, 1) + recur.at(b, 1, 1))
		}))},
	}
	t.Kernels = append(t.Kernels, fmt.Sprintf("%s: %d gated DeltaNet layers at %s per GPU: prefill %s + %s by chunks and tokens per chunk (and fused_gdn_gating by its bytes and launch), decode %s + %s by requests",
		rel, s.LinearLayers, shape, gdnConvPrefill, gdnRulePrefill, gdnConvDecode, recurOp))
	return nil
}

// readLinearAttention reads the gdn_perf rows for a hybrid model (nil for any other), from
// version's directory ("" = the deployment's).
func readLinearAttention(aicDir string, o ImportOptions, llm LLMSpec, srcs *[]Source) ([]gdnRow, string, error) {
	if !llm.Hybrid() {
		return nil, "", nil
	}
	if o.Backend.OrDefault() != BackendSGLang {
		return nil, "", fmt.Errorf("model import: %s: hybrid linear attention is priced under SGLang only (its linear_attention collection and its mamba pool), not %s",
			o.Model, o.Backend.OrDefault())
	}
	rel := filepath.Join(o.HardwareSKU, "linear_attention", string(o.Backend), cmp.Or(o.LinearAttentionVersion, o.BackendVersion), "gdn_perf.parquet")
	rows, err := readParquet[gdnRow](aicDir, rel, srcs)
	return rows, rel, err
}

// linearAttentionLayer is config.json's layer type of a gated DeltaNet layer.
const linearAttentionLayer = "linear_attention"

// checkHybridConfig says why a config's linear-attention layers cannot be priced, or nil.
func checkHybridConfig(c hfConfig) error {
	switch {
	case len(c.LayerTypes) != c.Layers:
		return fmt.Errorf("linear_attention layers need one type per layer (have %d types for %d layers)", len(c.LayerTypes), c.Layers)
	case !slices.Contains(c.LayerTypes, "full_attention"):
		return fmt.Errorf("linear_attention layers without a full_attention layer are not priced (no KV cache to size)")
	case slices.Contains(c.LayerTypes, "sliding_attention"):
		return fmt.Errorf("linear_attention beside sliding_attention layers is not priced")
	case c.KVLoRARank > 0:
		return fmt.Errorf("linear_attention beside multi-head latent attention is not priced")
	case c.LinearKHeads <= 0 || c.LinearVHeads <= 0 || c.LinearKDim <= 0 || c.LinearVDim <= 0 || c.ConvKernel < 2:
		return fmt.Errorf("linear_attention layers need positive linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim and linear_conv_kernel_dim ≥ 2 (have %d, %d, %d, %d, %d)",
			c.LinearKHeads, c.LinearVHeads, c.LinearKDim, c.LinearVDim, c.ConvKernel)
	case c.LinearVHeads%c.LinearKHeads != 0:
		return fmt.Errorf("linear_num_key_heads %d does not divide linear_num_value_heads %d", c.LinearKHeads, c.LinearVHeads)
	case c.MambaSSMDtype != "" && c.MambaSSMDtype != "float32" && c.MambaSSMDtype != "bfloat16":
		return fmt.Errorf("mamba_ssm_dtype %q is not priced (want float32 or bfloat16)", c.MambaSSMDtype)
	}
	return nil
}

// setHybrid records a checked config's linear-attention layers. The recurrent state is
// float32 unless the config names bfloat16 (SGLang's --mamba-ssm-dtype default float32).
func (s *LLMSpec) setHybrid(c hfConfig) {
	for _, lt := range c.LayerTypes {
		if lt == linearAttentionLayer {
			s.LinearLayers++
		}
	}
	s.LinearKeyHeads, s.LinearKeyHeadDim, s.LinearValueHeads, s.LinearValueHeadDim = c.LinearKHeads, c.LinearKDim, c.LinearVHeads, c.LinearVDim
	s.LinearConvKernel, s.LinearStateBytes, s.AttnOutputGate = c.ConvKernel, 4, c.AttnOutputGate
	if c.MambaSSMDtype == "bfloat16" {
		s.LinearStateBytes = 2
	}
}

// linearUS prices a step's DeltaNet kernels: prefill's over its chunks (their new tokens; a
// cached prefix is already folded into the request's state) and decode's over its requests.
func (w *Worker) linearUS(chunks, newTokens, decodes int) float64 {
	us := 0.0
	if chunks > 0 {
		us += w.linearCtx.at(float64(chunks), float64(newTokens)/float64(chunks))
	}
	if decodes > 0 {
		us += w.linearDec.at(float64(decodes))
	}
	return us
}

// SGLang's mamba pool sizing (python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py
// at 001ccef0, handle_max_mamba_cache and init_memory; server_args.py defaults
// max_mamba_cache_size None, mamba_full_memory_ratio 0.9).
const (
	mambaFullMemoryRatio = 0.9 // state memory ÷ KV memory when the pool is sized by ratio
	mambaSlotsPerRunning = 3   // MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO: slots per running request with the radix cache on
)

// sglangStates is the mamba pool beside the KV cache of one GPU.
type sglangStates struct {
	perRequest        int64
	slots, maxRunning int
	radix             bool
}

// bytes is the pool's memory: its slots' states.
func (p sglangStates) bytes() int64 { return int64(p.slots) * p.perRequest }

// mambaPool sizes SGLang's recurrent-state pool from rest, the bytes its memory fraction
// leaves after the weights. With the radix cache off and --max-running-requests set (every
// replay names one: Deployment.MaxNumSeqs) the pool holds exactly that many states. With the
// radix cache on, the states take mamba_full_memory_ratio ÷ (1 + ratio) of rest, and
// init_memory caps the running requests at a third of the slots: the radix tree keeps states
// of finished prefixes beside the running ones (MambaRadixCache).
func mambaPool(d Deployment, rest, perRequest int64) sglangStates {
	p := sglangStates{perRequest: perRequest}
	if perRequest <= 0 || rest <= 0 {
		return p
	}
	if d.NoPrefixCaching {
		p.slots, p.maxRunning = d.MaxNumSeqs, d.MaxNumSeqs
	} else {
		p.radix = true
		p.slots = int(float64(rest) * mambaFullMemoryRatio / (1 + mambaFullMemoryRatio) / float64(perRequest))
		p.maxRunning = min(d.MaxNumSeqs, p.slots/mambaSlotsPerRunning)
	}
	return p
}

// narrowestGEMM is the smallest n measured for dtype at k (0: none).
func narrowestGEMM(rows []gemmRow, dtype string, k int) int {
	least := int64(0)
	for _, r := range rows {
		if r.Dtype == dtype && r.K == int64(k) && (least == 0 || r.N < least) {
			least = r.N
		}
	}
	return int(least)
}

// fp8BlockEdge is the tile edge of AIConfigurator's fp8_block GEMM and MoE rows (128 × 128
// weight blocks, DeepSeek-V3's and Qwen's FP8 releases).
const fp8BlockEdge = 128

// hybridImports are the embedded tables of Qwen3.5-397B-A17B under SGLang 0.5.9, at the
// layouts of AIConfigurator's measured rows. SGLang 0.5.9's collections lack three of its
// operators, each taken from the nearest later collection that measures it (named in the
// table's kernels and in docs/hybrid-attention.md): the gated DeltaNet kernels (0.5.9 measures
// them only at the full head count and prefill without the chunked delta rule: 0.5.14), the
// experts at this shape (B200: FlashInfer's TRT-LLM MoE, the runs' --moe-runner-backend, only
// in 0.5.14, on B300 too; H200: Triton fused MoE, from 0.5.10) and, on H200, attention at head_dim 256
// (0.5.14). The FP8 runs serve Qwen's block-FP8 release (--quantization fp8 on the FP8
// checkpoint: 128 × 128 weight blocks).
func hybridImports() []ImportOptions {
	const qwen35 = "Qwen/Qwen3.5-397B-A17B"
	one := func(sku, quant, gemm string, moe MoEKernel, attn string, l ...string) ImportOptions {
		return ImportOptions{Model: qwen35, HardwareSKU: sku, Backend: BackendSGLang, BackendVersion: sglangVersion,
			Quantization: quant, GEMMQuant: gemm, MoE: moe, AttentionVersion: attn, LinearAttentionVersion: "0.5.14", Layouts: layouts(l...)}
	}
	trtllmMoE := func(quant string) MoEKernel {
		return MoEKernel{Version: "0.5.14", Source: "sglang_flashinfer_trtllm_moe", Quant: quant}
	}
	return []ImportOptions{
		one("b200_sxm", "fp8", "fp8_block", trtllmMoE("fp8_block"), "", "4,4,1", "8,8,1", "4,1,4"),
		one("b200_sxm", "", "", trtllmMoE("bfloat16"), "", "8,8,1"),
		one("b300_sxm", "fp8", "fp8_block", trtllmMoE("fp8_block"), "", "4,4,1", "8,8,1", "4,1,4"),
		one("b300_sxm", "", "", trtllmMoE("bfloat16"), "", "4,4,1", "8,8,1"),
		one("h200_sxm", "fp8", "fp8_block", MoEKernel{Version: "0.5.10", Source: sglangTritonMoE, Quant: "fp8_block"}, "0.5.14", "8,8,1", "8,1,8"),
		// InferenceX's v0.5.10.post1 runs on B300 (SGLangTablesVersion), at their layouts: 0.5.10's
		// collection but for what it does not measure, each from the nearest collection that
		// does: the gated DeltaNet rows (0.5.10's are 0.5.9's shapes) and the experts from 0.5.14,
		// attention at head_dim 256 (0.5.10's B300 rows lack it at 8 heads per GPU) from 0.5.9.
		atVersion("0.5.10", one("b300_sxm", "fp8", "fp8_block", trtllmMoE("fp8_block"), sglangVersion, "4,4,1")),
		atVersion("0.5.10", one("b300_sxm", "", "", trtllmMoE("bfloat16"), sglangVersion, "4,4,1", "8,8,1")),
	}
}

// RunningLimit is how many requests a worker runs at once under max_num_seqs: a hybrid
// model's SGLang runs no more than its state pool allows (MaxRunningRequests).
func (c Capacity) RunningLimit(maxNumSeqs int) int {
	if c.MaxRunningRequests > 0 {
		return min(maxNumSeqs, c.MaxRunningRequests)
	}
	return maxNumSeqs
}

// RunningLimiter is a step timer whose worker caps its running requests below max_num_seqs
// (SGLang takes the smaller of --max-running-requests and its state pool's size): the
// engine asks it when it builds a pool.
type RunningLimiter interface {
	RunningLimit(maxNumSeqs int) int
}

// RunningLimit is the worker's Capacity().RunningLimit; only a hybrid model has a cap.
func (w *Worker) RunningLimit(maxNumSeqs int) int {
	if !w.table.LLM.Hybrid() {
		return maxNumSeqs
	}
	return w.Capacity().RunningLimit(maxNumSeqs)
}
