package cli

import "github.com/spf13/cobra"

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Inspect, import and validate the worker timing model",
		Long: `The timing model prices every engine step of a worker from silicon-measured operator
tables (NVIDIA AIConfigurator) composed for the model's architecture (its config.json: dense or
mixture-of-experts, heads, KV heads, sizes, quantisation), the GPU and the parallel layout, and
sizes its KV cache from memory arithmetic. ` + "`model list`" + ` shows what is embedded.`,
	}
	cmd.AddCommand(newModelListCmd(), newModelInfoCmd(), newModelImportCmd(), newModelValidateCmd())
	return cmd
}

// memoryBudgetUsage describes --memory-budget for model info and model validate.
const memoryBudgetUsage = "how the KV cache's memory is computed: aiconfigurator (its vLLM budget: capacity × utilisation × 0.98 − weights, activations, NCCL, runtime) or vllm (what vLLM's profiler takes off before 0.21: weights and activations; NCCL and CUDA graphs sit outside its budget) or sglang (SGLang's: the utilisation as mem_fraction_static of the memory free after NCCL, less the weights; activations outside it) or trtllm (TensorRT-LLM's: the utilisation as free_gpu_memory_fraction of what remains after weights, activations and NCCL)"
