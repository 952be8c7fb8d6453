package model

import (
	"fmt"
	"math"
)

// Worker prices engine steps and sizes the KV cache of one deployment. It is immutable after
// NewWorker, so one Worker may serve many simulations concurrently.
type Worker struct {
	d       Deployment
	table   *Table
	dynosim bool // price as Dynamo's mocker (reference.go)

	nonAttention curve     // GEMM + router gate + MoE + collectives + element-wise, by step tokens
	routerGate   []float64 // the router gate's grid at the deployment's float32 matmul precision
	eager        curve     // the same with the collectives run without CUDA graphs
	graphTokens  int       // steps of more tokens run eagerly (cudagraph.go)
	// decodeOnlyGraphs: steps holding a prefill chunk run eagerly too (FULL_DECODE_ONLY)
	decodeOnlyGraphs bool
	logits           curve // LM head, by sequences in the step
	context          surface
	decode           surface
	// hybrid: the gated DeltaNet layers' prefill (chunks × tokens per chunk) and decode
	// (requests) prices, from the table's LinearAttention (hybrid.go)
	hybrid    bool
	linearCtx surface
	linearDec curve
	ranks     *rankGroup // attention data parallelism's MoE part (attentiondp.go); nil without
}

// NewWorker loads the embedded tables of d's model, GPU, backend version and layout.
func NewWorker(d Deployment) (*Worker, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.AttentionDP > 1 {
		return newAttentionDPWorker(d)
	}
	t, err := loadTable(d)
	if err != nil {
		return nil, err
	}
	return newWorker(d, t)
}

func newWorker(d Deployment, t *Table) (*Worker, error) {
	n := len(t.GEMM.Values)
	for _, g := range []struct {
		name string
		g    Grid
	}{{"moe", t.MoE}, {"collective", t.Collective}, {"elementwise", t.Elementwise}} {
		if len(g.g.Values) != n {
			return nil, fmt.Errorf("model: table %s: %s has %d values, gemm %d", TableFileName(t), g.name, len(g.g.Values), n)
		}
	}
	attn, err := t.AttentionFor(d.KVCacheDtype)
	if err != nil {
		return nil, err
	}
	gate, err := t.RouterGateFor(d.float32Precision())
	if err != nil {
		return nil, err
	}
	if len(gate.Values) != n {
		return nil, fmt.Errorf("model: table %s: %s router_gate has %d values, gemm %d", TableFileName(t), gate.Float32MatmulPrecision, len(gate.Values), n)
	}
	for _, g := range []struct {
		name string
		g    Grid
	}{{attn.KVCacheDtype + " context_attention", attn.Context}, {attn.KVCacheDtype + " decode_attention", attn.Decode}} {
		if g.g.Rows < 2 || g.g.Cols < 2 || len(g.g.Values) != g.g.Rows*g.g.Cols {
			return nil, fmt.Errorf("model: table %s: %s is not a %d×%d grid", TableFileName(t), g.name, g.g.Rows, g.g.Cols)
		}
	}
	if n < 2 || len(t.Logits.Values) < 2 {
		return nil, fmt.Errorf("model: table %s: token and sequence axes need at least 2 nodes", TableFileName(t))
	}
	if v := t.SharedExperts.Values; v != nil && len(v) != n {
		return nil, fmt.Errorf("model: table %s: shared_experts has %d values, gemm %d", TableFileName(t), len(v), n)
	}
	sum := make([]float64, n)
	for i := range sum {
		sum[i] = t.GEMM.Values[i] + gate.Values[i] + t.MoE.Values[i] + t.Collective.Values[i] + t.Elementwise.Values[i]
	}
	sharedExpertsOverlap(d, t, gate.Values, sum)
	allReduceRMSFusion(d, t, sum)
	eager, graphTokens := eagerCurve(d, t, sum)
	w := &Worker{
		d:                d,
		table:            t,
		dynosim:          d.Dynosim(),
		nonAttention:     newCurve(sum, 1),
		routerGate:       gate.Values,
		eager:            eager,
		graphTokens:      graphTokens,
		decodeOnlyGraphs: d.CUDAGraphMode == CUDAGraphFullDecodeOnly || graphDecodeOnly(d.Backend),
		logits:           newCurve(t.Logits.Values, 1),
		context:          newSurface(attn.Context.Values, attn.Context.Rows, attn.Context.Cols, 1, 2),
		decode:           newSurface(attn.Decode.Values, attn.Decode.Rows, attn.Decode.Cols, 1, 1),
	}
	if la := t.LinearAttention; la != nil {
		if la.Context.Rows < 2 || la.Context.Cols < 2 || len(la.Context.Values) != la.Context.Rows*la.Context.Cols || len(la.Decode.Values) < 2 {
			return nil, fmt.Errorf("model: table %s: linear_attention is not a context grid and a decode curve", TableFileName(t))
		}
		w.hybrid = true
		w.linearCtx = newSurface(la.Context.Values, la.Context.Rows, la.Context.Cols, 1, 1)
		w.linearDec = newCurve(la.Decode.Values, 1)
	}
	return w, nil
}

