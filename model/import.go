package model

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ImportOptions selects what Import derives.
type ImportOptions struct {
	Model          string  // e.g. MiniMaxAI/MiniMax-M2.5 (config file: MiniMaxAI--MiniMax-M2.5_config.json)
	HardwareSKU    string  // e.g. b200_sxm (system file b200_sxm.yaml, data under b200_sxm/)
	Backend        Backend // vllm, sglang or trtllm ("" is vllm)
	BackendVersion string  // e.g. 0.19.0
	// Quantization names a serving precision other than the checkpoint's own (e.g. fp8 for a
	// BF16 checkpoint quantised at load, nvfp4 for NVIDIA's FP4 checkpoint); "" is the
	// checkpoint's. It keys the table (Deployment.Quantization) and its file name.
	Quantization string
	// Checkpoint is the Hugging Face id whose config.json describes the checkpoint served in
	// Quantization when it is not Model's (NVIDIA's NVFP4 release of a model); "" = Model.
	Checkpoint string
	GEMMQuant  string // gemm_dtype of the projection and dense MLP rows; "" = the checkpoint's
	// AttentionVersion is the backend version directory of the attention rows when they are
	// not the deployment's (a shape only a later collector measured); "" = BackendVersion.
	AttentionVersion string
	// AllReduceVersion is the backend version directory of the all-reduce rows when they are
	// not the deployment's (a collection that measures one launch mode where the backend runs
	// two); "" = BackendVersion.
	AllReduceVersion string
	// LinearAttentionVersion is the backend version directory of a hybrid model's gated
	// DeltaNet rows when they are not the deployment's (hybrid.go); "" = BackendVersion.
	LinearAttentionVersion string
	// MLAModuleRows selects the collection of MLA module rows that prices multi-head latent
	// attention: MLARowsFusedNorms ("" too), the GPU's collection run with the norm kernels a
	// serving engine runs where it has one (mla.go), or MLARowsVersion, the attention version's.
	MLAModuleRows string
	// MoE names the measured fused-expert kernel that prices the experts.
	MoE MoEKernel
	// MoEBackend is TensorRT-LLM's moe_config.backend other than its release's default
	// (MoEBackendTRTLLM) or SGLang's --moe-runner-backend; it selects the expert kernel (backendMoEKernel) and keys the table
	// (Deployment.MoEBackend).
	MoEBackend string
	// FP32TFLOPS and TF32TFLOPS are the GPU's dense FP32 (CUDA-core) and TF32 (tensor-core)
	// peaks, which price the router gate: vLLM runs MiniMax-M2's gate as an FP32 GEMM (on CUDA
	// cores, or TF32 tensor cores under VLLM_FLOAT32_MATMUL_PRECISION=high), which no operator
	// table measures. 0 takes the datasheet figure of a known SKU (see fp32PeakTFLOPS).
	FP32TFLOPS, TF32TFLOPS float64
	Layouts                []Layout // parallel layouts to derive
	// TimingReference is the reference the tables price for: ReferenceSilicon ("") derives
	// the kernels vLLM runs; ReferenceDynosim the operators AIConfigurator itself prices for
	// this deployment, as Dynamo's mocker sees them (DynosimImportOptions), into files of
	// their own.
	TimingReference string
	// QKNormKernels prices a QK-norm over a layer's heads (qk_norm_type per_layer):
	// QKNormVLLM ("" too, the embedded tables), the three kernels vLLM 0.19 runs
	// (derive.go); or QKNormAIConfigurator, AIConfigurator's op list, which prices every
	// QK-norm as per-head element-wise ops (an ablation; docs/validation.md, issue 19).
	QKNormKernels string
}

// The ways a per-layer QK-norm can be priced (ImportOptions.QKNormKernels).
const (
	QKNormAIConfigurator = "aiconfigurator"
	QKNormVLLM           = "vllm"
)

// MoEKernel selects the fused-expert rows of an AIConfigurator moe_perf table.
type MoEKernel struct {
	Version string // backend version directory of the rows; "" = the deployment's
	// Backend is the backend directory of the rows when another engine's collector measured
	// the kernel ("" = the deployment's).
	Backend Backend
	Source  string // kernel_source of the rows
	Quant   string // moe_dtype of the rows
	// Shape, when set, is the expert shape the rows were measured at instead of the
	// model's: a kernel measured only at another model's shape, transferred (derive.go,
	// transferMoE). Zero: the model's own shape, the only one priced by default.
	Shape MoEShape
	// Distribution is how the measured rows spread a step's tokens over the experts
	// (AIConfigurator's moe_perf `distribution`): "" is its default, power_law_1.2, which the
	// embedded tables price; balanced and power_law_1.01 are ablations (docs/validation.md, issue 19), and
	// so is narrow_independent, derived from the power_law_1.2 and balanced rows
	// (experts_touched.go).
	Distribution string
	// SmallStepsVersion, when set, is the collection whose rows price steps of at most
	// sglangCompiledReduceTokens tokens (sglangmoereduce.go).
	SmallStepsVersion string
}

