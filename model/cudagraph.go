package model

import "math"

// CUDA graphs. vLLM replays captured CUDA graphs only for steps of at most
// max_cudagraph_capture_size tokens — by default min(2 × max_num_seqs, 512), never above
// max_num_batched_tokens (vllm/config/vllm.py, _set_cudagraph_sizes) — and runs larger steps,
// the prefill steps, without them (the CUDA-graph dispatcher returns CUDAGraphMode.NONE).
// Launch-bound kernels cost more there. AIConfigurator measures vLLM's all-reduce both ways
// (custom_allreduce_perf, backend vllm_graph and vllm_eager: 7 against 21 µs at small
// messages on four B200s, 160 against 180 µs at an 8,192-token step's 50 MB), so a step above
// the capture size pays the eager all-reduces. The other tables measure kernels, not the way
// they were launched, and stay as they are.

// vLLM's cudagraph_mode FULL_DECODE_ONLY (vllm/config/compilation.py, CUDAGraphMode) captures
// full graphs of decode-only batches and runs every batch that holds a prefill chunk without
// graphs, whatever its size: InferenceX's 2025 B200 scripts set it (with splitting_ops [],
// 70b_fp8_b200_docker.sh at 9596d23d7). The modes that also capture piecewise graphs
// (PIECEWISE, FULL_AND_PIECEWISE) graph mixed steps up to the capture size too, so for
// which steps replay a graph they are one.
const (
	CUDAGraphPiecewise      = "PIECEWISE"
	CUDAGraphFullDecodeOnly = "FULL_DECODE_ONLY"
)

// CUDAGraphModes are the cudagraph_mode values routerlab prices ("" is vLLM's default).
func CUDAGraphModes() []string { return []string{CUDAGraphPiecewise, CUDAGraphFullDecodeOnly} }

// maxCaptureSize bounds max_cudagraph_capture_size (the largest token budget routerlab takes).
const maxCaptureSize = 1 << 20

// CUDAGraphMaxTokens is the largest step, in tokens, that the backend runs as a CUDA graph:
// vLLM's capture size, or SGLang's cuda_graph_max_bs and TensorRT-LLM's
// cuda_graph_config.max_batch_size, its largest captured decode batch of one token per
// request (MaxCUDAGraphCaptureSize when set, else the backend's default: backendkernels.go).
func (d Deployment) CUDAGraphMaxTokens() int {
	n := d.MaxCUDAGraphCaptureSize
	if n == 0 {
		n = graphMaxBatch(d.Backend, d.HardwareSKU, d.TP)
	}
	if n == 0 {
		n = min(2*d.MaxNumSeqs, 512)
	}
	return min(n, d.MaxNumBatchedTokens)
}

// eagerCurve is the non-attention curve of steps run without CUDA graphs, and the largest
// step run with them. A table without eager all-reduces (one GPU, or the dynosim reference,
// which prices every step as AIConfigurator does) prices every step the same.
func eagerCurve(d Deployment, t *Table, sum []float64) (curve, int) {
	if d.Dynosim() || len(t.CollectiveEager.Values) != len(sum) {
		return newCurve(sum, 1), math.MaxInt
	}
	v := make([]float64, len(sum))
	for i := range v {
		v[i] = sum[i] - t.Collective.Values[i] + t.CollectiveEager.Values[i]
	}
	return newCurve(v, 1), d.CUDAGraphMaxTokens()
}

// runsEagerly tells whether a step of tokens runs without CUDA graphs, prefill telling
// whether it holds a prefill chunk.
func (w *Worker) runsEagerly(tokens int, prefill bool) bool {
	return tokens > w.graphTokens || prefill && w.decodeOnlyGraphs
}

// nonAttentionAt prices the non-attention work of a step of tokens (runsEagerly's prefill).
func (w *Worker) nonAttentionAt(tokens int, prefill bool) float64 {
	if w.runsEagerly(tokens, prefill) {
		return w.eager.at(float64(tokens))
	}
	return w.nonAttention.at(float64(tokens))
}
