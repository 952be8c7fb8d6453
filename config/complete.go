package config

import (
	"slices"
	"strings"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/planner"
	"github.com/routerlab/routerlab/router"
)

// goalTargets and sweepAlgorithms are the values goal.target and sweep.algorithm take.
var (
	goalTargets     = []string{"e2e_latency", "ttft", "tpot", "throughput", "throughput_per_gpu", "throughput_per_user", "goodput", "goodput_per_gpu", "pareto"}
	sweepAlgorithms = []string{"gp_bandit", "random", "grid"}
)

// SetKeys are the keys --set accepts, full and short, sorted: what shell completion offers
// before the "=".
func SetKeys() []string { return knownKeys() }

// SetValues are the values shell completion offers after "key=" (a full key, a bare
// search_space key or one of the explorer's names): the allowed values of a key that has a
// fixed set, true and false for a switch, the embedded models and GPUs; nil where any number
// or text goes.
func SetValues(key string) []string {
	if full, ok := aliases[key]; ok {
		key = full
	}
	key = strings.TrimPrefix(key, "search_space.")
	switch key {
	case KeyRouterMode:
		var out []string
		for _, m := range router.Modes() {
			out = append(out, string(m))
		}
		return out
	case KeyKVCacheDtype:
		return []string{model.KVFP8, model.KVBF16, kvAuto}
	case KeyTimingReference:
		return model.TimingReferences()
	case "api_server_tokenize_batching":
		return model.TokenizeBatchings()
	case "cudagraph_mode":
		return model.CUDAGraphModes()
	case KeyFloat32MatmulPrecision:
		return model.Float32MatmulPrecisions()
	case "memory_budget":
		return model.MemoryBudgets()
	case KeyBackend:
		return model.BackendNames()
	case "deployment_mode":
		return []string{ModeAgg} // disagg needs disaggregated parallel_configs beside it
	case "kv_transfer_timing_mode":
		return engine.TransferModes()
	case "prefill_enable_prefix_caching", "decode_enable_prefix_caching":
		return []string{"true", "false"}
	case "planner_scaling_policy":
		// Throughput scaling needs an SLA in the goal (checkPlanner); these need none.
		var names []string
		for _, p := range planner.ScalingPolicies {
			if !p.Throughput {
				names = append(names, p.Name)
			}
		}
		return names
	case "sglang_schedule_policy":
		return []string{engine.SGLangFCFS, engine.SGLangLPM}
	case "async_scheduling", "trtllm_enable_chunked_prefill", "fuse_allreduce_rms", "workload.strict", KeyUseKVEvents, KeyRouterReplicaSync:
		return []string{"true", "false"}
	case "goal.target":
		return goalTargets
	case "sweep.algorithm":
		return sweepAlgorithms
	case "model_name", KeyHardwareSKU:
		var out []string
		for _, o := range model.EmbeddedImports() {
			v := o.Model
			if key == KeyHardwareSKU {
				v = o.HardwareSKU
			}
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		slices.Sort(out)
		return out
	}
	return nil
}
