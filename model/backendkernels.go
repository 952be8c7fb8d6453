package model

import (
	"fmt"
	"strings"
)

// The kernels SGLang and TensorRT-LLM run by default, as far as the importer prices them from
// each backend's own AIConfigurator tables (<sku>/<op>/<backend>/<version>/). The importer's
// one code path (architecture × operator grids, derive.go) takes from here only what differs:
// which all-reduce rows, which expert kernel, and (worker.go, cudagraph.go) which steps replay
// a CUDA graph.

// allReduceModes are the custom_allreduce_perf `backend` values of a backend's all-reduce
// under CUDA graphs and launched eagerly; eager "" means the table measures one launch mode,
// priced for every step. vLLM: vllm_graph and vllm_eager; SGLang's collector measures its
// custom all-reduce both ways too (sglang_graph, sglang_eager); TensorRT-LLM's measures its
// own AllReduce op once, with the column empty.
func allReduceModes(b Backend) (graph, eager string) {
	switch b.OrDefault() {
	case BackendSGLang:
		return "sglang_graph", "sglang_eager"
	case BackendTRTLLM:
		return "", ""
	}
	return allreduceMode, allreduceEager
}

// backendMoEKernel is the fused-expert kernel backend b selects for experts of quant on sku.
//
// SGLang (sgl-project/sglang python/sglang/srt/server_args.py at 469c63e5, moe_runner_backend
// "auto"): the Triton fused MoE for BF16 and FP8 experts (sglang_fused_moe_triton), FlashInfer's
// CuteDSL MoE for NVFP4 on Blackwell (the only NVFP4 kernel its 0.5.9 collector measures), and
// FlashInfer's TRT-LLM MXFP4 MoE for gpt-oss (measured from 0.5.14). For DeepseekV3ForCausalLM
// (the multi-head latent attention models, mla) with FP8 on Blackwell and no all-to-all backend
// it picks FlashInfer's TRT-LLM MoE runner (server_args.py, _handle_model_specific_adjustments:
// moe_runner_backend flashinfer_trtllm on sm100), which SGLang's collector does not measure:
// priced from vLLM 0.24.0's rows of the same FlashInfer block-scale kernel (trtllmMoEKernel),
// measured through vLLM's layer.
//
// TensorRT-LLM (its PyTorch flow's default moe_config.backend CUTLASS): the CUTLASS fused MoE
// for BF16, FP8, NVFP4 and, on Hopper, block-FP8 (trtllmCutlassSource), DeepGEMM for block-FP8
// on Blackwell (the CUTLASS backend's block-scale path there: CutlassFusedMoE._get_quant_method
// takes DeepSeekFP8BlockScalesFusedMoEMethodDeepGemm on SM100, tensorrt_llm/_torch/modules/
// fused_moe/fused_moe_cutlass.py). gpt-oss's MXFP4 experts run as TensorRT-LLM quantises
// them (tensorrt_llm/_torch/model_config.py, ModelConfig.get_mxfp4_quant_algo): W4A16 on
// Hopper, MXFP4 weights with MXFP8 activations (w4a8_mxfp4_mxfp8) on Blackwell under the
// default backend; AIConfigurator's collector labels both moe_torch_flow
// (collector/trtllm/collect_moe.py). Hopper's 1.2.0rc5 collections measure W4A16 at every
// moe_tp × moe_ep; Blackwell's collections hold its W4A8 rows only from 1.3.0rc10 and only
// expert-parallel (moe_tp 1), so a B200 gpt-oss layout with moe_tp > 1 has no rows. DeepGEMM at DeepSeek's expert shape (mla) is measured at 1.2.0rc5 only on 16 GPUs
// or more (moe_tp × moe_ep ≥ 16); 1.3.0rc10 is the first collection with it on 8 (moe_tp 8 or
// moe_ep 8), so DeepSeek's experts take those rows.
//
// moeBackend is TensorRT-LLM's moe_config.backend when a run sets it (Deployment.MoEBackend):
// MoEBackendTRTLLM, the TRTLLM-Gen fused MoE (TRTLLMGenFusedMoE, tensorrt_llm/_torch/modules/
// fused_moe/fused_moe_trtllm_gen.py), which NVIDIA's DeepSeek-R1 recipes on Blackwell and
// InferenceX's dsr1-fp4/fp8-b200-trt scripts select; see trtllmGenMoEKernel. Under SGLang it
// is --moe-runner-backend (MoERunnerFlashInferTRTLLM); see sglangFlashInferTRTLLMKernel.
func backendMoEKernel(b Backend, moeBackend, sku, version, quant string, mla bool) (MoEKernel, error) {
	blackwell := strings.HasPrefix(sku, "b") || strings.HasPrefix(sku, "gb")
	if moeBackend != "" && b == BackendSGLang {
		return sglangFlashInferTRTLLMKernel(moeBackend, blackwell, quant)
	}
	if moeBackend != "" {
		return trtllmGenMoEKernel(b, moeBackend, blackwell, quant)
	}
	switch b.OrDefault() {
	case BackendSGLang:
		switch {
		case quant == "nvfp4" && blackwell:
			return MoEKernel{Source: "sglang_flashinfer_cutedsl_moe", Quant: quant}, nil
		case quant == "w4a16_mxfp4":
			return MoEKernel{Version: "0.5.14", Source: "sglang_flashinfer_trtllm_moe", Quant: quant}, nil
		case quant == "fp8_block" && blackwell && mla:
			return MoEKernel{Backend: BackendVLLM, Version: "0.24.0", Source: trtllmMoEKernel, Quant: quant}, nil
		case quant == "fp8_block" && !blackwell && (version == "0.5.6.post2" || version == "0.5.9"):
			return MoEKernel{Version: sglangBlockFP8MoEVersion, SmallStepsVersion: version, Source: sglangTritonMoE, Quant: quant}, nil
		case quant == "fp8_block" || quant == "bfloat16":
			return MoEKernel{Source: sglangTritonMoE, Quant: quant}, nil
		}
	case BackendTRTLLM:
		switch {
		case quant == "fp8_block" && blackwell && mla:
			return MoEKernel{Version: "1.3.0rc10", Source: "deepgemm", Quant: quant}, nil
		case quant == "fp8_block" && blackwell:
			return MoEKernel{Source: "deepgemm", Quant: quant}, nil
		case quant == "w4a16_mxfp4" && blackwell:
			return MoEKernel{Version: "1.3.0rc10", Source: "moe_torch_flow", Quant: "w4a8_mxfp4_mxfp8"}, nil
		case quant == "w4a16_mxfp4":
			return MoEKernel{Source: "moe_torch_flow", Quant: quant}, nil
		case quant == "bfloat16" || quant == "fp8" || quant == "nvfp4" || quant == "fp8_block":
			return MoEKernel{Source: trtllmCutlassSource(sku, version), Quant: quant}, nil
		}
	default:
		return defaultMoEKernel(sku, version, quant)
	}
	return MoEKernel{}, fmt.Errorf("model import: no expert kernel known for %s experts on %s under %s %s: pass --moe-kernel, --moe-quant and --moe-version", quant, sku, b, version)
}

