package model

import (
	"path/filepath"
	"strings"
)

// What AIConfigurator's SGLang Triton MoE rows time besides the layer SGLang runs (issue 34).
//
// From 97faa88f3 (2026-01-05) the collector's timed run_op (collector/sglang/collect_moe.py,
// the same at ced205af0, 0a6824992, 507f0fb07, feebdae3d, cb4d907c7 and af05a670a) draws the
// step's routing with select_experts, then copies its top-k weights, top-k ids and router
// logits into the tensors the CUDA graph captured (three copy_ calls), then calls fused_moe;
// five run_ops a graph replay, the row their mean. SGLang's MoE layer passes the top-k output
// straight to the experts: the top-k kernel stands for the one SGLang runs (its own, or the
// biased grouped top-k of DeepSeek's gate), the copies for nothing. They are taken out of
// each row, priced as AIConfigurator prices memory-bound work no table measures (memOpUS:
// bytes read and written over the scaled bandwidth, plus the system file's constant latency).
//
// Which rows: the Triton kernel's with one expert-parallel rank (from 0a6824992 the rows at
// moe_ep > 1 time precomputed rank-0 workloads, and which of the 0.5.9 collections' rows came
// from which collector the data files do not say: left as measured), in the collections made
// by those collectors: H200's 0.5.6.post2 (re-collected 2026-01-12, 9bfd8e68c), 0.5.9 (March
// and April 2026) and 0.5.10 (April and May). H100's 0.5.6.post2 is 699677931's, whose copies
// ran outside the timed function; 0.5.14's (e23be5a79) times SGLang's own FusedMoE layer and
// TopK for quantized experts: both kept as measured.

// collectorTopKCopies reports whether the rows of kernel at moeEP in the moe_perf table at rel
// (<sku>/moe/sglang/<version>/moe_perf.parquet) time the collector's three routing copies.
func collectorTopKCopies(rel, kernel string, moeEP int) bool {
	p := strings.Split(filepath.ToSlash(rel), "/")
	if kernel != sglangTritonMoE || moeEP != 1 || len(p) < 4 || p[1] != "moe" || p[2] != string(BackendSGLang) {
		return false
	}
	switch sku, version := p[0], p[3]; version {
	case "0.5.9", "0.5.10":
		return true
	case "0.5.6.post2":
		return sku == "h200_sxm"
	}
	return false
}

// topKCopiesUS prices the three copies of one collector row of tokens at top-k of experts:
// the float32 top-k weights, the int32 top-k ids and the float32 router logits, each read and
// written once.
func (g GPUSpec) topKCopiesUS(tokens float64, topK, experts int) float64 {
	const word = 4 // float32 weights and logits, int32 ids
	pairs := tokens * float64(topK) * word
	return 2*g.memOpUS(2*pairs) + g.memOpUS(2*tokens*float64(experts)*word)
}
