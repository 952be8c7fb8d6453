package model

// The all-reduces of one layer across the TP group, and the per-layer QK-norm's share of them.

import "fmt"

// perLayerQKNorm says whether the QK-norm is priced as vLLM runs it over all of a layer's
// heads, and the elements it adds to the all-reduce per token.
//
// vLLM runs a QK-norm over all of a layer's heads (qk_norm_type per_layer) as three kernels:
// one pass reads q and k for their sums of squares, one all-reduce adds the two FP32
// variances of every token across the TP group, one pass normalises q and k in place
// (MiniMaxText01RMSNormTP.forward_qk, vllm#31493, merged by 2026-01: "only a single
// all_reduce is launched"; the same three in SGLang, sglang#14416). forward_qk is plain
// torch code inlined into the compiled graph, so Inductor fuses the element-wise work on
// each side of the all-reduce (priced as one pass each); 0.19 has no pass that replaces it (fuse_minimax_qk_norm came
// later, off by default, and InferenceX's script sets no pass_config). On request
// (ImportOptions.QKNormKernels aiconfigurator) and always for the dynosim reference,
// AIConfigurator's op list prices it instead, as per-head element-wise ops.
func perLayerQKNorm(t *Table, vllmQKNorm bool) (perLayer bool, varianceElems float64) {
	perLayer = vllmQKNorm && t.LLM.QKNormPerLayer && t.TimingReference != ReferenceDynosim
	if perLayer {
		varianceElems = 2 * 4 / float64(t.LLM.ActivationBytes)
	}
	return perLayer, varianceElems
}

// allReduces prices the all-reduces of one layer.
//
// vLLM all-reduces the attention output and the MoE output of every layer across the TP group.
// Steps above vLLM's CUDA-graph capture size launch them eagerly (cudagraph.go); the
// dynosim reference prices every step with the graph rows, as AIConfigurator does.
func (d *deriver) allReduces() error {
	d.allreduce = zero
	if d.l.TP <= 1 {
		return nil
	}
	graphMode, eagerMode := allReduceModes(d.t.Backend)
	ar, err := d.allReduceRows(graphMode)
	if err != nil {
		return err
	}
	d.allreduce = func(tokens float64) float64 { return d.layerAllReduces(ar, tokens) }
	if d.t.TimingReference != ReferenceDynosim && eagerMode != "" {
		are, err := d.allReduceRows(eagerMode)
		if err != nil {
			return err
		}
		d.allreduceEagerly = func(tokens float64) float64 { return d.layerAllReduces(are, tokens) }
	}
	return nil
}

// allReduceRows is the measured all-reduce over the TP group in mode, of its elements.
func (d *deriver) allReduceRows(mode string) (func(float64) float64, error) {
	tp := d.l.TP
	var pts []point
	for _, r := range d.ars {
		if r.Dtype == allreduceElemType && r.GPUs == int64(tp) && r.Mode == mode {
			pts = append(pts, point{float64(r.Size), msToUS(r.Latency)})
		}
	}
	if len(pts) == 0 {
		return nil, missing("custom_allreduce_perf", fmt.Sprintf("%s %d GPUs %s", allreduceElemType, tp, mode))
	}
	s := newSeries(pts)
	if d.t.Backend.OrDefault() == BackendSGLang { // each side of its kernel switch (sglangallreduce.go)
		return stagedAllReduce(s, tp, allreduceElemSize), nil
	}
	return func(x float64) float64 { return s.at(x, 1) }, nil
}

// layerAllReduces is one layer's all-reduces at a step of tokens with a.
func (d *deriver) layerAllReduces(a func(float64) float64, tokens float64) float64 {
	us := 2 * a(tokens*float64(d.s.Hidden))
	if d.qkVarianceElems > 0 {
		us += a(tokens * d.qkVarianceElems)
	}
	return us
}