// sglangTritonMoE is the kernel_source of SGLang's Triton fused-MoE rows.
const sglangTritonMoE = "sglang_fused_moe_triton"

// sglangBlockFP8MoEVersion is the collection whose Triton fp8_block rows price the experts of
// the Hopper tables derived from SGLang 0.5.6.post2's and 0.5.9's. SGLang runs a block-FP8
// checkpoint's experts with the block-scaled kernel: Fp8Config keeps the checkpoint's
// weight_block_size and Fp8MoEMethod passes it to the Triton runner as block_shape, with
// per-token-group activation quantisation (python/sglang/srt/layers/quantization/fp8.py, as
// stored in the index at 00563d36). AIConfigurator's SGLang MoE collector called fused_moe with
// block_shape None from 699677931 (2025-12-22) until 13dadba3b (2026-04-19, "restore fp8 block
// config"), so the fp8_block rows of its 0.5.6.post2 and 0.5.9 collections time per-tensor FP8
// under that label: H200's 0.5.9 rows were collected 2026-03-06 to 04-17 (ccd5d6f79 through
// a265adb3d, each with block_shape None for fp8_block). The 0.5.10 rows (af05a670a,
// 2026-05-06: block_shape [128, 128] where inter/moe_tp and hidden divide by 128) are the
// nearest collection timing the block kernel; at moe_ep 1, every layout these tables hold, it
// times the same call with the top-k inside. At steps of at most 32 tokens the 0.5.10 rows time
// the collector's eager reduce (sglangmoereduce.go): there the table's own collection's rows
// stand (SmallStepsVersion). Blackwell's 0.5.9 rows share the defect (B200's,
// MiniMax's only Triton reader, are collected by the same pipelines) but are not corrected:
// which MoE runner SGLang 0.5.9 picks for block-FP8 there is not established, and no
// measured row checks it.
const sglangBlockFP8MoEVersion = "0.5.10"