// MoEDistributions are the token distributions AIConfigurator measures experts under, the
// default first, and narrow_independent, derived from two of them.
func MoEDistributions() []string {
	return []string{moeDistribution, "power_law_1.01", "balanced", NarrowIndependent}
}

// MoEShape is an expert layer's shape as AIConfigurator's moe_perf rows key it.
type MoEShape struct{ Hidden, Inter, Experts, TopK int }

// ParseMoEShape reads "hidden,inter,experts,topk".
func ParseMoEShape(s string) (MoEShape, error) {
	bad := fmt.Errorf("moe shape %q: want hidden,inter,experts,topk (positive, topk ≤ experts)", s)
	f := strings.Split(s, ",")
	if len(f) != 4 { // Sscanf would take the first four of "a,b,c,d,e" and drop the rest
		return MoEShape{}, bad
	}
	var v [4]int
	for i, x := range f {
		n, err := strconv.Atoi(x)
		if err != nil || n <= 0 {
			return MoEShape{}, bad
		}
		v[i] = n
	}
	m := MoEShape{Hidden: v[0], Inter: v[1], Experts: v[2], TopK: v[3]}
	if m.TopK > m.Experts {
		return MoEShape{}, bad
	}
	return m, nil
}

// The expert kernel vLLM runs for a block-FP8 checkpoint on Blackwell is FlashInfer's TRT-LLM
// block-scale MoE: vLLM's FP8 MoE oracle tries FLASHINFER_TRTLLM first, and the InferenceX
// script of the measured rows (bddbf403) no longer disables FlashInfer MoE. AIConfigurator
// measures that kernel only with its vLLM 0.24 collector, which builds the layer through vLLM's
// own backend selection and records the class it picked; its vLLM 0.19 table holds only Triton
// fused_moe rows (kernel_source vllm_fused_moe), which vLLM does not select for this checkpoint.
const trtllmMoEKernel = "vllm_fp8moe_flashinfer_trtllm_trtllmfp8expertsmonolithic"

// DefaultImportOptions derives the seed's tables: MiniMax-M2.5 on B200 under vLLM 0.19.0
// in the TEP layout (attention TP 4, experts EP 4: the seed), the TP layout (experts TP 4) and
// their two-GPU counterparts (the layouts the published benchmarks also ran).
// The checkpoint is block-FP8 (weight_block_size [128, 128]), so its projections run vLLM's
// block-scaled linear kernels (AIConfigurator's fp8_block rows, measured through vLLM's own
// linear layer) and its experts FlashInfer's TRT-LLM block-scale MoE (the 0.24.0 rows).
func DefaultImportOptions() ImportOptions {
	return ImportOptions{
		Model: "MiniMaxAI/MiniMax-M2.5", HardwareSKU: "b200_sxm", Backend: BackendVLLM, BackendVersion: "0.19.0",
		Layouts: layouts("4,1,4", "4,4,1", "2,1,2", "2,2,1"),
	}
}

// DynosimImportOptions derives the tables of the dynosim reference: the operators
// AIConfigurator's own vLLM 0.19.0 model prices for this checkpoint (ai-dynamo/aiconfigurator
// aic-core sdk/models: fp8_block projections for a checkpoint with weight_block_size; the
// experts from its vLLM 0.19.0 moe table, whose only kernel is Triton fused_moe; the router
// gate as a BF16 GEMM — blocks/moe.py emits "router_gemm" with GEMMQuantMode.bfloat16 —
// whatever VLLM_FLOAT32_MATMUL_PRECISION says).
func DynosimImportOptions() ImportOptions {
	o := DefaultImportOptions()
	o.TimingReference = ReferenceDynosim
	o.MoE = MoEKernel{Version: "0.19.0", Source: tritonMoEKernel, Quant: "fp8_block"}
	return o
}

// tritonMoEKernel is the kernel_source of Triton fused_moe rows.
const tritonMoEKernel = "vllm_fused_moe"

