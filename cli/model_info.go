package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/model"
)

// deploymentFlags edit the seed worker's layout and engine arguments.
type deploymentFlags struct {
	d model.Deployment
}

func (f *deploymentFlags) register(cmd *cobra.Command, base model.Deployment, layout bool) {
	f.d = base
	fs := cmd.Flags()
	if layout {
		fs.StringVar(&f.d.ModelName, "model-name", f.d.ModelName, "model (Hugging Face id; see model list)")
		fs.StringVar(&f.d.HardwareSKU, "sku", f.d.HardwareSKU, "GPU (see model list)")
		fs.StringVar(&f.d.Quantization, "quantization", f.d.Quantization, "serving precision other than the checkpoint's (see model list)")
		fs.IntVar(&f.d.TP, "tp", f.d.TP, "tensor parallel size")
		fs.IntVar(&f.d.MoETP, "moe-tp", f.d.MoETP, "expert tensor parallel size")
		fs.IntVar(&f.d.MoEEP, "moe-ep", f.d.MoEEP, "expert parallel size")
	}
	fs.IntVar(&f.d.MaxNumBatchedTokens, "max-num-batched-tokens", f.d.MaxNumBatchedTokens, "token budget of one step")
	fs.IntVar(&f.d.MaxNumSeqs, "max-num-seqs", f.d.MaxNumSeqs, "running requests at most")
	fs.IntVar(&f.d.BlockSize, "block-size", f.d.BlockSize, "KV block size in tokens")
	fs.Float64Var(&f.d.GPUMemoryUtilization, "gpu-memory-utilization", f.d.GPUMemoryUtilization, "share of GPU memory vLLM may use")
	fs.StringVar(&f.d.KVCacheDtype, "kv-cache-dtype", f.d.KVCacheDtype, "KV cache dtype: fp8 or bf16 (sets KV bytes per token, block count and attention price)")
	fs.StringVar(&f.d.Float32MatmulPrecision, "float32-matmul-precision", model.PrecisionHighest,
		"vLLM's VLLM_FLOAT32_MATMUL_PRECISION: highest (the FP32 router gate on CUDA cores) or high (TF32 tensor cores)")
	fs.StringVar(&f.d.CUDAGraphMode, "cudagraph-mode", "",
		"vLLM's compilation_config.cudagraph_mode: empty (vLLM's default, FULL_AND_PIECEWISE from 0.11) or PIECEWISE graph every step up to the capture size; FULL_DECODE_ONLY graphs decode-only steps (steps holding a prefill run without CUDA graphs, paying eager all-reduces)")
	fs.IntVar(&f.d.MaxCUDAGraphCaptureSize, "max-cudagraph-capture-size", 0,
		"vLLM's max_cudagraph_capture_size: larger steps run without CUDA graphs (eager all-reduces); 0: vLLM's default, min(2 × max_num_seqs, 512)")
	fs.IntVar(&f.d.SharedExpertsStreamTokens, "shared-experts-stream-tokens", 0,
		"VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD: steps of at most this many tokens overlap shared with routed experts; 0: vLLM's default, 256; -1: no second stream")
	allowMinusOne(fs, "shared-experts-stream-tokens")
	fs.BoolVar(&f.d.FuseAllReduceRMS, "fuse-allreduce-rms", false,
		"vLLM's compilation_config.pass_config.fuse_allreduce_rms: small steps run each all-reduce and the add + RMSNorm after it as one FlashInfer kernel (default: the vLLM release's, on from 0.18 at TP > 1 on H100/H200/B200, B300 from 0.19)")
	fs.IntVar(&f.d.APIServerTokenizeNS, "api-server-tokenize-ns", 0,
		"the API server's tokenisation cost per prompt token (ns) for text prompts sent straight to vLLM; 0: token ids (Dynamo's frontend)")
	fs.IntVar(&f.d.RequestPathUS, "request-path-us", 0,
		"the client's HTTP request path from its send to the API server's handler, µs (counted in TTFT); 0: none")
	fs.IntVar(&f.d.StreamEndUS, "stream-end-us", 0,
		"in a closed loop, from a stream's last token leaving the server to the client's next send, µs; 0: at once")
	fs.StringVar(&f.d.APIServerTokenizeBatching, "api-server-tokenize-batching", "",
		"how the API server tokenises the prompts of one 2 ms window: serial (vLLM 0.16 on, the default) or parallel (vLLM 0.10–0.15); each: no window, every prompt as it arrives (SGLang)")
	fs.StringVar(&f.d.MemoryBudget, "memory-budget", "", memoryBudgetUsage+" (default: the timing reference's, vllm for silicon, aiconfigurator for dynosim)")
	fs.StringVar(&f.d.TimingReference, "timing-reference", model.ReferenceSilicon,
		"how steps are priced and scheduled: silicon (vLLM's one forward pass per step) or dynosim (Dynamo's mocker with AIConfigurator's forward-pass model)")
}