// sglangFusedSharedExperts is how many shared experts SGLang folds into the routed experts'
// fused MoE kernel in layout l: DeepSeek-V3 and R1 (DeepseekV3ForCausalLM: 256 routed experts,
// one shared expert) run their shared expert as expert 257 of the Triton fused MoE, which every
// token routes to as its ninth (DeepseekV2ForCausalLM.determine_num_fused_shared_experts in
// python/sglang/srt/models/deepseek_v2.py, read at 3e4a39ee: on unless
// --disable-shared-experts-fusion, the GPU is below SM 80, the config is another or the experts
// are spread over ranks, moe_ep_size > 1). The flashinfer_trtllm MoE runner turns it off
// (server_args.py at 469c63e5, _handle_moe_kernel_config sets disable_shared_experts_fusion),
// so only the default Triton runner (auto, on Hopper) fuses. Not GLM-5: its own hook
// (GlmMoeDsaForCausalLM, sglang#18804, 2026-02-16) is later than the DeepSeek default, whose
// architecture check turns it off for GLM-5, and the glm5-hopper image's revision is not known.
func sglangFusedSharedExperts(b Backend, s LLMSpec, mk MoEKernel, l Layout) int {
	if b != BackendSGLang || mk.Source != sglangTritonMoE || s.Architecture != "deepseek_v3" ||
		s.Experts != 256 || s.SharedInter != s.ExpertInter || l.MoEEP != 1 {
		return 0
	}
	return 1
}

// sglangDualStreamTokens is the largest step whose shared experts SGLang runs on a second CUDA
// stream beside the gate, top-k and routed experts of table t (0: none). DeepseekV2MoE, the
// MoE layer of DeepSeek-V3 and R1 and of GLM-5 (GlmMoeDsaForCausalLM subclasses
// DeepseekV2ForCausalLM), takes forward_normal_dual_stream when the model's alt_stream exists
// (DeepseekV2Model creates it on CUDA), its shared expert is not fused into the kernel and the
// step has 1 to DUAL_STREAM_TOKEN_THRESHOLD (1,024) tokens, with no all-to-all backend
// (python/sglang/srt/models/deepseek_v2.py, DeepseekV2MoE.forward, at 3e4a39ee; still there
// at b4fe0246c). A fused table has no shared-expert grid, so nothing overlaps.
func sglangDualStreamTokens(t *Table) int {
	if t.Backend != BackendSGLang || (t.LLM.Architecture != "deepseek_v3" && t.LLM.Architecture != "glm_moe_dsa") {
		return 0
	}
	return 1024
}

// MoEBackendTRTLLM is TensorRT-LLM's moe_config.backend "TRTLLM": the TRTLLM-Gen fused MoE.
const MoEBackendTRTLLM = "TRTLLM"

// trtllmGenMoEKernel is the rows that price TensorRT-LLM's TRTLLM-Gen fused MoE (moe_config
// backend TRTLLM), which runs on Blackwell only. NVFP4: AIConfigurator's TRT-LLM collector
// measures it as kernel_source moe_torch_flow_min_latency (collector/trtllm/collect_moe.py:
// min_latency_mode sets model_config.moe_backend "trtllm" with DeepSeek-V3's routing, at every
// token count), the rows AIConfigurator's own TRT-LLM model prices NVFP4 experts of up to 128
// tokens with (aic-core operators/moe.rs, the low-latency table). They run without the
// finalize (do_finalize false), which TensorRT-LLM's DeepSeek layers fuse into the all-reduce
// after the experts at these batch sizes (modeling_deepseekv3.py, MoEAllReduce). Block-FP8:
// the TRT-LLM collector labels every Blackwell fp8_block row DeepGEMM and measures no
// TRTLLM-Gen FP8 block-scale row; the same TRTLLM-Gen kernel is what FlashInfer's
// trtllm_fp8_block_scale_moe runs, measured by AIConfigurator's vLLM 0.24.0 collector
// through vLLM's layer (trtllmMoEKernel), as SGLang's DeepSeek experts are priced.
func trtllmGenMoEKernel(b Backend, moeBackend string, blackwell bool, quant string) (MoEKernel, error) {
	switch {
	case b != BackendTRTLLM || moeBackend != MoEBackendTRTLLM:
		return MoEKernel{}, fmt.Errorf("model import: MoE backend %q under %s: only TensorRT-LLM's %s is priced", moeBackend, b.OrDefault(), MoEBackendTRTLLM)
	case !blackwell:
		return MoEKernel{}, fmt.Errorf("model import: TensorRT-LLM's %s MoE backend (TRTLLM-Gen) runs on Blackwell only", moeBackend)
	case quant == "nvfp4":
		return MoEKernel{Source: "moe_torch_flow_min_latency", Quant: quant}, nil
	case quant == "fp8_block":
		return MoEKernel{Backend: BackendVLLM, Version: "0.24.0", Source: trtllmMoEKernel, Quant: quant}, nil
	}
	return MoEKernel{}, fmt.Errorf("model import: no TRTLLM-Gen expert rows known for %s experts", quant)
}