// Deployment is the deployment the worker was built for.
func (w *Worker) Deployment() Deployment { return w.d }

// Table is the derived table the worker prices steps from (shared; do not modify).
func (w *Worker) Table() *Table { return w.table }

// TableDigest identifies the worker's timing table: its embedded file name and the SHA-256 of
// the file's bytes.
func (w *Worker) TableDigest() string { return w.table.digest }

// StepBreakdown is one step's duration split by operator family, in microseconds.
type StepBreakdown struct {
	Tokens, Sequences int
	NonAttentionUS    float64 // GEMMs, MoE, all-reduces, element-wise: priced once at Tokens
	LogitsUS          float64
	ContextAttnUS     float64
	DecodeAttnUS      float64
	LinearAttnUS      float64 // a hybrid model's gated DeltaNet kernels (prefill and decode)
	TotalUS           int64
	// Operators splits NonAttentionUS by the table's operator grids.
	Operators OperatorBreakdown
}

// OperatorBreakdown is a step's non-attention work by operator, all layers, in microseconds:
// each of the table's grids at the step's tokens. Adjustment is what the worker's sum
// changes on top of them — the fused all-reduce + RMSNorm's saving, the shared experts'
// overlap with the routed ones (both ≤ 0) — so the parts add up to NonAttentionUS.
type OperatorBreakdown struct {
	ProjectionsUS   float64 // attention projections and dense MLP GEMMs
	RouterGateUS    float64
	ExpertsUS       float64 // routed experts
	SharedExpertsUS float64
	AllReduceUS     float64 // under CUDA graphs, or eager in the steps that run eagerly (runsEagerly)
	ElementwiseUS   float64 // add + RMSNorm, RoPE, KV write, QK-norm, embedding
	AdjustmentUS    float64
}

// StepTimeUS is the duration of one engine step: the non-attention work of all its tokens
// in one pass, the LM head for its sequences, context attention for its prefill chunks and
// decode attention for its decoding requests. It never allocates.
func (w *Worker) StepTimeUS(b *Batch) int64 {
	if w.dynosim {
		return w.dynosimStepUS(b)
	}
	if w.d.Speculative.On() {
		return w.mtpStepUS(b)
	}
	tokens := b.Decodes
	var work float64 // Σ (full² − cached²): causal attention FLOPs of the chunks, up to a constant
	for i := range b.Prefill {
		c := &b.Prefill[i]
		tokens += c.NewTokens
		full := float64(c.NewTokens + c.CachedTokens)
		cached := float64(c.CachedTokens)
		work += full*full - cached*cached
	}
	if tokens == 0 {
		return 1
	}
	us := w.nonAttentionAt(tokens, len(b.Prefill) > 0) + w.logits.at(float64(len(b.Prefill)+b.Decodes))
	if n := len(b.Prefill); n > 0 {
		us += w.context.at(float64(n), math.Sqrt(work/float64(n)))
	}
	if b.Decodes > 0 {
		us += w.decode.at(float64(b.Decodes), float64(b.DecodeContextTokens)/float64(b.Decodes))
	}
	if w.hybrid {
		us += w.linearUS(len(b.Prefill), tokens-b.Decodes, b.Decodes)
	}
	return int64(math.Ceil(us))
}

// DecodeStepsUS sets out[j] to StepTimeUS of a step of decodes decoding requests holding
// ctx + j·decodes context tokens, for every j: the steps of a decode stretch, where each
// step adds one token to every request. The parts that depend only on the batch size (the
// non-attention work, the LM head, decode attention's row) are priced once.
func (w *Worker) DecodeStepsUS(decodes int, ctx int64, out []int64) {
	if w.dynosim || decodes <= 0 || w.d.Speculative.On() {
		b := Batch{Decodes: decodes}
		for j := range out {
			b.DecodeContextTokens = ctx + int64(j)*int64(decodes)
			out[j] = w.StepTimeUS(&b)
		}
		return
	}
	base := w.nonAttentionAt(decodes, false) + w.logits.at(float64(decodes))
	if w.hybrid {
		base += w.linearUS(0, 0, decodes)
	}
	i, i1, fr, scale := w.decode.rowAt(float64(decodes))
	for j := range out {
		c := ctx + int64(j)*int64(decodes)
		out[j] = int64(math.Ceil(base + w.decode.colAt(i, i1, fr, scale, float64(c)/float64(decodes))))
	}
}