func newModelInfoCmd() *cobra.Command {
	var f deploymentFlags
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Print the worker's KV capacity arithmetic and the step time of typical batches",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("fuse-allreduce-rms") { // the vLLM release's default
				f.d.FuseAllReduceRMS = model.VLLMFusesAllReduceRMS(f.d.BackendVersion, f.d.HardwareSKU, f.d.TP, f.d.AttentionDP)
			}
			w, err := model.NewWorker(f.d)
			if err != nil {
				return err
			}
			return writeModelInfo(cmd.OutOrStdout(), w)
		},
	}
	f.register(cmd, model.SeedDeployment(), true)
	return cmd
}

func writeModelInfo(out io.Writer, w *model.Worker) error {
	d, t := w.Deployment(), w.Table()
	var b strings.Builder
	fmt.Fprintf(&b, "worker     %s on %d × %s, %s %s, layout %s\n", d.ModelName, d.TP*d.AttentionDP, d.HardwareSKU,
		d.Backend, d.BackendVersion, d.Layout())
	fmt.Fprintf(&b, "engine     max_num_batched_tokens %d, max_num_seqs %d, block %d, gpu_memory_utilization %.2f, kv_cache_dtype %s\n",
		d.MaxNumBatchedTokens, d.MaxNumSeqs, d.BlockSize, d.GPUMemoryUtilization, d.KVCacheDtype)
	arch := "dense"
	if t.LLM.MoE() {
		arch = fmt.Sprintf("MoE, %d experts top-%d", t.LLM.Experts, t.LLM.TopK)
	}
	attn := fmt.Sprintf("%d heads / %d KV heads × %d", t.LLM.Heads, t.LLM.KVHeads, t.LLM.HeadDim)
	if t.LLM.MLA() {
		attn = fmt.Sprintf("%d heads of multi-head latent attention (q_lora_rank %d, cached latent %d + RoPE key %d per token)",
			t.LLM.Heads, t.LLM.QLoRARank, t.LLM.KVLoRARank, t.LLM.QKRopeDim)
	}
	if t.LLM.DenseLayers > 0 {
		arch += fmt.Sprintf(", %d leading dense layers", t.LLM.DenseLayers)
	}
	ckpt := t.LLM.WeightQuant
	if t.LLM.ExpertQuant != "" {
		ckpt = t.LLM.ExpertQuant + " experts, the rest " + ckpt
	}
	fmt.Fprintf(&b, "model      %s (%s): %d layers, hidden %d, %s, checkpoint %s\n", t.LLM.Architecture, arch,
		t.LLM.Layers, t.LLM.Hidden, attn, ckpt)
	fmt.Fprintf(&b, "kernels    projections %s", t.GEMMQuant)
	if t.LLM.MoE() {
		gate := "BF16"
		if t.LLM.FP32RouterGate {
			gate = "FP32"
		}
		if d.Dynosim() {
			gate = "BF16 GEMM, as AIConfigurator prices it"
		}
		fmt.Fprintf(&b, ", experts %s %s, router gate %s", t.MoEKernel, t.MoEQuant, gate)
	}
	fmt.Fprintf(&b, " (%s)\n", model.TableFileName(t))
	if t.MLAModule != "" {
		fmt.Fprintf(&b, "mla        the measured MLA module less its projections, from %s\n", t.MLAModule)
	}
	fmt.Fprintf(&b, "timing     %s\n", timingLine(d))
	if d.TP > 1 && !d.Dynosim() {
		steps := "steps"
		if d.CUDAGraphMode == model.CUDAGraphFullDecodeOnly {
			steps = "decode-only steps (cudagraph_mode FULL_DECODE_ONLY: every step holding a prefill runs eagerly)"
		}
		fmt.Fprintf(&b, "graphs     CUDA graphs for %s of up to %d tokens (max_cudagraph_capture_size %s); larger steps run eagerly and pay the eager all-reduces\n",
			steps, d.CUDAGraphMaxTokens(), captureWords(d))
	}
	if t.LLM.SharedInter > 0 && !d.Dynosim() {
		if n := d.SharedExpertsOverlapTokens(); n > 0 {
			fmt.Fprintf(&b, "shared     shared experts on a second CUDA stream beside the routed experts in steps of up to %d tokens (VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD), priced as the longer of the two; in series above\n", n)
		} else {
			b.WriteString("shared     shared experts in series with the routed experts (no second CUDA stream)\n")
		}
	}
	if d.FuseAllReduceRMS {
		fmt.Fprintf(&b, "fusion     all-reduce + RMSNorm %s\n", d.AllReduceRMSFusionWords(t))
	}
	if d.APIServerTokenizeNS > 0 {
		fmt.Fprintf(&b, "requests   text prompts tokenised by the API server at %d ns/token before the engine sees them (8,192 tokens: %.1f ms), %s\n",
			d.APIServerTokenizeNS, float64(d.APIServerTokenizeNS)*8192/1e6, model.TokenizeBatchingWords(d.TokenizeBatching()))
	} else {
		b.WriteString("requests   token ids: no API-server tokenisation (Dynamo's frontend tokenises)\n")
	}
	if d.RequestPathUS > 0 || d.StreamEndUS > 0 {
		fmt.Fprintf(&b, "client     request path %d µs from the client's send to the API server's handler (in TTFT); in a closed loop the next send %d µs after a stream's last token\n",
			d.RequestPathUS, d.StreamEndUS)
	}
	for _, x := range t.Extrapolated {
		fmt.Fprintf(&b, "beyond the measured shapes, on purpose: %s\n", x)
	}
	b.WriteString("\n")
	b.WriteString(w.Capacity().String())
	b.WriteString("\nstep time of typical batches (µs)\n")
	fmt.Fprintf(&b, "%-44s %8s %8s %7s %8s %8s %9s\n", "batch", "tokens", "non-attn", "logits", "ctx-attn", "dec-attn", "total")
	batches := []struct {
		name string
		b    model.Batch
	}{
		{"1 decode, context 2k", model.Batch{Decodes: 1, DecodeContextTokens: 2048}},
		{"32 decodes, context 8k", model.Batch{Decodes: 32, DecodeContextTokens: 32 * 8192}},
		{"128 decodes, context 8k", model.Batch{Decodes: 128, DecodeContextTokens: 128 * 8192}},
		{"512 decodes, context 2k", model.Batch{Decodes: 512, DecodeContextTokens: 512 * 2048}},
		{"prefill 1024", model.Batch{Prefill: []model.Chunk{{NewTokens: 1024}}}},
		{"prefill 8192", model.Batch{Prefill: []model.Chunk{{NewTokens: 8192}}}},
		{"prefill 2048 after 30k cached", model.Batch{Prefill: []model.Chunk{{NewTokens: 2048, CachedTokens: 30720}}}},
		{"prefill 16384", model.Batch{Prefill: []model.Chunk{{NewTokens: 16384}}}},
		{"mixed: 8k chunk after 16k + 64 dec @ 8k", model.Batch{Prefill: []model.Chunk{{NewTokens: 8192, CachedTokens: 16384}},
			Decodes: 64, DecodeContextTokens: 64 * 8192}},
	}
	brs := make([]model.StepBreakdown, len(batches))
	for i, c := range batches {
		br := w.Breakdown(&c.b)
		brs[i] = br
		fmt.Fprintf(&b, "%-44s %8d %8.0f %7.0f %8.0f %8.0f %9d\n", c.name, br.Tokens, br.NonAttentionUS, br.LogitsUS,
			br.ContextAttnUS, br.DecodeAttnUS, br.TotalUS)
	}
	b.WriteString("\nnon-attention work by operator, all layers (µs; fused/overlap: the fused all-reduce + RMSNorm's saving and the shared experts' overlap)\n")
	fmt.Fprintf(&b, "%-44s %8s %6s %8s %7s %10s %8s %13s %8s\n", "batch", "proj", "gate", "experts", "shared", "all-reduce", "elemwise", "fused/overlap", "non-attn")
	for i, c := range batches {
		o := brs[i].Operators
		fmt.Fprintf(&b, "%-44s %8.0f %6.0f %8.0f %7.0f %10.0f %8.0f %13.0f %8.0f\n", c.name, o.ProjectionsUS, o.RouterGateUS, o.ExpertsUS,
			o.SharedExpertsUS, o.AllReduceUS, o.ElementwiseUS, o.AdjustmentUS, brs[i].NonAttentionUS)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// timingLine says how the worker's steps are priced and scheduled.
func timingLine(d model.Deployment) string {
	if d.Dynosim() {
		return "dynosim: Dynamo's mocker — prefill pass, then a separate decode pass (≥ 1 ms) for every token the step emits; blocks visible to the router at pass start (total below; columns are one pass)"
	}
	return "silicon: one forward pass over the whole batch per step"
}

// captureWords says where the deployment's CUDA-graph capture size comes from.
func captureWords(d model.Deployment) string {
	if d.MaxCUDAGraphCaptureSize > 0 {
		return fmt.Sprint(d.MaxCUDAGraphCaptureSize)
	}
	return "vLLM's default, min(2 × max_num_seqs, 512)"
}