// MoERunnerFlashInferTRTLLM is SGLang's --moe-runner-backend flashinfer_trtllm: FlashInfer's
// TRT-LLM-gen fused MoE, which InferenceX's dsr1_fp4_b200.sh sets.
const MoERunnerFlashInferTRTLLM = "flashinfer_trtllm"

// sglangFlashInferTRTLLMKernel is the rows that price SGLang's flashinfer_trtllm MoE runner for
// NVFP4 experts on Blackwell: SGLang's own collector measures that runner (kernel_source
// sglang_flashinfer_trtllm_moe) for NVFP4 from its 0.5.14 collection; 0.5.9's holds NVFP4
// experts only as the CuteDSL runner, which the runs did not use. The 0.5.14 rows are the same
// SGLang layer over a later FlashInfer release than 0.5.9 ships (the table states the version).
func sglangFlashInferTRTLLMKernel(moeBackend string, blackwell bool, quant string) (MoEKernel, error) {
	switch {
	case moeBackend != MoERunnerFlashInferTRTLLM:
		return MoEKernel{}, fmt.Errorf("model import: MoE runner backend %q under sglang: only %s is priced", moeBackend, MoERunnerFlashInferTRTLLM)
	case !blackwell:
		return MoEKernel{}, fmt.Errorf("model import: SGLang's %s MoE runner runs on Blackwell only", moeBackend)
	case quant != "nvfp4":
		return MoEKernel{}, fmt.Errorf("model import: SGLang's %s MoE runner is priced for nvfp4 experts only, not %s", moeBackend, quant)
	}
	return MoEKernel{Version: "0.5.14", Source: "sglang_flashinfer_trtllm_moe", Quant: quant}, nil
}

// trtllmCutlassSource is the kernel_source under which a TensorRT-LLM collection on sku at
// version labels the CUTLASS fused MoE: moe_torch_flow_cutlass since AIConfigurator's
// collector names the backend it sets (collector/trtllm/collect_moe.py); H200's 1.2.0rc5
// collection predates that and labels the same default-backend rows moe_torch_flow (it holds
// no moe_torch_flow_cutlass row; its collection_meta.yaml says provenance legacy).
func trtllmCutlassSource(sku, version string) string {
	if sku == "h200_sxm" && version == trtllmVersion {
		return "moe_torch_flow"
	}
	return "moe_torch_flow_cutlass"
}

// graphDecodeOnly tells whether backend b replays CUDA graphs for decode-only steps alone,
// running every step that holds a prefill chunk eagerly: SGLang's CudaGraphRunner captures
// decode batches (forward mode DECODE) and its piecewise graphs are off by default at these
// versions; TensorRT-LLM's PyTorch executor captures generation-only batches
// (cuda_graph_config). vLLM graphs mixed steps too (cudagraph.go).
func graphDecodeOnly(b Backend) bool { return b.OrDefault() != BackendVLLM }

// graphMaxBatch is the largest decode batch backend b captures in a CUDA graph on sku with
// attention TP tp. SGLang: cuda_graph_max_bs by GPU memory (server_args.py,
// _handle_gpu_memory_settings: H100/H200 256 below TP 4 and 512 from it, B200 and larger 512).
// TensorRT-LLM: cuda_graph_config.max_batch_size's default, 128 (tensorrt_llm/llmapi/llm_args.py,
// CudaGraphConfig, batch sizes generated up to 128 when none is given).
func graphMaxBatch(b Backend, sku string, tp int) int {
	switch b.OrDefault() {
	case BackendSGLang:
		if strings.HasPrefix(sku, "h") && tp < 4 {
			return 256
		}
		return 512
	case BackendTRTLLM:
		return 128
	}
	return 0
}

