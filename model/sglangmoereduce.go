package model

// Where AIConfigurator's SGLang 0.5.10 Triton MoE rows stop timing what SGLang runs (issue 34).
//
// SGLang's fused_experts_impl sums each token's top-k expert outputs (top-k above 2) with
// moe_sum_reduce_torch_compile, one compiled kernel, when the chunk holds at most 32 tokens,
// and with its Triton moe_sum_reduce above (python/sglang/srt/layers/moe/fused_moe_triton/
// fused_moe.py, as stored in the index). From cb4d907c7 (2026-05-05, "sglang 0.5.10 perf
// data") AIConfigurator's collector (collector/sglang/collect_moe.py, the same at af05a670a)
// replaces the compiled function with an eager torch.sum and mul_, two kernels, and lets the
// benchmark fall back to eager execution when the CUDA graph capture fails
// (allow_graph_fail). The 0.5.6.post2 and 0.5.9 collectors did neither. Where both
// collections time the same kernel, H200's 0.5.10 rows sit 5–12 % above 0.5.9's at 1–32
// tokens and within 3 % above (Qwen3-235B's experts at moe_tp 8, 16 and 32, per-tensor FP8 in
// both; the BF16 rows at moe_tp 8): the step is the collector's, not the kernel's.
//
// So a table whose block-FP8 experts come from the 0.5.10 rows (sglangBlockFP8MoEVersion)
// takes its own collection's rows at steps of at most 32 tokens. Those time per-tensor FP8
// (the collector's block_shape None), which at a few tokens reads the same FP8 weights the
// block kernel does, its scales a 16,384th of them; above 32 tokens, where the activation
// quantisation and the scaled accumulation grow with the step, the block rows stand.

// sglangCompiledReduceTokens is the largest chunk SGLang reduces with the compiled sum.
const sglangCompiledReduceTokens = 32

// sglangCompiledReduceRows returns block's rows of mk's kernel and quantisation above
// sglangCompiledReduceTokens tokens and own's at or below, and every other row of block.
func sglangCompiledReduceRows(block, own []moeRow, mk MoEKernel) []moeRow {
	ours := func(r moeRow) bool { return r.Kernel == mk.Source && r.Dtype == mk.Quant }
	var rows []moeRow
	for _, r := range block {
		if !ours(r) || r.Tokens > sglangCompiledReduceTokens {
			rows = append(rows, r)
		}
	}
	for _, r := range own {
		if ours(r) && r.Tokens <= sglangCompiledReduceTokens {
			rows = append(rows, r)
		}
	}
	return rows
}