// Breakdown is StepTimeUS split by operator family (for `model info` and tests).
func (w *Worker) Breakdown(b *Batch) StepBreakdown {
	r := StepBreakdown{Tokens: b.Decodes, Sequences: len(b.Prefill) + b.Decodes}
	var work float64
	for _, c := range b.Prefill {
		r.Tokens += c.NewTokens
		full, cached := float64(c.NewTokens+c.CachedTokens), float64(c.CachedTokens)
		work += full*full - cached*cached
	}
	r.TotalUS = w.StepTimeUS(b)
	if r.Tokens == 0 {
		return r
	}
	r.NonAttentionUS = w.nonAttentionAt(r.Tokens, len(b.Prefill) > 0)
	r.Operators = w.operators(r.Tokens, len(b.Prefill) > 0, r.NonAttentionUS)
	r.LogitsUS = w.logits.at(float64(r.Sequences))
	if n := len(b.Prefill); n > 0 {
		r.ContextAttnUS = w.context.at(float64(n), math.Sqrt(work/float64(n)))
	}
	if b.Decodes > 0 {
		r.DecodeAttnUS = w.decode.at(float64(b.Decodes), float64(b.DecodeContextTokens)/float64(b.Decodes))
	}
	if w.hybrid {
		r.LinearAttnUS = w.linearUS(len(b.Prefill), r.Tokens-b.Decodes, b.Decodes)
	}
	return r
}

// operators splits the non-attention work of a step of tokens by the table's grids.
func (w *Worker) operators(tokens int, prefill bool, nonAttention float64) OperatorBreakdown {
	t, x := w.table, float64(tokens)
	at := func(v []float64) float64 {
		if len(v) == 0 {
			return 0
		}
		c := newCurve(v, 1)
		return c.at(x)
	}
	allReduce := t.Collective.Values
	if w.runsEagerly(tokens, prefill) {
		allReduce = t.CollectiveEager.Values
	}
	o := OperatorBreakdown{
		ProjectionsUS: at(t.GEMM.Values), RouterGateUS: at(w.routerGate), ExpertsUS: at(t.MoE.Values),
		SharedExpertsUS: at(t.SharedExperts.Values), AllReduceUS: at(allReduce), ElementwiseUS: at(t.Elementwise.Values),
	}
	o.AdjustmentUS = nonAttention - (o.ProjectionsUS + o.RouterGateUS + o.ExpertsUS + o.SharedExpertsUS + o.AllReduceUS + o.ElementwiseUS)
	return o
}

// sharedExpertsOverlap adds the shared experts to a table's non-attention sum. vLLM's
// SharedExperts runner (vllm/model_executor/layers/fused_moe/runner/shared_experts.py; the
// second stream since vLLM PR 26440, its token threshold since PR 28406) runs them on an
// auxiliary CUDA stream beside the gate, router and routed experts when the layer's input has
// at most VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD tokens, and joins the streams before the
// outputs are summed, whatever the experts' kernel; larger steps run them in series. Two
// concurrent streams finish no sooner than the longer of them alone, so an overlapped
// layer is priced at that bound, max(routed, shared): the tables measured each kernel alone
// and hold nothing about how the two contend for SMs and memory when they share the GPU.
// The switch falls between the grid's nodes on either side of the threshold (256 and 320
// tokens for the default). SGLang's DeepSeek MoE layer does the same up to its own threshold
// with the gate on the routed side (sglangDualStreamTokens): max(gate + routed, shared). The
// dynosim reference keeps its series sum, and so does TensorRT-LLM, whose second-stream
// overlap is not modelled (no table measures it either).
func sharedExpertsOverlap(d Deployment, t *Table, gate, sum []float64) {
	v := t.SharedExperts.Values
	if v == nil {
		return
	}
	sglang := d.Backend.OrDefault() == BackendSGLang
	limit := float64(d.SharedExpertsOverlapTokens())
	if sglang {
		limit = float64(sglangDualStreamTokens(t))
	}
	for i := range sum {
		switch {
		case d.Dynosim() || (d.Backend.OrDefault() != BackendVLLM && !sglang) || axisNode(i) > limit:
			sum[i] += v[i]
		case sglang:
			sum[i] += max(0, v[i]-t.MoE.Values[i]-gate[i])
		default:
			sum[i] += max(0, v[i]-t.MoE.Values[i])
		}
	}
}