// The SGLang and TensorRT-LLM releases the embedded tables are derived at.
const (
	sglangVersion = "0.5.9"
	trtllmVersion = "1.2.0rc5"
)

// backendImports are the embedded SGLang and TensorRT-LLM tables: the seed's model and layouts
// under each, and the models, GPUs, precisions and layouts of AIConfigurator's measured
// aggregated SGLang and TRT-LLM rows whose architecture the importer prices (dense and MoE
// models with grouped-query attention, and DeepSeek's multi-head latent attention under SGLang;
// not hybrid linear or sparse attention). SGLang at
// 0.5.9 and TRT-LLM at 1.2.0rc5, the versions every GPU here has tables for.
func backendImports() []ImportOptions {
	one := func(b Backend, model, sku, quant, gemm string, l ...string) ImportOptions {
		return ImportOptions{Model: model, HardwareSKU: sku, Backend: b, BackendVersion: b.EmbeddedVersion(),
			Quantization: quant, GEMMQuant: gemm, Layouts: layouts(l...)}
	}
	const minimax, llama70, llama8 = "MiniMaxAI/MiniMax-M2.5", "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-8B-Instruct"
	const qwen32, qwen235, gptOSS = "Qwen/Qwen3-32B", "Qwen/Qwen3-235B-A22B-FP8", "openai/gpt-oss-120b"
	const dsV3, dsR1, dsFP4 = "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1", "nvidia/DeepSeek-V3.1-NVFP4"
	dense := []string{"1,1,1", "2,2,1", "4,4,1", "8,8,1"}
	return []ImportOptions{
		one(BackendSGLang, minimax, "b200_sxm", "", "", "4,1,4", "4,4,1"),
		one(BackendTRTLLM, minimax, "b200_sxm", "", "", "4,1,4", "4,4,1"),
		one(BackendSGLang, qwen32, "h100_sxm", "", "", dense...),
		// and under --quantization fp8: the gap-analysis collection's disaggregated rows
		// (silicon/disagg.go).
		one(BackendSGLang, qwen32, "h100_sxm", "fp8", "fp8", dense...),
		one(BackendSGLang, qwen235, "h200_sxm", "", "", "2,2,1", "4,4,1"),
		one(BackendSGLang, llama8, "h200_sxm", "fp8", "fp8", dense...), // --quantization fp8: per-tensor FP8 weights
		// The 70B runs serve nvidia/Llama-3.3-70B-Instruct-FP8, ModelOpt's per-tensor FP8 with
		// static input scales (fp8static.go).
		one(BackendTRTLLM, llama70, "b200_sxm", "fp8", gemmFP8Static, dense...),
		one(BackendTRTLLM, llama70, "b200_sxm", "nvfp4", "nvfp4", dense...),
		one(BackendTRTLLM, llama70, "h200_sxm", "fp8", gemmFP8Static, dense...),
		one(BackendTRTLLM, llama8, "h100_sxm", "", "", dense...),
		// AIConfigurator's gap-analysis runs of Qwen3-32B served Qwen's block-FP8 checkpoint:
		// its evaluation pipeline deploys QWEN3_32B at database version 1.0.0rc3 from
		// Qwen/Qwen3-32B-FP8 (tools/automation/config.env at 961028348 through 4361371a6; so
		// does its Dynamo deployment guide at efcae124c), which TensorRT-LLM loads as
		// FP8_BLOCK_SCALES (ModelConfig.from_pretrained: quant_method fp8 with
		// weight_block_size); no checkpoint it loads runs the dynamic per-tensor path the fp8
		// rows measure.
		one(BackendTRTLLM, qwen32, "h100_sxm", "fp8", "fp8_block", dense...),
		// DeepSeek-V3 and R1 (one architecture, block-FP8) at SGLang's measured TP 8 layouts
		// (at TP 4 on B200 the FP8 weights leave no KV cache): multi-head latent attention from
		// SGLang's MLA operator rows (mla_ops.go).
		one(BackendSGLang, dsV3, "h200_sxm", "", "", "8,8,1"),
		one(BackendSGLang, dsR1, "h200_sxm", "", "", "8,8,1"),
		// and on B200 also with the experts spread over the 8 GPUs (--ep-size 8), as
		// dsr1-fp8-b200-sglang ran on 2025-11-18 (silicon/sglang2025runs.go).
		one(BackendSGLang, dsV3, "b200_sxm", "", "", "8,8,1", "8,1,8"),
		one(BackendSGLang, dsR1, "b200_sxm", "", "", "8,8,1", "8,1,8"),
		// TensorRT-LLM's DeepSeek-V3 and R1 at its measured 8-GPU layouts (TP, and TEP: experts
		// spread over the 8 GPUs), block-FP8 on H200 and B200; NVFP4 on B200 also at 4 GPUs,
		// from the NVFP4 checkpoint AIConfigurator describes for this architecture (V3.1's, the
		// same shapes: MLA's down- and up-projections BF16, o_proj, experts and the rest NVFP4,
		// FP8 KV cache).
		// R1 and V3 also at one GPU in NVFP4 on B200: the rank of their attention-data-parallel runs
		// (model/attentiondp.go). Not block-FP8: B200's DeepGEMM experts have no one-GPU rows,
		// and H200's generation MLA rows at 128 heads hold a batch-1 warm-up outlier (3.77 ms at
		// step 7) that the decode surface would carry into every batch (docs/attention-dp.md).
		one(BackendTRTLLM, dsV3, "h200_sxm", "", "", "8,8,1", "8,1,8"),
		one(BackendTRTLLM, dsR1, "h200_sxm", "", "", "8,8,1", "8,1,8"),
		one(BackendTRTLLM, dsV3, "b200_sxm", "", "", "8,8,1", "8,1,8"),
		one(BackendTRTLLM, dsR1, "b200_sxm", "", "", "8,8,1", "8,1,8"),
		fromCheckpoint(dsFP4, one(BackendTRTLLM, dsV3, "b200_sxm", "nvfp4", "", "4,4,1", "4,1,4", "8,8,1", "8,1,8", "1,1,1")),
		fromCheckpoint(dsFP4, one(BackendTRTLLM, dsR1, "b200_sxm", "nvfp4", "", "4,4,1", "4,1,4", "8,8,1", "8,1,8", "1,1,1")),
		// The same under moe_config.backend TRTLLM (TRTLLM-Gen experts), which the measured
		// InferenceX runs on B200 set (silicon/trtllmruns.go); block-FP8 also at TP 4, which
		// the TRTLLM-Gen rows measure.
		moeBackend(MoEBackendTRTLLM, one(BackendTRTLLM, dsV3, "b200_sxm", "", "", "4,4,1", "8,8,1", "8,1,8")),
		moeBackend(MoEBackendTRTLLM, one(BackendTRTLLM, dsR1, "b200_sxm", "", "", "4,4,1", "8,8,1", "8,1,8")),
		moeBackend(MoEBackendTRTLLM, fromCheckpoint(dsFP4, one(BackendTRTLLM, dsV3, "b200_sxm", "nvfp4", "", "4,4,1", "4,1,4", "8,8,1", "8,1,8"))),
		moeBackend(MoEBackendTRTLLM, fromCheckpoint(dsFP4, one(BackendTRTLLM, dsR1, "b200_sxm", "nvfp4", "", "4,4,1", "4,1,4", "8,8,1", "8,1,8"))),
		// SGLang's DeepSeek-R1 NVFP4 runs on B200 and B300 (InferenceX's dsr1-fp4-{b200,b300}-sglang,
		// served from nvidia/DeepSeek-R1-0528-FP4-V2; priced from V3.1's NVFP4 config, the one
		// AIConfigurator holds for this architecture): experts spread over the 4 or 8 GPUs
		// (--ep-size = TP) under the flashinfer_trtllm MoE runner (silicon/sglangruns.go).
		moeBackend(MoERunnerFlashInferTRTLLM, fromCheckpoint(dsFP4, one(BackendSGLang, dsV3, "b200_sxm", "nvfp4", "", "4,1,4", "8,1,8"))),
		moeBackend(MoERunnerFlashInferTRTLLM, fromCheckpoint(dsFP4, one(BackendSGLang, dsR1, "b200_sxm", "nvfp4", "", "4,1,4", "8,1,8"))),
		moeBackend(MoERunnerFlashInferTRTLLM, fromCheckpoint(dsFP4, one(BackendSGLang, dsV3, "b300_sxm", "nvfp4", "", "4,1,4", "8,1,8"))),
		// and dsr1-fp8-b300-sglang's block-FP8 rows (labelled DeepSeek-V3) at TP 8 and, with
		// B300's memory, TP 4: SGLang's default expert kernel for them on Blackwell is the
		// flashinfer_trtllm runner the script names.
		one(BackendSGLang, dsV3, "b300_sxm", "", "", "4,4,1", "8,8,1"),
		// Qwen3-235B's block-FP8 experts under TensorRT-LLM on H100: CUTLASS, at the runs'
		// expert-parallel layouts (moe_tp > 1 splits its 1,536-wide experts off the 128 blocks).
		one(BackendTRTLLM, qwen235, "h100_sxm", "", "", "4,1,4", "8,1,8"),
		// gpt-oss-120b's MXFP4 experts under TensorRT-LLM: every measured layout on H200 (its
		// 1.2.0rc5 rows cover tensor- and expert-parallel experts), one GPU on B200 (Blackwell's
		// rows are expert-parallel only) and the expert-parallel 2- and 4-GPU layouts whose
		// experts price its attention-data-parallel runs (model/attentiondp.go).
		one(BackendTRTLLM, gptOSS, "h200_sxm", "", "", "1,1,1", "2,2,1", "4,4,1", "8,8,1", "4,2,2", "4,1,4", "8,1,8"),
		one(BackendTRTLLM, gptOSS, "b200_sxm", "", "", "1,1,1", "2,1,2", "4,1,4"),
		// GLM-5 (DeepSeek sparse attention over MLA: sparse.go) at the sample's TP 8, block-FP8
		// on H200 and B200 and NVIDIA's NVFP4 checkpoint on B200, its attention from the DSA
		// modules of SGLang 0.5.10, the nearest collection to the runs' March 2026 nightlies
		// that measures GLM-5's modules at these dtypes (0.5.9's holds B300 alone).
		glm5(one(BackendSGLang, glm5Model, "b200_sxm", "fp8", "", "8,8,1"), glm5FP8),
		glm5(one(BackendSGLang, glm5Model, "h200_sxm", "fp8", "", "8,8,1"), glm5FP8),
		glm5(one(BackendSGLang, glm5Model, "b200_sxm", "fp4", "", "8,8,1"), glm5FP4),
		// The runs of other SGLang releases, on their release's collection (SGLangTablesVersion)
		// at the layouts they ran: 0.5.6.post2 on H200 (the gap-analysis collection's Llama-3.1-8B
		// and Qwen3-235B runs) and on H100 (its Qwen3-32B runs of 0.5.1.post1, the nearest
		// collection, and the disaggregated FP8 rows of 0.5.6.post2); 0.5.10 on B300
		// (InferenceX's v0.5.10.post1 DeepSeek runs).
		sglang056(one(BackendSGLang, llama8, "h200_sxm", "fp8", "fp8", dense...)),
		sglang056(one(BackendSGLang, qwen235, "h200_sxm", "", "", "2,2,1", "4,4,1")),
		sglang056(one(BackendSGLang, qwen32, "h100_sxm", "", "", "2,2,1", "4,4,1", "8,8,1")),
		sglang056(one(BackendSGLang, qwen32, "h100_sxm", "fp8", "fp8", dense...)),
		atVersion("0.5.10", one(BackendSGLang, dsV3, "b300_sxm", "", "", "4,4,1", "8,8,1")),
		atVersion("0.5.10", moeBackend(MoERunnerFlashInferTRTLLM, fromCheckpoint(dsFP4, one(BackendSGLang, dsV3, "b300_sxm", "nvfp4", "", "4,1,4", "8,1,8")))),
	}
}