// EmbeddedImports is everything the binary embeds, under vLLM 0.19.0: the models, GPUs,
// precisions and layouts of AIConfigurator's measured vLLM rows whose architecture the
// importer prices, plus each model's checkpoint precision for replays. The H200 runs measured
// on vLLM 0.16 and 0.18 (MiniMax-M2.5, gpt-oss-120b) are priced on H200's 0.18.0 tables too,
// the nearest version AIConfigurator measured; no other GPU has tables between 0.14 and 0.19.
func EmbeddedImports() []ImportOptions {
	one := func(model, sku, quant, gemm string, moe MoEKernel, l ...string) ImportOptions {
		return ImportOptions{Model: model, HardwareSKU: sku, Backend: BackendVLLM, BackendVersion: "0.19.0",
			Quantization: quant, GEMMQuant: gemm, MoE: moe, Layouts: layouts(l...)}
	}
	// NVIDIA's NVFP4 MiniMax checkpoint keeps attention in BF16 (hf_quant_config.json
	// excludes self_attn) and stores the experts in NVFP4.
	fp4MoE := MoEKernel{Source: "vllm_flashinfer_trtllm_moe_fp4", Quant: "nvfp4"}
	const minimax, llama70, qwen235 = "MiniMaxAI/MiniMax-M2.5", "meta-llama/Llama-3.1-70B", "Qwen/Qwen3-235B-A22B-FP8"
	const kimi, kimiFP4 = "moonshotai/Kimi-K2.5", "nvidia/Kimi-K2.5-NVFP4"
	return append([]ImportOptions{
		DefaultImportOptions(),
		DynosimImportOptions(),
		one(minimax, "b200_sxm", "nvfp4", "bfloat16", fp4MoE, "1,1,1", "2,1,2", "2,2,1", "4,1,4", "4,4,1", "8,8,1"),
		one(minimax, "b300_sxm", "", "", MoEKernel{}, "1,1,1", "2,1,2", "2,2,1", "4,1,4", "4,4,1"),
		one(minimax, "b300_sxm", "nvfp4", "bfloat16", fp4MoE, "1,1,1", "2,1,2", "2,2,1", "4,1,4", "4,4,1", "8,8,1"),
		one(minimax, "h100_sxm", "", "", MoEKernel{}, "4,1,4"),
		h200Attention(one(minimax, "h200_sxm", "", "", MoEKernel{}, "4,1,4", "4,4,1")),
		// Qwen3-235B also at one GPU: the rank of its attention-data-parallel runs (attentiondp.go).
		h200Attention(one(qwen235, "h200_sxm", "", "", MoEKernel{}, "2,1,2", "2,2,1", "4,1,4", "4,4,1", "1,1,1")),
		// and on H100, the pools of its disaggregated gap-analysis row (silicon/disagg.go): a
		// prefill worker of four one-GPU attention ranks whose experts vLLM splits by tensor
		// parallelism over all four GPUs (its rank's table and its experts' width), and TP4
		// decode workers. The other row's decode worker (attention_dp 8) has no moe_tp 8
		// expert rows on H100 in any vLLM version.
		one(qwen235, "h100_sxm", "", "", MoEKernel{}, "1,1,1", "4,4,1"),
		one("Qwen/Qwen3-32B", "h100_sxm", "", "", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1"),
		// vLLM's FP8 quantisation of it: the disaggregated gap-analysis row (prefill TP1 × 8,
		// decode TP4 × 2; silicon/disagg.go).
		one("Qwen/Qwen3-32B", "h100_sxm", "fp8", "fp8", MoEKernel{}, "1,1,1", "4,4,1"),
		// DynoSim's disaggregated example (docs/disagg.md): prefill TP4, decode TP1 on H200.
		h200Attention(one("Qwen/Qwen3-32B", "h200_sxm", "", "", MoEKernel{}, "1,1,1", "4,4,1")),
		// and as the mocker that published it prices it (timing_reference dynosim).
		dynosim(h200Attention(one("Qwen/Qwen3-32B", "h200_sxm", "", "", MoEKernel{}, "1,1,1", "4,4,1"))),
		// gpt-oss's MXFP4 checkpoint (its attention sinks are not priced). B200's 0.19 tables
		// do not measure its head_dim 64 sliding-window attention: the 0.24 ones, the nearest
		// that do, price it there.
		h200Attention(one("openai/gpt-oss-120b", "h200_sxm", "", "", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1")),
		one("openai/gpt-oss-120b", "h100_sxm", "", "", MoEKernel{}, "2,2,1", "4,4,1", "8,8,1"),
		withAttention("0.24.0", one("openai/gpt-oss-120b", "b200_sxm", "", "", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1")),
		atVersion("0.18.0", one(minimax, "h200_sxm", "", "", MoEKernel{}, "4,1,4", "4,4,1")),
		atVersion("0.18.0", one("openai/gpt-oss-120b", "h200_sxm", "", "", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1")),
		h200Attention(one("nvidia/Llama-3.1-8B-Instruct-FP8", "h200_sxm", "", "fp8", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1")),
		h200Attention(one(llama70, "h200_sxm", "", "", MoEKernel{}, "4,4,1", "8,8,1")),
		h200Attention(one(llama70, "h200_sxm", "fp8", "fp8", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1")),
		one(llama70, "h100_sxm", "fp8", "fp8", MoEKernel{}, "2,2,1", "4,4,1", "8,8,1"),
		one(llama70, "b200_sxm", "fp8", "fp8", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1"),
		one(llama70, "b200_sxm", "nvfp4", "nvfp4", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1"),
		// Kimi-K2.5 (DeepSeek-V3's architecture: multi-head latent attention, one leading
		// dense layer, a shared expert): Moonshot's INT4 checkpoint (INT4 experts, the rest
		// BF16) and NVIDIA's NVFP4 one (attention BF16, the rest NVFP4).
		one(kimi, "h200_sxm", "", "", MoEKernel{}, "8,8,1"),
		one(kimi, "b200_sxm", "", "", MoEKernel{}, "8,8,1"),
		fromCheckpoint(kimiFP4, one(kimi, "b200_sxm", "nvfp4", "", MoEKernel{}, "4,1,4", "4,4,1", "8,8,1")),
		fromCheckpoint(kimiFP4, one(kimi, "b300_sxm", "nvfp4", "", MoEKernel{}, "4,1,4", "4,4,1", "8,8,1")),
		// DeepSeek-V3 itself (block FP8, 128 heads, three leading dense layers), on 8 GPUs.
		one("deepseek-ai/DeepSeek-V3", "h200_sxm", "", "", MoEKernel{}, "8,8,1", "8,1,8"),
		one("deepseek-ai/DeepSeek-V3", "b200_sxm", "", "", MoEKernel{}, "8,8,1", "8,1,8"),
	}, append(backendImports(), hybridImports()...)...)
}

// atVersion derives o from another vLLM version's tables (the experts still from their
// kernel's version).
func atVersion(version string, o ImportOptions) ImportOptions {
	o.BackendVersion = version
	return o
}

// h200Attention prices an H200 table's attention from the 0.18.0 rows: the 0.19.0 context
// attention rows are not physical measurements (checkContextAttention: up to 98 PFLOP/s at
// isl 16,384 against the H200's 989 TFLOP/s), and 0.18.0 is the nearest version whose rows are.
func h200Attention(o ImportOptions) ImportOptions { return withAttention("0.18.0", o) }

// dynosim derives o for the dynosim timing reference (AIConfigurator's own operator choice).
func dynosim(o ImportOptions) ImportOptions {
	o.TimingReference = ReferenceDynosim
	return o
}

// fromCheckpoint serves o's model from another checkpoint's config.json (its quantisation).
func fromCheckpoint(checkpoint string, o ImportOptions) ImportOptions {
	o.Checkpoint = checkpoint
	return o
}

// withAttention prices o's attention from another version's rows.
func withAttention(version string, o ImportOptions) ImportOptions {
	o.AttentionVersion = version
	return o
}

// layouts reads "tp,moe_tp,moe_ep" triples (attention_dp 1).
func layouts(specs ...string) []Layout {
	var out []Layout
	for _, s := range specs {
		l, err := ParseLayout(s)
		if err != nil {
			panic(err) // a literal above: a build defect, caught by TestEmbeddedImports
		}
		out = append(out, l)
	}
	return out
}

// ParseLayout reads "tp,moe_tp,moe_ep" (attention_dp 1), as model import's --layout takes it.
func ParseLayout(s string) (Layout, error) {
	l := Layout{AttentionDP: 1}
	if _, err := fmt.Sscanf(s, "%d,%d,%d", &l.TP, &l.MoETP, &l.MoEEP); err != nil || l.TP < 1 || l.MoETP < 1 || l.MoEEP < 1 {
		return Layout{}, fmt.Errorf("model import: layout %q: want tp,moe_tp,moe_ep (e.g. 4,1,4)", s)
	}
	return l, nil
}

// configAliases maps a Hugging Face id to the one AIConfigurator names its config by: Meta's
// Llama 3.1 repositories were renamed from Meta-Llama-3.1-* to Llama-3.1-*, and NVIDIA's FP8
// Llama 3.1 8B is Meta's architecture with its FP8 weights (import it with --gemm-quant fp8).
var configAliases = map[string]string{
	"meta-llama/Llama-3.1-8B":          "meta-llama/Meta-Llama-3.1-8B",
	"meta-llama/Llama-3.1-70B":         "meta-llama/Meta-Llama-3.1-70B",
	"meta-llama/Llama-3.1-405B":        "meta-llama/Meta-Llama-3.1-405B",
	"nvidia/Llama-3.1-8B-Instruct-FP8": "meta-llama/Meta-Llama-3.1-8B",
	"meta-llama/Llama-3.1-8B-Instruct": "meta-llama/Meta-Llama-3.1-8B",
}

// configFile is the config.json of a model under aicDir: <org>--<name>_config.json at its top
// or in model_configs/ (AIConfigurator's layout), by the model's id or its alias.
func configFile(aicDir, model string) string {
	name := strings.ReplaceAll(cmp.Or(configAliases[model], model), "/", "--") + "_config.json"
	for _, rel := range []string{name, filepath.Join("model_configs", name)} {
		if _, err := os.Stat(filepath.Join(aicDir, rel)); err == nil {
			return rel
		}
	}
	return filepath.Join("model_configs", name)
}

// defaultMoEKernel is the fused-expert kernel vLLM selects for a quantisation on a GPU, as its
// MoE backend oracles do: FlashInfer's TRT-LLM block-scale MoE for block-FP8 on Blackwell (see
// trtllmMoEKernel; measured only in the 0.24.0 data) and its TRT-LLM FP4 MoE for NVFP4, the
// Triton fused_moe otherwise, and the MXFP4 MoE for MXFP4 experts.
func defaultMoEKernel(sku, version, quant string) (MoEKernel, error) {
	blackwell := strings.HasPrefix(sku, "b") || strings.HasPrefix(sku, "gb")
	switch {
	case quant == "fp8_block" && blackwell:
		return MoEKernel{Version: "0.24.0", Source: trtllmMoEKernel, Quant: quant}, nil
	case quant == "nvfp4" && blackwell:
		return MoEKernel{Source: "vllm_flashinfer_trtllm_moe_fp4", Quant: quant}, nil
	case quant == "w4a16_mxfp4" && strings.HasPrefix(sku, "h"):
		// vLLM runs gpt-oss's MXFP4 experts on Hopper with OpenAI's Triton kernels, which only
		// the 0.24 collector measures across tensor-parallel expert layouts (the 0.19 tables'
		// vllm_mxfp4_moe rows are expert-parallel only).
		return MoEKernel{Version: "0.24.0", Source: "vllm_gptossmxfp4moe_triton_oaitritonmxfp4expertsmonolithic", Quant: quant}, nil
	case quant == "w4a16_mxfp4" && blackwell:
		// On Blackwell vLLM runs them with FlashInfer's TRT-LLM MXFP4 × BF16 MoE, measured
		// across tensor-parallel expert layouts only by the 0.24 collector.
		return MoEKernel{Version: "0.24.0", Source: "vllm_gptossmxfp4moe_flashinfer_trtllm_mxfp4_bf16_trtllmmxfp4expertsmonolithic", Quant: quant}, nil
	case quant == "int4_wo":
		// INT4 weight-only experts (compressed-tensors W4A16, Kimi-K2): vLLM selects
		// CompressedTensorsWNA16MarlinMoEMethod with Marlin experts on Hopper and Blackwell,
		// which AIConfigurator's 0.24 collector measures through vLLM's own layer (and records);
		// its 0.19 table's vllm_marlin_int4_moe rows call a Marlin kernel directly, 2-3× slower
		// at decode batches than the layer vLLM builds (docs/validation.md: the ablation).
		return MoEKernel{Version: "0.24.0", Source: "vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts", Quant: quant}, nil
	case quant == "fp8_block" || quant == "fp8" || quant == "bfloat16":
		return MoEKernel{Source: "vllm_fused_moe", Quant: quant}, nil
	}
	return MoEKernel{}, fmt.Errorf("model import: no expert kernel known for %s experts on %s under vLLM %s: pass --moe-kernel, --moe-quant and --moe-version", quant, sku, version)
}

// fp32PeakTFLOPS gives the dense FP32 (CUDA-core) and TF32 (tensor-core) peaks of the SKUs
// whose system files lack them: B200 (HGX, 1,000 W) 80 and 1,100 TFLOPS (2.2 PFLOPS with
// sparsity), from NVIDIA's Blackwell datasheet, the source b200_sxm.yaml cites for its figures.
// B300 (HGX) 75 and 1,125 TFLOPS (600 TFLOPS FP32 and 18 PFLOPS sparse TF32 per 8 GPUs, HGX
// B300 datasheet); H100 and H200 SXM 67 and 494.5 TFLOPS (989 with sparsity), from NVIDIA's
// H100/H200 datasheets.
func fp32PeakTFLOPS(sku string) (fp32, tf32 float64, ok bool) {
	switch sku {
	case "b200_sxm":
		return 80, 1100, true
	case "b300_sxm":
		return 75, 1125, true
	case "h100_sxm", "h200_sxm":
		return 67, 494.5, true
	}
	return 0, 0, false
}

// Axis extents of the derived grids (octaves above 1).
const (
	tokenOctaves      = 15 // step tokens 1..32768
	seqOctaves        = 11 // sequences per step 1..2048
	chunkOctaves      = 9  // prefill chunks per step 1..512
	equivLenOctaves   = 17 // equivalent causal length 1..131072
	decodeOctaves     = 10 // decoding requests 1..1024
	decodeCtxOctaves  = 18 // decode context 1..262144
	moeDistribution   = "power_law_1.2"
	moePowerLawAlpha  = 1.2 // moeDistribution's exponent, for narrow_independent's sampler
	allreduceMode     = "vllm_graph"
	allreduceEager    = "vllm_eager" // the same all-reduce launched without CUDA graphs
	unquantGEMMDtype  = "bfloat16"
	attentionDtype    = "bfloat16"
	allreduceElemType = "bfloat16"
	allreduceElemSize = 2 // bytes of allreduceElemType
)

// Import derives one Table per layout from AIConfigurator's operator tables under aicDir
// (the directory holding <sku>.yaml, <org>--<model>_config.json and <sku>/{gemm,moe,attention,comm}).
func Import(aicDir string, o ImportOptions) ([]*Table, error) {
	var common []Source
	cfgRel := configFile(aicDir, cmp.Or(o.Checkpoint, o.Model))
	cfgBytes, err := digestFile(aicDir, cfgRel, &common)
	if err != nil {
		return nil, err
	}
	llm, err := parseLLMSpec(cfgRel, cfgBytes)
	if err != nil {
		return nil, err
	}
	// A ModelOpt checkpoint may keep its quantisation beside config.json (NVIDIA's NVFP4
	// DeepSeek-V3.1): read only where config.json names none.
	hfRel := strings.TrimSuffix(cfgRel, "_config.json") + "_hf_quant_config.json"
	if _, statErr := os.Stat(filepath.Join(aicDir, hfRel)); statErr == nil && llm.WeightQuant == unquantGEMMDtype && llm.ExpertQuant == "" {
		b, err := digestFile(aicDir, hfRel, &common)
		if err != nil {
			return nil, err
		}
		q, err := parseHFQuantConfig(hfRel, b)
		if err != nil {
			return nil, err
		}
		if llm, err = parseLLMSpecWith(cfgRel, cfgBytes, q); err != nil {
			return nil, err
		}
	}
	if k := o.QKNormKernels; k != "" && k != QKNormAIConfigurator && k != QKNormVLLM {
		return nil, fmt.Errorf("model import: QK-norm kernels %q: want %s or %s", k, QKNormAIConfigurator, QKNormVLLM)
	}
	if d := o.MoE.Distribution; d != "" && !slices.Contains(MoEDistributions(), d) {
		return nil, fmt.Errorf("model import: MoE token distribution %q: want one of %s", d, strings.Join(MoEDistributions(), ", "))
	}
	gemmQuant := cmp.Or(o.GEMMQuant, llm.WeightQuant)
	if gemmQuant == "fp8_block" && llm.WeightBlock == 0 {
		// Served block-FP8 from a checkpoint that is not (Qwen3.5's FP8 release, whose config
		// AIConfigurator does not hold): the 128 × 128 tiles every fp8_block row is measured with.
		llm.WeightBlock = fp8BlockEdge
	}
	mk := o.MoE
	if llm.MoE() && mk.Source == "" {
		if mk, err = backendMoEKernel(o.Backend, o.MoEBackend, o.HardwareSKU, o.BackendVersion, cmp.Or(llm.ExpertQuant, gemmQuant), llm.MLA()); err != nil {
			return nil, err
		}
		mk.Distribution = o.MoE.Distribution
	}
	sysRel := o.HardwareSKU + ".yaml"
	sysBytes, err := digestFile(aicDir, sysRel, &common)
	if err != nil {
		return nil, err
	}
	gpu, err := parseGPUSpec(sysRel, sysBytes)
	if err != nil {
		return nil, err
	}
	dir := func(op string) string { return filepath.Join(o.HardwareSKU, op, string(o.Backend), o.BackendVersion) }
	gemmRel := filepath.Join(dir("gemm"), "gemm_perf.parquet")
	gemms, err := readParquet[gemmRow](aicDir, gemmRel, &common)
	if err != nil {
		return nil, err
	}
	fp8, err := readStaticFP8(aicDir, o.HardwareSKU, o.Backend, o.BackendVersion, gemmQuant, gpu, &common)
	if err != nil {
		return nil, err
	}
	var moes []moeRow
	moeRel := filepath.Join(o.HardwareSKU, "moe", string(cmp.Or(mk.Backend, o.Backend)), cmp.Or(mk.Version, o.BackendVersion), "moe_perf.parquet")
	if llm.MoE() {
		if moes, err = readParquet[moeRow](aicDir, moeRel, &common); err != nil {
			return nil, err
		}
		if v := mk.SmallStepsVersion; v != "" {
			ownRel := filepath.Join(o.HardwareSKU, "moe", string(cmp.Or(mk.Backend, o.Backend)), v, "moe_perf.parquet")
			if collectorTopKCopies(ownRel, mk.Source, 1) != collectorTopKCopies(moeRel, mk.Source, 1) {
				return nil, fmt.Errorf("model import: %s and %s differ in the collector's routing copies: one table cannot hold both", moeRel, ownRel)
			}
			own, err := readParquet[moeRow](aicDir, ownRel, &common)
			if err != nil {
				return nil, err
			}
			moes = sglangCompiledReduceRows(moes, own, mk)
		}
	}
	fp32, tf32 := o.FP32TFLOPS, o.TF32TFLOPS
	if llm.FP32RouterGate && (fp32 == 0 || tf32 == 0) {
		f, t, ok := fp32PeakTFLOPS(o.HardwareSKU)
		if !ok {
			return nil, fmt.Errorf("model import: no FP32/TF32 peak known for %s (its router gate runs in FP32): pass --fp32-tflops and --tf32-tflops", o.HardwareSKU)
		}
		fp32, tf32 = cmp.Or(fp32, f), cmp.Or(tf32, t)
	}
	// Attention: the attention kernels' tables, or for multi-head latent attention the
	// measured MLA modules.
	var ctxs, gens []attentionRow
	var mla mlaInputs
	attnDir := filepath.Join(o.HardwareSKU, "attention", string(o.Backend), cmp.Or(o.AttentionVersion, o.BackendVersion))
	ctxRel := filepath.Join(attnDir, "context_attention_perf.parquet")
	genRel := filepath.Join(attnDir, "generation_attention_perf.parquet")
	var mlaWords, vRead string
	if llm.DSA() && o.Backend != BackendSGLang {
		// The cache is sized as SGLang's NSA pool lays it out (dsaKVBytesPerToken).
		return nil, fmt.Errorf("model import: %s: DeepSeek sparse attention is priced under sglang only (its NSA KV pool), not %s", cfgRel, o.Backend.OrDefault())
	}
	if llm.DSA() {
		v := cmp.Or(o.AttentionVersion, o.BackendVersion)
		if mla.dsaArch, err = dsaArchitecture(cfgRel, cfgBytes); err != nil {
			return nil, err
		}
		if mla.dsaCtxs, mla.dsaGens, ctxRel, genRel, err = readDSATables(aicDir, o.HardwareSKU, o.Backend, v, &common); err != nil {
			return nil, err
		}
		mlaWords = fmt.Sprintf("the %s %s DSA module collection (sparse_attention: projections, indexer, top-k and sparse MLA), composed as AIConfigurator's DeepSeekV32Model does", o.Backend, v)
	} else if llm.MLA() && o.Backend.OrDefault() != BackendVLLM {
		v := cmp.Or(o.AttentionVersion, o.BackendVersion)
		if mla, ctxRel, genRel, err = readMLAOps(aicDir, o.HardwareSKU, o.Backend, v, &common); err != nil {
			return nil, err
		}
		mlaWords = fmt.Sprintf("the %s %s operator collection (context and generation MLA kernels, the decode BMMs), composed as AIConfigurator's DeepSeek model does", o.Backend, v)
	} else if llm.MLA() {
		v, words, err := mlaModuleVersion(aicDir, o, &common)
		if err != nil {
			return nil, err
		}
		mlaWords = words
		attnDir = filepath.Join(o.HardwareSKU, "mla", string(o.Backend), v)
		ctxRel = filepath.Join(attnDir, "mla_context_module_perf.parquet")
		genRel = filepath.Join(attnDir, "mla_generation_module_perf.parquet")
		if mla.ctxs, err = readParquet[mlaRow](aicDir, ctxRel, &common); err != nil {
			return nil, err
		}
		if mla.gens, err = readParquet[mlaRow](aicDir, genRel, &common); err != nil {
			return nil, err
		}
	} else {
		if ctxs, err = readParquet[attentionRow](aicDir, ctxRel, &common); err != nil {
			return nil, err
		}
		if gens, err = readParquet[attentionRow](aicDir, genRel, &common); err != nil {
			return nil, err
		}
		// AIConfigurator's own reference reads the rows as they are.
		if kOnlyPool(o.Backend, cmp.Or(o.AttentionVersion, o.BackendVersion)) && o.TimingReference != ReferenceDynosim {
			if gens, err = withVRead(gens, gpu.MemBW); err != nil {
				return nil, fmt.Errorf("model import: %s: %w", genRel, err)
			}
			vRead = fmt.Sprintf("%s: measured on a K-only (CacheType.SELFKONLY) pool whose V offsets alias K's; each row plus its V bytes at gpu.mem_bw %.2f TB/s (%s)", genRel, gpu.MemBW/1e12, sysRel)
		}
	}
	arRel := filepath.Join(o.HardwareSKU, "comm", string(o.Backend), cmp.Or(o.AllReduceVersion, o.BackendVersion), "custom_allreduce_perf.parquet")
	ars, err := readParquet[allreduceRow](aicDir, arRel, &common)
	if err != nil {
		return nil, err
	}
	var lamportRows string
	if trtllmAllReduceMismeasured(o.Backend, cmp.Or(o.AllReduceVersion, o.BackendVersion), o.HardwareSKU) {
		laterRel := filepath.Join(o.HardwareSKU, "comm", string(o.Backend), trtllmLamportVersion, "custom_allreduce_perf.parquet")
		later, err := readParquet[allreduceRow](aicDir, laterRel, &common)
		if err != nil {
			return nil, err
		}
		if ars, err = withLamportRows(ars, later); err != nil {
			return nil, fmt.Errorf("model import: %s: %w", arRel, err)
		}
		lamportRows = fmt.Sprintf("%s: the 2- and 4-GPU rows below %d bytes from %s (TensorRT-LLM's AUTO runs its one- and two-shot kernels there; these rows timed another strategy)", arRel, lamportAllReduceBytes, laterRel)
	}
	gdns, gdnRel, err := readLinearAttention(aicDir, o, llm, &common)
	if err != nil {
		return nil, err
	}

	var out []*Table
	for _, l := range o.Layouts {
		if l.AttentionDP != 1 {
			return nil, fmt.Errorf("model import: layout %s: tables are derived per layout without attention data parallelism (attention_dp 1); a DEP worker is priced from the tables of its rank and of its whole width (model/attentiondp.go)", l)
		}
		if err := llm.checkLayout(l); err != nil {
			return nil, fmt.Errorf("model import: %w", err)
		}
		t := &Table{Format: tableFormat, Model: o.Model, HardwareSKU: o.HardwareSKU, Backend: o.Backend,
			BackendVersion: o.BackendVersion, Quantization: o.Quantization, GEMMQuant: gemmQuant, MoEQuant: mk.Quant, MoEKernel: mk.Source, MoEBackend: o.MoEBackend, Layout: l, LLM: llm, GPU: gpu,
			MLAModule: mlaWords, Sources: common}
		if o.TimingReference == ReferenceDynosim {
			t.TimingReference = ReferenceDynosim
		}
		if !llm.MLA() {
			if err := checkContextAttention(ctxRel, ctxs, max(1, llm.KVHeads/l.TP), llm.HeadDim, bf16PeakFLOPS(sysBytes)); err != nil {
				return nil, fmt.Errorf("model import: layout %s: %w", l, err)
			}
		}
		if err := derive(t, mk, o.QKNormKernels != QKNormAIConfigurator, gatePeaks{fp32 * 1e12, tf32 * 1e12}, gemms, fp8, moes, ctxs, gens, mla, ars, gemmRel, moeRel, ctxRel, genRel, arRel); err != nil {
			return nil, fmt.Errorf("model import: layout %s: %w", l, err)
		}
		if vRead != "" {
			t.Kernels = append(t.Kernels, vRead)
		}
		if lamportRows != "" && l.TP > 1 && l.TP <= lamportAllReduceMaxGPUs {
			t.Kernels = append(t.Kernels, lamportRows)
		}
		if llm.Hybrid() {
			if err := deriveLinear(t, gdns, gdnRel); err != nil {
				return nil, fmt.Errorf("model import: layout %s: %w", l, err)
			}
		}
		out = append(out, t)
	}
	return out, nil
}
