package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/model"
)

func newModelImportCmd() *cobra.Command {
	var aic, out, ref, moeShape string
	var layouts []string
	o := model.DefaultImportOptions()
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Derive the step-time tables from AIConfigurator operator data",
		Long: `import reads AIConfigurator's operator tables (gemm, moe, attention, custom all-reduce
parquet files, the system YAML and the model's config.json, at the top of --aic or in its
model_configs/) under --aic and writes one derived table per layout into --out, with a
PROVENANCE.md over every table there. Writing into model/tables and rebuilding embeds them;
the importer is deterministic, so re-running it on the same data reproduces the files.

Without --model-name, --sku or --layout it derives everything the binary embeds:

  routerlab model import --aic ../shared/aic --out model/tables

With them it derives one model on one GPU, e.g.

  routerlab model import --aic ../shared/aic --out model/tables \
    --model-name meta-llama/Llama-3.1-70B --sku h200_sxm --quantization fp8 --gemm-quant fp8 --layout 2,2,1

--moe-kernel vllm_fused_moe --moe-version 0.19.0 prices the seed's experts with the Triton
kernel of the 0.19 tables instead of FlashInfer's TRT-LLM MoE. With --timing-reference dynosim
it derives AIConfigurator's own operator choice for the seed instead (Triton fused_moe experts
from its vLLM 0.19.0 table, the router gate as a BF16 GEMM), which the whole import includes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if aic == "" || out == "" {
				return fmt.Errorf("model import: --aic and --out are required")
			}
			if ref != model.ReferenceSilicon && ref != model.ReferenceDynosim {
				return fmt.Errorf("model import: --timing-reference %q: want one of %s", ref, strings.Join(model.TimingReferences(), ", "))
			}
			imports := model.EmbeddedImports()
			f := cmd.Flags()
			selected := f.Changed("backend") || f.Changed("model-name") || f.Changed("sku") || f.Changed("layout") || f.Changed("quantization") || f.Changed("checkpoint") || f.Changed("timing-reference")
			if !selected {
				// Without a deployment every embedded one is re-derived with its own kernel
				// choice: a kernel flag would be dropped silently.
				for _, name := range []string{"backend-version", "gemm-quant", "moe-version", "moe-kernel", "moe-quant", "moe-shape", "attention-version", "linear-attention-version", "fp32-tflops", "tf32-tflops"} {
					if f.Changed(name) {
						return fmt.Errorf("model import: --%s applies to one deployment: name it with --model-name, --sku, --layout or --quantization (without them every embedded table is re-derived with its own kernels)", name)
					}
				}
			}
			if selected {
				if ref == model.ReferenceDynosim {
					// AIConfigurator's own expert rows, unless chosen by flag.
					d := model.DynosimImportOptions()
					o.TimingReference = d.TimingReference
					for _, f := range []struct {
						flag      string
						dst, from *string
					}{{"moe-version", &o.MoE.Version, &d.MoE.Version}, {"moe-kernel", &o.MoE.Source, &d.MoE.Source}, {"moe-quant", &o.MoE.Quant, &d.MoE.Quant}} {
						if !cmd.Flags().Changed(f.flag) {
							*f.dst = *f.from
						}
					}
				}
				if moeShape != "" {
					sh, err := model.ParseMoEShape(moeShape)
					if err != nil {
						return fmt.Errorf("model import: --moe-shape: %w", err)
					}
					o.MoE.Shape = sh
				}
				o.Layouts = nil
				for _, s := range layouts {
					l, err := model.ParseLayout(s)
					if err != nil {
						return err
					}
					o.Layouts = append(o.Layouts, l)
				}
				imports = []model.ImportOptions{o}
			}
			// The whole import takes about a minute: its progress, by model-GPU combination.
			progress := startProgress(cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()), "import", "model-GPU combinations")
			defer progress.Stop()
			for i, im := range imports {
				progress.Set(i, len(imports))
				im.QKNormKernels, im.MLAModuleRows, im.MoE.Distribution = o.QKNormKernels, o.MLAModuleRows, o.MoE.Distribution
				tables, err := model.Import(aic, im)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", im.Model, im.HardwareSKU, err)
				}
				if err := model.WriteTables(out, tables); err != nil {
					return err
				}
				for _, t := range tables {
					fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/%s\n", out, model.TableFileName(t))
				}
			}
			progress.Set(len(imports), len(imports))
			progress.Stop()
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/PROVENANCE*.md\n", out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&aic, "aic", "", "AIConfigurator data directory (holds <sku>.yaml, <sku>/..., the model's <org>--<model>_config.json at the top or in model_configs/)")
	fs.StringVar(&out, "out", "", "directory to write the derived tables into")
	fs.StringVar(&ref, "timing-reference", model.ReferenceSilicon, "the reference the tables price for: silicon (the kernels vLLM runs) or dynosim (AIConfigurator's own operator choice, files *_dynosim.json)")
	fs.StringVar(&o.Model, "model-name", o.Model, "model name (config file <org>--<name>_config.json)")
	fs.StringVar(&o.HardwareSKU, "sku", o.HardwareSKU, "system name")
	fs.Var(backendFlag{&o.Backend}, "backend", "the engine whose operator tables are read: "+strings.Join(model.BackendNames(), ", "))
	fs.StringVar(&o.BackendVersion, "backend-version", o.BackendVersion, "the backend's version directory (vLLM 0.19.0, SGLang 0.5.9, TRT-LLM 1.2.0rc5)")
	fs.StringVar(&o.Quantization, "quantization", o.Quantization, "serving precision other than the checkpoint's, naming the table (e.g. fp8, nvfp4)")
	fs.StringVar(&o.Checkpoint, "checkpoint", o.Checkpoint, "Hugging Face id of the served checkpoint's config.json when it is not --model-name's (e.g. nvidia/Kimi-K2.5-NVFP4 with --quantization nvfp4)")
	fs.StringVar(&o.GEMMQuant, "gemm-quant", o.GEMMQuant, "gemm_dtype of the projection and dense MLP rows (default: the checkpoint's)")
	fs.StringVar(&o.MoE.Version, "moe-version", o.MoE.Version, "vLLM version directory of the expert rows (default: the kernel's)")
	fs.StringVar(&o.MoE.Source, "moe-kernel", o.MoE.Source, "kernel_source of the expert rows (default: the one vLLM selects for the quantisation and GPU; vllm_fused_moe: Triton)")
	fs.StringVar(&o.MoE.Quant, "moe-quant", o.MoE.Quant, "moe_dtype of the expert rows")
	fs.StringVar(&o.MoE.Distribution, "moe-distribution", "", "how the expert rows spread a step's tokens over the experts, AIConfigurator's moe_perf distribution: "+strings.Join(model.MoEDistributions(), ", ")+" (default: the first, AIConfigurator's own and the embedded tables'; the others are ablations)")
	fs.StringVar(&moeShape, "moe-shape", "", "hidden,inter,experts,topk of the expert rows when --moe-kernel is measured only at another model's shape: transferred at equal tokens per expert, latency scaled by experts × hidden × inter (an assumption, stated in the table; default: the model's own shape)")
	fs.StringVar(&o.AttentionVersion, "attention-version", o.AttentionVersion, "vLLM version directory of the attention rows (default: --backend-version; H200's 0.19.0 context rows are not physical, the embedded H200 tables take 0.18.0)")
	fs.StringVar(&o.LinearAttentionVersion, "linear-attention-version", o.LinearAttentionVersion, "SGLang version directory of a hybrid model's gated DeltaNet rows (default: --backend-version; 0.5.9 measures them only at the full head count and without the chunked delta rule, the embedded tables take 0.5.14)")
	fs.StringVar(&o.QKNormKernels, "qk-norm-kernels", model.QKNormVLLM, "how a QK-norm over a layer's heads (qk_norm_type per_layer, MiniMax-M2) is priced: vllm (the reduction, all-reduce of the variances and normalisation vLLM 0.19 runs; the embedded tables) or aiconfigurator (its op list, per-head element-wise ops)")
	fs.StringVar(&o.MLAModuleRows, "mla-module-rows", model.MLARowsFusedNorms, "which collection of AIConfigurator's MLA module rows prices multi-head latent attention: fused-norms (the GPU's collection run with the norm kernels a serving engine runs, where it has one: B200's 0.24.0; the embedded tables) or version (the deployment's own version's rows, or --attention-version's)")
	fs.Float64Var(&o.FP32TFLOPS, "fp32-tflops", 0, "the GPU's dense FP32 (CUDA-core) peak, for an FP32 router gate (default: the datasheet figure of a known --sku)")
	fs.Float64Var(&o.TF32TFLOPS, "tf32-tflops", 0, "the GPU's dense TF32 (tensor-core) peak, for an FP32 router gate under VLLM_FLOAT32_MATMUL_PRECISION=high (default: the datasheet figure of a known --sku)")
	var defaults []string
	for _, l := range o.Layouts {
		defaults = append(defaults, fmt.Sprintf("%d,%d,%d", l.TP, l.MoETP, l.MoEEP))
	}
	fs.StringArrayVar(&layouts, "layout", defaults, "tp,moe_tp,moe_ep of a layout to derive (repeatable)")
	return cmd
}

// backendFlag is a pflag.Value for a model.Backend.
type backendFlag struct{ b *model.Backend }

func (f backendFlag) String() string {
	if f.b == nil {
		return ""
	}
	return string(*f.b)
}

func (f backendFlag) Set(s string) error {
	b, err := model.ParseBackend(s)
	if err != nil {
		return err
	}
	*f.b = b
	return nil
}

func (backendFlag) Type() string { return "backend" }