// sglang056 derives o from SGLang 0.5.6.post2's collection. Its all-reduce rows measure SGLang's
// CustomAllreduce replayed in a CUDA graph only, with no launch-mode column (AIConfigurator's
// legacy collector/sglang/collect_all_reduce.py at 6c79350d), while SGLang launches it eagerly
// in every step holding a prefill chunk: the all-reduce is priced from the nearest collection
// that measures both modes, 0.5.9 (the same custom all-reduce kernel).
func sglang056(o ImportOptions) ImportOptions {
	o = atVersion("0.5.6.post2", o)
	o.AllReduceVersion = sglangVersion
	return o
}

// GLM-5 as the sample names it, and the checkpoints AIConfigurator describes it by.
const glm5Model, glm5FP8, glm5FP4 = "zhipuai/GLM-5", "zai-org/GLM-5-FP8", "nvidia/GLM-5-NVFP4"

// glm5 serves o from checkpoint with its sparse attention from SGLang 0.5.10's DSA modules.
func glm5(o ImportOptions, checkpoint string) ImportOptions {
	return withAttention("0.5.10", fromCheckpoint(checkpoint, o))
}

// moeBackend is o under TensorRT-LLM's moe_config.backend b.
func moeBackend(b string, o ImportOptions) ImportOptions {
	o.MoEBackend = b
	return o
}

