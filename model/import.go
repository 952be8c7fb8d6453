package model

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ImportOptions selects what Import derives.
type ImportOptions struct {
	Model          string // e.g. MiniMaxAI/MiniMax-M2.5 (config file: MiniMaxAI--MiniMax-M2.5_config.json)
	HardwareSKU    string // e.g. b200_sxm (system file b200_sxm.yaml, data under b200_sxm/)
	Backend        string // vllm
	BackendVersion string // e.g. 0.19.0
	// Quantization names a serving precision other than the checkpoint's own (e.g. fp8 for a
	// BF16 checkpoint quantised at load, nvfp4 for NVIDIA's FP4 checkpoint); "" is the
	// checkpoint's. It keys the table (Deployment.Quantization) and its file name.
	Quantization string
	GEMMQuant    string // gemm_dtype of the projection and dense MLP rows; "" = the checkpoint's
	// AttentionVersion is the backend version directory of the attention rows when they are
	// not the deployment's (a shape only a later collector measured); "" = BackendVersion.
	AttentionVersion string
	// MoE names the measured fused-expert kernel that prices the experts.
	MoE MoEKernel
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
}

// MoEKernel selects the fused-expert rows of an AIConfigurator moe_perf table.
type MoEKernel struct {
	Version string // backend version directory of the rows; "" = the deployment's
	Source  string // kernel_source of the rows
	Quant   string // moe_dtype of the rows
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
		Model: "MiniMaxAI/MiniMax-M2.5", HardwareSKU: "b200_sxm", Backend: "vllm", BackendVersion: "0.19.0",
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

// EmbeddedImports is everything the binary embeds, all under vLLM 0.19.0: the models, GPUs,
// precisions and layouts of AIConfigurator's measured vLLM rows whose architecture the
// importer prices, plus each model's checkpoint precision for replays.
func EmbeddedImports() []ImportOptions {
	one := func(model, sku, quant, gemm string, moe MoEKernel, l ...string) ImportOptions {
		return ImportOptions{Model: model, HardwareSKU: sku, Backend: "vllm", BackendVersion: "0.19.0",
			Quantization: quant, GEMMQuant: gemm, MoE: moe, Layouts: layouts(l...)}
	}
	// NVIDIA's NVFP4 MiniMax checkpoint keeps attention in BF16 (hf_quant_config.json
	// excludes self_attn) and stores the experts in NVFP4.
	fp4MoE := MoEKernel{Source: "vllm_flashinfer_trtllm_moe_fp4", Quant: "nvfp4"}
	const minimax, llama70, qwen235 = "MiniMaxAI/MiniMax-M2.5", "meta-llama/Llama-3.1-70B", "Qwen/Qwen3-235B-A22B-FP8"
	return []ImportOptions{
		DefaultImportOptions(),
		DynosimImportOptions(),
		one(minimax, "b200_sxm", "nvfp4", "bfloat16", fp4MoE, "1,1,1", "2,1,2", "2,2,1", "4,1,4", "4,4,1", "8,8,1"),
		one(minimax, "b300_sxm", "", "", MoEKernel{}, "1,1,1", "2,1,2", "2,2,1", "4,1,4", "4,4,1"),
		one(minimax, "b300_sxm", "nvfp4", "bfloat16", fp4MoE, "1,1,1", "2,1,2", "2,2,1", "4,1,4", "4,4,1", "8,8,1"),
		one(minimax, "h100_sxm", "", "", MoEKernel{}, "4,1,4"),
		one(minimax, "h200_sxm", "", "", MoEKernel{}, "4,1,4", "4,4,1"),
		one(qwen235, "h200_sxm", "", "", MoEKernel{}, "2,1,2", "2,2,1", "4,1,4", "4,4,1"),
		one("Qwen/Qwen3-32B", "h100_sxm", "", "", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1"),
		// gpt-oss's MXFP4 checkpoint (its attention sinks are not priced). B200's 0.19 tables
		// do not measure its head_dim 64 sliding-window attention: the 0.24 ones, the nearest
		// that do, price it there.
		one("openai/gpt-oss-120b", "h200_sxm", "", "", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1"),
		one("openai/gpt-oss-120b", "h100_sxm", "", "", MoEKernel{}, "2,2,1", "4,4,1", "8,8,1"),
		withAttention("0.24.0", one("openai/gpt-oss-120b", "b200_sxm", "", "", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1")),
		one("nvidia/Llama-3.1-8B-Instruct-FP8", "h200_sxm", "", "fp8", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1"),
		one(llama70, "h200_sxm", "", "", MoEKernel{}, "4,4,1", "8,8,1"),
		one(llama70, "h200_sxm", "fp8", "fp8", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1"),
		one(llama70, "h100_sxm", "fp8", "fp8", MoEKernel{}, "2,2,1", "4,4,1", "8,8,1"),
		one(llama70, "b200_sxm", "fp8", "fp8", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1"),
		one(llama70, "b200_sxm", "nvfp4", "nvfp4", MoEKernel{}, "1,1,1", "2,2,1", "4,4,1", "8,8,1"),
	}
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
	allreduceMode     = "vllm_graph"
	allreduceEager    = "vllm_eager" // the same all-reduce launched without CUDA graphs
	unquantGEMMDtype  = "bfloat16"
	attentionDtype    = "bfloat16"
	allreduceElemType = "bfloat16"
)

// Import derives one Table per layout from AIConfigurator's operator tables under aicDir
// (the directory holding <sku>.yaml, <org>--<model>_config.json and <sku>/{gemm,moe,attention,comm}).
func Import(aicDir string, o ImportOptions) ([]*Table, error) {
	var common []Source
	cfgRel := configFile(aicDir, o.Model)
	cfgBytes, err := digestFile(aicDir, cfgRel, &common)
	if err != nil {
		return nil, err
	}
	llm, err := parseLLMSpec(cfgRel, cfgBytes)
	if err != nil {
		return nil, err
	}
	gemmQuant := cmp.Or(o.GEMMQuant, llm.WeightQuant)
	mk := o.MoE
	if llm.MoE() && mk.Source == "" {
		if mk, err = defaultMoEKernel(o.HardwareSKU, o.BackendVersion, cmp.Or(llm.ExpertQuant, gemmQuant)); err != nil {
			return nil, err
		}
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
	dir := func(op string) string { return filepath.Join(o.HardwareSKU, op, o.Backend, o.BackendVersion) }
	gemmRel := filepath.Join(dir("gemm"), "gemm_perf.parquet")
	gemms, err := readParquet[gemmRow](aicDir, gemmRel, &common)
	if err != nil {
		return nil, err
	}
	var moes []moeRow
	moeRel := filepath.Join(o.HardwareSKU, "moe", o.Backend, cmp.Or(mk.Version, o.BackendVersion), "moe_perf.parquet")
	if llm.MoE() {
		if moes, err = readParquet[moeRow](aicDir, moeRel, &common); err != nil {
			return nil, err
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
	attnDir := filepath.Join(o.HardwareSKU, "attention", o.Backend, cmp.Or(o.AttentionVersion, o.BackendVersion))
	ctxRel := filepath.Join(attnDir, "context_attention_perf.parquet")
	ctxs, err := readParquet[attentionRow](aicDir, ctxRel, &common)
	if err != nil {
		return nil, err
	}
	genRel := filepath.Join(attnDir, "generation_attention_perf.parquet")
	gens, err := readParquet[attentionRow](aicDir, genRel, &common)
	if err != nil {
		return nil, err
	}
	arRel := filepath.Join(dir("comm"), "custom_allreduce_perf.parquet")
	ars, err := readParquet[allreduceRow](aicDir, arRel, &common)
	if err != nil {
		return nil, err
	}

	var out []*Table
	for _, l := range o.Layouts {
		if l.AttentionDP != 1 {
			return nil, fmt.Errorf("model import: layout %s: attention data parallelism is not modelled (only attention_dp 1)", l)
		}
		if err := llm.checkLayout(l); err != nil {
			return nil, fmt.Errorf("model import: %w", err)
		}
		t := &Table{Format: tableFormat, Model: o.Model, HardwareSKU: o.HardwareSKU, Backend: o.Backend,
			BackendVersion: o.BackendVersion, Quantization: o.Quantization, GEMMQuant: gemmQuant, MoEQuant: mk.Quant, MoEKernel: mk.Source, Layout: l, LLM: llm, GPU: gpu,
			Sources: common}
		if o.TimingReference == ReferenceDynosim {
			t.TimingReference = ReferenceDynosim
		}
		if err := derive(t, mk, gatePeaks{fp32 * 1e12, tf32 * 1e12}, gemms, moes, ctxs, gens, ars, gemmRel, moeRel, ctxRel, genRel, arRel); err != nil {
			return nil, fmt.Errorf("model import: layout %s: %w", l, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// gemmCurve is the measured latency (µs) of an m×k by k×n GEMM as a function of m. An n
// between two measured n (same k) is interpolated linearly in n, and beyond the widest held at
// its utilisation. A k the tables never measured is interpolated linearly between the nearest
// measured k (or above the largest scaled by k, holding its utilisation); note records that.
func gemmCurve(rows []gemmRow, dtype string, n, k int, note func(string)) (func(m float64) float64, error) {
	ks := map[int64]bool{}
	for _, r := range rows {
		if r.Dtype == dtype {
			ks[r.K] = true
		}
	}
	if ks[int64(k)] {
		return gemmCurveAtK(rows, dtype, n, k)
	}
	var lo, hi int64
	for x := range ks {
		if x < int64(k) && x > lo {
			lo = x
		} else if x > int64(k) && (hi == 0 || x < hi) {
			hi = x
		}
	}
	if lo == 0 {
		return nil, missing("gemm_perf", fmt.Sprintf("%s n=%d k=%d (no measured k at or below it)", dtype, n, k))
	}
	a, err := gemmCurveAtK(rows, dtype, n, int(lo))
	if err != nil {
		return nil, err
	}
	if hi == 0 {
		r := float64(k) / float64(lo)
		note(fmt.Sprintf("gemm_perf: %s n=%d k=%d extrapolated from the measured k=%d (× %.3g)", dtype, n, k, lo, r))
		return func(m float64) float64 { return a(m) * r }, nil
	}
	b, err := gemmCurveAtK(rows, dtype, n, int(hi))
	if err != nil {
		return nil, err
	}
	w := float64(int64(k)-lo) / float64(hi-lo)
	note(fmt.Sprintf("gemm_perf: %s n=%d k=%d interpolated between the measured k=%d and k=%d", dtype, n, k, lo, hi))
	return func(m float64) float64 { x := a(m); return x + (b(m)-x)*w }, nil
}

func gemmCurveAtK(rows []gemmRow, dtype string, n, k int) (func(m float64) float64, error) {
	byN := map[int64][]point{}
	for _, r := range rows {
		if r.Dtype == dtype && r.K == int64(k) {
			byN[r.N] = append(byN[r.N], point{float64(r.M), msToUS(r.Latency)})
		}
	}
	if pts, ok := byN[int64(n)]; ok {
		s := newSeries(pts)
		return func(m float64) float64 { return s.at(m, 1) }, nil
	}
	var ns []int64
	for x := range byN {
		ns = append(ns, x)
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
	i := sort.Search(len(ns), func(i int) bool { return ns[i] > int64(n) })
	if i == 0 {
		return nil, missing("gemm_perf", fmt.Sprintf("%s n=%d k=%d (measured n at this k: %v)", dtype, n, k, ns))
	}
	if i == len(ns) {
		// Above the widest measured n the measured utilisation is held, as on the other axes:
		// the work (and the weight bytes) grow as n.
		top := ns[len(ns)-1]
		s, r := newSeries(byN[top]), float64(n)/float64(top)
		return func(m float64) float64 { return s.at(m, 1) * r }, nil
	}
	lo, hi := newSeries(byN[ns[i-1]]), newSeries(byN[ns[i]])
	w := float64(int64(n)-ns[i-1]) / float64(ns[i]-ns[i-1])
	return func(m float64) float64 { a := lo.at(m, 1); return a + (hi.at(m, 1)-a)*w }, nil
}

// gatePeaks are the FLOP/s an FP32 GEMM runs at under each float32 matmul precision.
type gatePeaks struct{ fp32, tf32 float64 }

func derive(t *Table, mk MoEKernel, peaks gatePeaks, gemms []gemmRow, moes []moeRow, ctxs, gens []attentionRow,
	ars []allreduceRow, gemmRel, moeRel, ctxRel, genRel, arRel string) error {
	s, l := t.LLM, t.Layout
	note := func(what string) { t.Extrapolated = append(t.Extrapolated, what) }
	layers := float64(s.Layers)
	headsPerGPU := s.Heads / l.TP
	kvPerGPU := max(1, s.KVHeads/l.TP)
	h := s.Hidden

	qkvN := (headsPerGPU + 2*kvPerGPU) * s.HeadDim
	qkv, err := gemmCurve(gemms, t.GEMMQuant, qkvN, h, note)
	if err != nil {
		return err
	}
	proj, err := gemmCurve(gemms, t.GEMMQuant, h, headsPerGPU*s.HeadDim, note)
	if err != nil {
		return err
	}
	logits, err := gemmCurve(gemms, unquantGEMMDtype, s.Vocab/l.TP, h, note)
	if err != nil {
		return err
	}
	// The dense MLP (and a MoE model's shared experts) is column- then row-parallel over tp:
	// one gate_up GEMM of n = 2 × inter / tp and one down GEMM of k = inter / tp.
	zero := func(float64) float64 { return 0 }
	mlpCurve := func(inter int) (func(float64) float64, string, error) {
		if inter == 0 {
			return zero, "", nil
		}
		if inter%l.TP != 0 {
			return nil, "", fmt.Errorf("intermediate size %d is not divisible by tp %d", inter, l.TP)
		}
		up, err := gemmCurve(gemms, t.GEMMQuant, 2*inter/l.TP, h, note)
		if err != nil {
			return nil, "", err
		}
		down, err := gemmCurve(gemms, t.GEMMQuant, h, inter/l.TP, note)
		if err != nil {
			return nil, "", err
		}
		return func(m float64) float64 { return up(m) + down(m) },
			fmt.Sprintf("; MLP gate_up n=%d k=%d, down n=%d k=%d", 2*inter/l.TP, h, h, inter/l.TP), nil
	}
	mlp, mlpWords, err := mlpCurve(s.Inter)
	if err != nil {
		return err
	}
	shared, sharedWords, err := mlpCurve(s.SharedInter)
	if err != nil {
		return err
	}

	moe := zero
	var moeWords, gateWords string
	gate := func(float64, float64) float64 { return 0 }
	if s.MoE() {
		var moePts []point
		for _, r := range moes {
			if r.Kernel == mk.Source && r.Dtype == mk.Quant && r.Hidden == int64(h) && r.Inter == int64(s.ExpertInter) &&
				r.TopK == int64(s.TopK) && r.Experts == int64(s.Experts) && r.MoETP == int64(l.MoETP) &&
				r.MoEEP == int64(l.MoEEP) && r.Distribution == moeDistribution {
				moePts = append(moePts, point{float64(r.Tokens), msToUS(r.Latency)})
			}
		}
		if len(moePts) == 0 {
			return missing("moe_perf", fmt.Sprintf("%s %s hidden %d inter %d top-%d of %d experts moe_tp %d moe_ep %d %s",
				mk.Source, mk.Quant, h, s.ExpertInter, s.TopK, s.Experts, l.MoETP, l.MoEEP, moeDistribution))
		}
		ms := newSeries(moePts)
		moe = func(x float64) float64 { return ms.at(x, 1) }
		moeWords = fmt.Sprintf("%s: %s %s hidden %d inter %d top-%d/%d moe_tp %d moe_ep %d %s",
			moeRel, mk.Source, mk.Quant, h, s.ExpertInter, s.TopK, s.Experts, l.MoETP, l.MoEEP, moeDistribution)
		if s.FP32RouterGate && t.TimingReference != ReferenceDynosim {
			gate = func(x, flops float64) float64 { return fp32GateUS(x, s.Experts, h, flops, t.GPU) }
			gateWords = fmt.Sprintf("router gate: FP32 GEMM n=%d k=%d on its roofline (float32_matmul_precision highest: FP32 CUDA cores, %.0f TFLOPS; high: TF32 tensor cores, %.0f TFLOPS; mem_bw × mem_bw_empirical_scaling_factor) + mem_empirical_constant_latency, plus the FP32 copy of its input",
				s.Experts, h, peaks.fp32/1e12, peaks.tf32/1e12)
		} else {
			// A replicated BF16 linear layer, whatever the float32 matmul precision (and the
			// dynosim reference's price of an FP32 gate: AIConfigurator's router_gemm is BF16).
			g, err := gemmCurve(gemms, unquantGEMMDtype, s.Experts, h, note)
			if err != nil {
				return err
			}
			gate = func(x, _ float64) float64 { return g(x) }
			gateWords = fmt.Sprintf("%s: router gate %s GEMM n=%d k=%d", gemmRel, unquantGEMMDtype, s.Experts, h)
			if s.FP32RouterGate {
				gateWords = fmt.Sprintf("router gate: %s: %s GEMM n=%d k=%d, as AIConfigurator prices it (either float32_matmul_precision)", gemmRel, unquantGEMMDtype, s.Experts, h)
			}
		}
	}

	// vLLM all-reduces the attention output and the MoE output of every layer across the TP group.
	// Steps above vLLM's CUDA-graph capture size launch them eagerly (cudagraph.go); the
	// dynosim reference prices every step with the graph rows, as AIConfigurator does.
	allreduce := func(float64) float64 { return 0 }
	var allreduceEagerly func(float64) float64
	if l.TP > 1 {
		measured := func(mode string) (series, error) {
			var pts []point
			for _, r := range ars {
				if r.Dtype == allreduceElemType && r.GPUs == int64(l.TP) && r.Mode == mode {
					pts = append(pts, point{float64(r.Size), msToUS(r.Latency)})
				}
			}
			if len(pts) == 0 {
				return series{}, missing("custom_allreduce_perf", fmt.Sprintf("%s %d GPUs %s", allreduceElemType, l.TP, mode))
			}
			return newSeries(pts), nil
		}
		ar, err := measured(allreduceMode)
		if err != nil {
			return err
		}
		allreduce = func(tokens float64) float64 { return 2 * ar.at(tokens*float64(h), 1) }
		if t.TimingReference != ReferenceDynosim {
			are, err := measured(allreduceEager)
			if err != nil {
				return err
			}
			allreduceEagerly = func(tokens float64) float64 { return 2 * are.at(tokens*float64(h), 1) }
		}
	}

	// Memory-bound element-wise work has no table; price it as AIConfigurator does from the
	// system file: bytes / (bandwidth × empirical scaling) + a constant launch latency.
	memOp := func(bytes float64) float64 {
		return bytes/(t.GPU.MemBW*t.GPU.MemBWScaling)*1e6 + t.GPU.MemConstantUS
	}
	act := float64(s.ActivationBytes)
	qBytes := float64(headsPerGPU*s.HeadDim) * act
	kBytes := float64(kvPerGPU*s.HeadDim) * act
	elementwise := func(tokens float64) float64 {
		addNorm := memOp(tokens * float64(4*h) * act) // residual add + RMSNorm: read 2h, write 2h
		// Around attention, AIConfigurator's op list adds RoPE on q and k, the KV-cache write
		// and, where the architecture has it, QK-norm (two passes over q and k, each an
		// element-wise op and a norm), with a 1.1 correction; vLLM runs these kernels in every
		// step, prefill or decode.
		q, k := tokens*qBytes, tokens*kBytes
		aroundAttn := 2*memOp(q+k) + 2*memOp(k)
		if s.QKNorm {
			aroundAttn += 2 * (2*memOp(q) + 2*memOp(k))
		}
		aroundAttn *= 1.1
		embed := memOp(tokens * float64(h) * act)
		return layers*(2*addNorm+aroundAttn) + embed
	}

	nt := axisNodes(tokenOctaves)
	t.GEMM = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 {
		return layers * (qkv(x) + proj(x) + mlp(x) + shared(x))
	}))}
	for _, g := range []struct {
		precision string
		flops     float64
	}{{PrecisionHighest, peaks.fp32}, {PrecisionHigh, peaks.tf32}} {
		t.RouterGate = append(t.RouterGate, RouterGate{Float32MatmulPrecision: g.precision, Grid: Grid{Cols: nt,
			Values: round(sample(nt, func(x float64) float64 { return layers * gate(x, g.flops) }))}})
	}
	t.MoE = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return layers * moe(x) }))}
	t.Collective = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return layers * allreduce(x) }))}
	if allreduceEagerly != nil {
		t.CollectiveEager = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return layers * allreduceEagerly(x) }))}
	}
	t.Elementwise = Grid{Cols: nt, Values: round(sample(nt, elementwise))}
	ns := axisNodes(seqOctaves)
	t.Logits = Grid{Cols: ns, Values: round(sample(ns, logits))}

	// Attention runs in BF16 whatever the KV-cache dtype (vLLM dequantises an FP8 cache in the
	// kernel), so each KV dtype has its own measured rows with attn_dtype bfloat16.
	attnAt := func(rows []attentionRow, kvDtype string, stepIsContext bool, heads, window int) surfaceSeries {
		pts := map[float64][]point{}
		for _, r := range rows {
			if r.Heads == int64(heads) && r.KVHeads == int64(kvPerGPU) && r.HeadDim == int64(s.HeadDim) &&
				r.Beam == 1 && r.Window == int64(window) && r.AttnDtype == attentionDtype && r.KVDtype == kvDtype {
				length := r.ISL
				if !stepIsContext {
					length = r.ISL + r.Step // generation rows: context = prompt + generated so far
				}
				pts[float64(r.Batch)] = append(pts[float64(r.Batch)], point{float64(length), msToUS(r.Latency)})
			}
		}
		return newSurfaceSeries(pts)
	}
	// attn prices the layer's attention at its query heads per GPU. A head count the tables
	// never measured (with this many KV heads) is interpolated linearly between the nearest
	// measured counts, or above the largest scaled by heads (the work per head is the same);
	// either is stated in t.Extrapolated.
	attn := func(rows []attentionRow, table, kvDtype string, stepIsContext bool, window int) (func(b, n, pow float64) float64, error) {
		at := func(heads int) surfaceSeries { return attnAt(rows, kvDtype, stepIsContext, heads, window) }
		if exact := at(headsPerGPU); len(exact.rows) > 0 {
			return exact.at, nil
		}
		lo, hi := 0, 0
		for _, r := range rows {
			if r.KVHeads == int64(kvPerGPU) && r.HeadDim == int64(s.HeadDim) && r.AttnDtype == attentionDtype && r.KVDtype == kvDtype && r.Window == int64(window) {
				if n := int(r.Heads); n < headsPerGPU && n > lo {
					lo = n
				} else if n > headsPerGPU && (hi == 0 || n < hi) {
					hi = n
				}
			}
		}
		what := fmt.Sprintf("%d heads, %d KV heads, head_dim %d, %s attention, %s KV cache", headsPerGPU, kvPerGPU, s.HeadDim, attentionDtype, kvDtype)
		if window > 0 {
			what += fmt.Sprintf(", window %d", window)
		}
		switch {
		case lo > 0 && hi > 0:
			a, b := at(lo), at(hi)
			w := float64(headsPerGPU-lo) / float64(hi-lo)
			note(fmt.Sprintf("%s: %s interpolated between the measured %d and %d heads", table, what, lo, hi))
			return func(x, n, pow float64) float64 { u := a.at(x, n, pow); return u + (b.at(x, n, pow)-u)*w }, nil
		case lo > 0:
			a, r := at(lo), float64(headsPerGPU)/float64(lo)
			note(fmt.Sprintf("%s: %s extrapolated from the measured %d heads (× %g)", table, what, lo, r))
			return func(x, n, pow float64) float64 { return a.at(x, n, pow) * r }, nil
		}
		return nil, missing(table, what)
	}
	cr, cc := axisNodes(chunkOctaves), axisNodes(equivLenOctaves)
	dr, dc := axisNodes(decodeOctaves), axisNodes(decodeCtxOctaves)
	for _, kv := range []struct{ dtype, aic string }{{KVBF16, attentionDtype}, {KVFP8, "fp8"}} {
		// Full-attention layers, plus the sliding-window layers from the rows measured with
		// that window (each layer one call).
		full, sliding := layers-float64(s.SlidingLayers), float64(s.SlidingLayers)
		ctxFull, err := attn(ctxs, "context_attention_perf", kv.aic, true, 0)
		if err != nil {
			return err
		}
		genFull, err := attn(gens, "generation_attention_perf", kv.aic, false, 0)
		if err != nil {
			return err
		}
		ctx, gen := ctxFull, genFull
		if s.SlidingLayers > 0 {
			ctxWin, err := attn(ctxs, "context_attention_perf", kv.aic, true, s.SlidingWindow)
			if err != nil {
				return err
			}
			genWin, err := attn(gens, "generation_attention_perf", kv.aic, false, s.SlidingWindow)
			if err != nil {
				return err
			}
			ctx = func(b, n, pow float64) float64 { return (full*ctxFull(b, n, pow) + sliding*ctxWin(b, n, pow)) / layers }
			gen = func(b, n, pow float64) float64 { return (full*genFull(b, n, pow) + sliding*genWin(b, n, pow)) / layers }
		}
		t.Attention = append(t.Attention, Attention{
			KVCacheDtype: kv.dtype,
			Context: Grid{Rows: cr, Cols: cc, Values: round(sample2(cr, cc, func(b, n float64) float64 {
				return layers * ctx(b, n, 2)
			}))},
			Decode: Grid{Rows: dr, Cols: dc, Values: round(sample2(dr, dc, func(b, n float64) float64 {
				return layers * gen(b, n, 1)
			}))},
		})
	}
	// An FP8 cache moves half the bytes of a BF16 one through the same kernels, so it is never
	// slower; where its measured point lies above the BF16 one (up to 20 % at a few short,
	// launch-bound shapes) that is measurement noise, levelled to the BF16 price.
	bf16, fp8 := &t.Attention[0], &t.Attention[1]
	for _, g := range []struct{ lo, hi []float64 }{{fp8.Context.Values, bf16.Context.Values}, {fp8.Decode.Values, bf16.Decode.Values}} {
		for i := range g.lo {
			g.lo[i] = min(g.lo[i], g.hi[i])
		}
	}
	sort.Slice(t.Attention, func(i, j int) bool { return t.Attention[i].KVCacheDtype < t.Attention[j].KVCacheDtype })

	t.Kernels = []string{
		fmt.Sprintf("%s: %s GEMM qkv n=%d k=%d, proj n=%d k=%d%s%s; %s logits n=%d k=%d (n interpolated)",
			gemmRel, t.GEMMQuant, qkvN, h, h, headsPerGPU*s.HeadDim, mlpWords, strings.Replace(sharedWords, "MLP", "shared experts", 1),
			unquantGEMMDtype, s.Vocab/l.TP, h),
	}
	if s.MoE() {
		t.Kernels = append(t.Kernels, gateWords, moeWords)
	}
	qkNorm := ""
	if s.QKNorm {
		qkNorm = " QK-norm,"
	}
	t.Kernels = append(t.Kernels,
		fmt.Sprintf("%s, %s: %d heads / %d KV heads per GPU, head_dim %d, %s attention; KV cache %s (kv_cache_dtype %s) and fp8 (kv_cache_dtype %s, levelled to at most the %s price)",
			ctxRel, genRel, headsPerGPU, kvPerGPU, s.HeadDim, attentionDtype, attentionDtype, KVBF16, KVFP8, attentionDtype),
	)
	if l.TP > 1 {
		mode := allreduceMode
		if allreduceEagerly != nil {
			mode += " (" + allreduceEager + " above the CUDA-graph capture size)"
		}
		t.Kernels = append(t.Kernels, fmt.Sprintf("%s: %s %s all-reduce over %d GPUs, 2 per layer of tokens×%d elements", arRel, mode, allreduceElemType, l.TP, h))
	}
	t.Kernels = append(t.Kernels,
		fmt.Sprintf("element-wise (2 add+RMSNorm,%s RoPE, KV write per layer; embedding): bytes / (mem_bw × mem_bw_empirical_scaling_factor) + mem_empirical_constant_latency", qkNorm),
	)
	return nil
}

// fp32GateUS prices one layer's MoE router gate at a step of tokens. vLLM's MiniMax-M2 gate is
// a replicated FP32 linear layer fed an FP32 copy of the hidden state (models/minimax_m2.py:
// params_dtype float32, hidden_states.to(float32)); FP32 matmuls run on CUDA cores unless TF32
// is enabled, which the measured runs did not do. No operator table measures it, so it is
// priced on its roofline: FLOPs at the FP32 peak or bytes at the effective bandwidth, whichever
// is longer, plus a launch. The cast is element-wise work torch.compile fuses into the RMSNorm
// before it, so it adds only its FP32 write.
func fp32GateUS(tokens float64, experts, hidden int, fp32FLOPS float64, g GPUSpec) float64 {
	bw := g.MemBW * g.MemBWScaling / 1e6 // bytes per µs
	e, h := float64(experts), float64(hidden)
	flops := 2 * tokens * e * h
	bytes := 4 * (e*h + tokens*h + tokens*e)
	return max(flops/fp32FLOPS*1e6, bytes/bw) + g.MemConstantUS + 4*tokens*h/bw
}

// MarshalTable renders a table as the stable JSON the embedded files hold.
func MarshalTable(t *Table) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TableFileName is the file a table is stored under.
func TableFileName(t *Table) string {
	return tableFileName(t.Model, t.HardwareSKU, t.Backend, t.BackendVersion, t.Layout, t.Quantization, t.TimingReference)
}

// ProvenanceFileName is the provenance file written beside the tables of a timing reference.
func ProvenanceFileName(timingReference string) string {
	if timingReference == ReferenceDynosim {
		return "PROVENANCE-dynosim.md"
	}
	return "PROVENANCE.md"
}

// Provenance renders the PROVENANCE.md written beside the tables, in file-name order.
func Provenance(tables []*Table) []byte {
	tables = slices.Clone(tables)
	slices.SortFunc(tables, func(a, b *Table) int { return strings.Compare(TableFileName(a), TableFileName(b)) })
	var b bytes.Buffer
	b.WriteString("# Provenance of the derived step-time tables\n\n")
	b.WriteString("Generated by `routerlab model import`; do not edit by hand. Each gzipped JSON file here is derived\n")
	b.WriteString("from NVIDIA AIConfigurator's silicon-measured operator tables (Apache-2.0, see NOTICE), which are\n")
	b.WriteString("not copied: only per-step sums sampled on a log-spaced axis are kept.\n\n")
	b.WriteString("Method: measured per-layer latencies are interpolated linearly between measured points; below the\n")
	b.WriteString("smallest measured size the smallest point's latency (the kernel floor) is kept, above the largest the\n")
	b.WriteString("measured utilisation is held (time ∝ size, ∝ length² for causal attention); the sums are sampled at\n")
	b.WriteString("4 nodes per octave and levelled to their running maximum along every axis, so a larger batch is never\n")
	b.WriteString("priced faster than a smaller one (this only irons out single-point measurement noise).\n\n")
	for _, t := range tables {
		fmt.Fprintf(&b, "## %s\n\n", TableFileName(t))
		q := ""
		if t.Quantization != "" {
			q = ", served as " + t.Quantization
		}
		fmt.Fprintf(&b, "%s on %s, %s %s, layout %s%s.\n\n", t.Model, t.HardwareSKU, t.Backend, t.BackendVersion, t.Layout, q)
		for _, k := range t.Kernels {
			fmt.Fprintf(&b, "- %s\n", k)
		}
		for _, x := range t.Extrapolated {
			fmt.Fprintf(&b, "- beyond the measured shapes, on purpose: %s\n", x)
		}
		b.WriteString("\n| source | sha256 |\n|---|---|\n")
		for _, s := range t.Sources {
			fmt.Fprintf(&b, "| `%s` | `%s` |\n", s.Path, s.SHA256)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// WriteTables writes each table, gzipped, into dir and renders the provenance file of each
// timing reference (ProvenanceFileName) over every table of it the directory then holds (so
// imports of other models add to it).
func WriteTables(dir string, tables []*Table) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, t := range tables {
		b, err := MarshalTable(t)
		if err != nil {
			return err
		}
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(b)
		if err := zw.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, TableFileName(t)), z.Bytes(), 0o644); err != nil {
			return err
		}
	}
	all, err := ReadTables(dir)
	if err != nil {
		return err
	}
	for _, ref := range TimingReferences() {
		var of []*Table
		for _, t := range all {
			if cmp.Or(t.TimingReference, ReferenceSilicon) == ref {
				of = append(of, t)
			}
		}
		if len(of) > 0 {
			if err := os.WriteFile(filepath.Join(dir, ProvenanceFileName(ref)), Provenance(of), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadTables reads every table file of dir.
func ReadTables(dir string) ([]*Table, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*"+tableExt))
	if err != nil {
		return nil, err
	}
	var out []*Table
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		b, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		var t Table
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, &t)
	}
	return out, nil
}