// elementwiseFusion says which of the element-wise kernels around attention a backend runs
// inside another kernel, so that the importer does not price them apart.
type elementwiseFusion struct {
	// ropeInAttention: RoPE on q and k and the KV-cache write run inside the attention op.
	ropeInAttention bool
	// normInAllReduce: each residual add + RMSNorm runs inside the all-reduce before it.
	normInAllReduce bool
	// qkNormRoPE: the per-head QK-norm and RoPE run as one kernel, in place on q and k.
	qkNormRoPE bool
	// sglang: SGLang's own kernels around attention (sglangelementwise.go) instead of
	// AIConfigurator's op list.
	sglang bool
}

// fusedElementwise is backend b's fusion for architecture arch of hidden size hidden at TP
// size tp. TensorRT-LLM's attention op applies RoPE and writes the KV cache in its fused QKV
// preprocessing, for every model; its Llama decoder layers fuse each all-reduce with the
// residual add and RMSNorm after it (AllReduceFusionOp.RESIDUAL_RMS_NORM, on unless
// TRTLLM_LLAMA_EAGER_FUSION_DISABLED=1 — tensorrt_llm/_torch/models/modeling_llama.py; the
// switch the release notes name from 0.21 through 1.3) when the hidden size exceeds 4,096:
// TensorRT-LLM#6205 (July 2025, in 1.1.0rc2.post1 by the cherry-pick of #6850, #7420), which
// enabled these fusions for Llama 3, disables them at hidden_size <= 4096 "due to accuracy
// issues", and before it LlamaDecoderLayer ran plain RMSNorm modules after a separate
// all-reduce — so Llama-3.1-8B (hidden 4,096) fuses under no release here. Its Qwen3 and
// Qwen3-MoE attention (QKNormRoPEAttention, tensorrt_llm/_torch/modules/qk_norm_attention.py;
// fuse_qk_norm_rope on by default since TensorRT-LLM#4611, in review in May 2025, before the
// 0.21 and 1.0 releases the rows ran) normalises q and k per head and rotates them in one
// kernel (torch.ops.trtllm.fused_qk_norm_rope, in place on the fused qkv), where
// AIConfigurator's op list, which the importer otherwise follows, prices two passes of an
// element-wise op and a norm over each of q and k. vLLM runs them all as kernels of its own
// (its fusion pass is priced in fusion.go); SGLang's are priced as its sources launch them
// (sglangelementwise.go).
func fusedElementwise(b Backend, arch string, hidden, tp int) elementwiseFusion {
	if b == BackendSGLang {
		return elementwiseFusion{sglang: true}
	}
	if b != BackendTRTLLM {
		return elementwiseFusion{}
	}
	return elementwiseFusion{ropeInAttention: true, normInAllReduce: arch == "llama" && hidden > 4096 && tp > 1,
		qkNormRoPE: arch == "qwen3" || arch == "qwen3_moe"}
}

// fp8Inputs says which of a decoder layer's per-tensor FP8 GEMMs receive their input already
// quantised to FP8, so that FP8QDQLinearMethod.apply quantises nothing (fp8static.go).
type fp8Inputs struct{ qkv, oProj, gateUp, down bool }

// trtllmFP8Inputs is TensorRT-LLM's rule for a per-tensor FP8 model under fusion fused. The
// attention op writes its output in FP8 with o_proj's scale (Attention.forward passes
// out_scale = o_proj.inv_input_scale when o_proj has_fp8_qdq: tensorrt_llm/_torch/modules/
// attention.py) and GatedMLP's SwiGLU quantises for down_proj (_apply_activation: swiglu with
// quant_scale = down_proj.input_scale, modules/gated_mlp.py), at every TP size. Where the
// all-reduce fuses the residual add and RMSNorm (normInAllReduce: Llama 70B at TP > 1), the fused
// op is RESIDUAL_RMS_NORM_QUANT_FP8 with the next GEMM's input_scale (LlamaDecoderLayer,
// modeling_llama.py, from TensorRT-LLM#6205: the pre-MLP all-reduce for gate_up_proj, the
// post-MLP one for the next layer's qkv_proj), so those two take FP8 too; elsewhere a
// standalone RMSNorm hands them BF16, which they quantise with the static scale.
func trtllmFP8Inputs(fused elementwiseFusion) fp8Inputs {
	return fp8Inputs{qkv: fused.normInAllReduce, oProj: true, gateUp: fused.normInAllReduce, down: true}
}
