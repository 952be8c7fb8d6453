package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// KeyDoc is one key of the experiment file as its reference documents it.
type KeyDoc struct {
	Key  string // dotted: section.key (goal.sla.ttft_ms)
	Want string // the values the parser accepts
	Doc  string // what it sets, in Dynamo's or vLLM's words where it is theirs
}

// keyDocs is the experiment file's key table: the parser accepts exactly these keys (setNode
// refuses any other before reading its value), and docs/experiment-file.md is generated from
// it, so the reference and the parser cannot disagree.
var keyDocs = []KeyDoc{
	{"search_space.model_name", "an embedded model's Hugging Face id or its name without the organisation, `MiniMax-M2.5` (`routerlab model list`)", "the model every worker serves"},
	{"search_space.hardware_sku", "`h100_sxm`, `h200_sxm`, `b200_sxm`, `b300_sxm`; a list", "the GPU; a list makes it a search dimension"},
	{"search_space.backend", "`vllm`, `sglang`, `trtllm`; a list", "the engine (Dynamo's sweeper schema): its own operator tables and kernel defaults price a step (docs/backends.md); a list makes it a search dimension"},
	{"search_space.backend_version", "a vLLM version with embedded tables (`0.19.0`, `0.18.0`)", "which vLLM release's kernels and defaults price a step (SGLang runs 0.5.9, TensorRT-LLM 1.2.0rc5: their embedded releases)"},
	{"search_space.deployment_mode", "`agg`, `disagg`; one or both", "`agg`: every worker prefills and decodes; `disagg`: a prefill pool and a decode pool with the KV cache moved between them ([disaggregated fleets](disagg.md)); each mode listed needs parallel_configs entries of its kind (or `[]`, derived per mode), and both make one branch per mode, ranked together"},
	{"search_space.planner_scaling_policy", "`disabled`, `throughput_180_5`, `throughput_600_5`, `load_180_5`, `load_180_10`, `hybrid_180_5`, `hybrid_600_5`, or a dict of `enable_throughput_scaling`, `enable_load_scaling`, `throughput_adjustment_interval_seconds`, `load_adjustment_interval_seconds`; a list", "Dynamo's planner: which scaling loops run and how often (Spica's presets; [the planner](planner.md)); `disabled`: the fleet does not scale"},
	{"search_space.planner_optimization_target", "`throughput`, `latency`, `load`, `sla`", "the planner's `optimization_target`; unset: from the goal as Spica derives it (a goal with `goal.sla.ttft_ms` or `tpot_ms`: `sla`, with those as its TTFT and ITL targets; `throughput`: `throughput`; else `latency`)"},
	{"search_space.planner_load_sensitivity", "`aggressive`, `default`, `conservative`, or a dict of `load_scaling_down_sensitivity`, `load_min_observations`; a list", "the planner's scale-down sensitivity and cold-start observations (unset: `default`, 80 and 5); a list is a search dimension while some `planner_scaling_policy` value scales the fleet, moot at points whose policy is `disabled`"},
	{"search_space.planner_fpm_sampling", "`small`, `default`, `large`, `fine`, or a dict of `max_num_fpm_samples`, `fpm_sample_bucket_size`; a list", "the forward-pass observations the planner's regression keeps (unset: `default`, 64 in 16 buckets); searched as `planner_load_sensitivity`"},
	{"search_space.load_predictor", "`constant_last`, `kalman_default_raw`, `kalman_default_log1p`, `kalman_reactive_raw`, `kalman_reactive_log1p` (ARIMA and Prophet presets are refused, [why](planner.md#load-predictors))", "the planner's forecaster of request count, ISL and OSL (unset: `constant_last`)"},
	{"search_space.startup_time", "seconds in [0, 86400]", "how long a new worker takes to start before it serves (its GPUs are held meanwhile); Spica's `startup_time`"},
	{"search_space.migration_limit", "an integer in [0, 255]", "Dynamo `--migration-limit`: how often a request whose worker fails is sent again (prompt plus tokens so far); past it the request is lost (0)"},
	{"search_space.worker_failures", "a list of `{at_s, worker}`, or `{rate_per_hour: R}`", "failure injection: worker slots that fail at given times, or each live worker failing at a seeded rate; a failed worker restarts after `startup_time`"},
	{"search_space.quantization", "`fp8`, `nvfp4`", "the serving precision when it is not the checkpoint's: vLLM's `--quantization fp8` of a BF16 checkpoint, or NVIDIA's FP4 checkpoint (unset: the checkpoint's own)"},
	{"search_space.gpu_budget", "an integer in [1, 1048576]", "most GPUs a fleet may take; a fleet over it is an error naming the budget that would allow it (raised to fit when `--set` gives replicas, a layout or `parallel_configs` and not the budget)"},
	{"search_space.min_gpu_budget", "an integer in [1, 1048576]", "fewest GPUs a derived parallel configuration may take (unset: no floor)"},
	{"search_space.parallel_configs", "a list of `{tp, moe_tp, moe_ep, attention_dp (or dp), replicas}`, or `[]`, or with `disagg` in `deployment_mode` of `{prefill: {…}, decode: {…}}`", "each worker's layout and how many workers (1–1,024); moe_tp × moe_ep = tp × attention_dp; without either MoE key vLLM's default, moe_tp = tp; `[]` derives them under the budgets ([search space](search-space.md)); a disaggregated entry gives each pool its own layout and replicas"},
	{"search_space.agg_max_num_batched_tokens", "integers in [1, 4194304]; a list", "vLLM `--max-num-batched-tokens`: most tokens one step schedules; each at least every `agg_max_num_seqs`, as vLLM requires"},
	{"search_space.agg_max_num_seqs", "integers in [1, 65536]; a list", "vLLM `--max-num-seqs`: most running sequences"},
	// The disaggregated fleet's engines and KV transfer (config/disagg.go, [disaggregated
	// fleets](disagg.md)): in the fingerprint only for a disaggregated file.
	{"search_space.prefill_max_num_batched_tokens", "integers in [1, 4194304]; a list", "disagg: the prefill workers' `--max-num-batched-tokens` (16384)"},
	{"search_space.prefill_max_num_seqs", "integers in [1, 65536]; a list", "disagg: the prefill workers' `--max-num-seqs` (256)"},
	{"search_space.prefill_block_size", "an integer in [1, 65536]", "disagg: the prefill workers' `--block-size` (unset: `block_size`); must equal `decode_block_size`"},
	{"search_space.prefill_gpu_memory_utilization", "a number in [0.05, 1]", "disagg: the prefill workers' `--gpu-memory-utilization` (unset: `gpu_memory_utilization`)"},
	{"search_space.prefill_enable_prefix_caching", "`true`, `false`", "disagg: prefix caching on the prefill workers (`true`)"},
	{"search_space.decode_max_num_batched_tokens", "integers in [1, 4194304]; a list", "disagg: the decode workers' `--max-num-batched-tokens` (8192, the mocker's default)"},
	{"search_space.decode_max_num_seqs", "integers in [1, 65536]; a list", "disagg: the decode workers' `--max-num-seqs` (256, the mocker's default)"},
	{"search_space.decode_block_size", "an integer in [1, 65536]", "disagg: the decode workers' `--block-size` (unset: `block_size`)"},
	{"search_space.decode_gpu_memory_utilization", "a number in [0.05, 1]", "disagg: the decode workers' `--gpu-memory-utilization` (unset: `gpu_memory_utilization`)"},
	{"search_space.decode_enable_prefix_caching", "`true`, `false`", "disagg: prefix caching on the decode workers (`false`, as Spica forces it)"},
	{"search_space.kv_transfer_bandwidth", "a number in [0, 1000000]", "disagg: GB/s a prompt's KV cache moves at from its prefill worker to its decode worker (64, the mocker's default; 0: instant)"},
	{"search_space.kv_transfer_timing_mode", "`full_prompt`, `destination_missing`", "disagg: a transfer moves the whole prompt's KV (`full_prompt`, the mocker's default) or only the blocks the decode worker lacks"},
	{"search_space.router_conditional_disagg", "`true`, `false`", "disagg: the frontend's conditional disaggregation (`--router-conditional-disagg`, off by default): a request whose prompt the chosen decode worker mostly holds is prefilled there instead of on a prefill worker ([disaggregated fleets](disagg.md#conditional-disaggregation))"},
	{"search_space.router_conditional_disagg_eff_isl_threshold", "an integer in [0, 1073741824]", "conditional disaggregation's `isl_bounding` bound: the prompt tokens the decode worker lacks must be fewer (default 2048)"},
	{"search_space.router_conditional_disagg_eff_isl_ratio_threshold", "a number in [0, 1]", "conditional disaggregation's `isl_bounding` bound on those tokens ÷ the prompt's (default 0.7)"},
	{"search_space.context_length", "an integer in [1, 16777216]", "vLLM `--max-model-len`: a request whose prompt plus output exceeds it is rejected, as vLLM answers HTTP 400"},
	{"search_space.gpu_memory_utilization", "a number in [0.05, 1]", "vLLM `--gpu-memory-utilization`"},
	{"search_space.block_size", "an integer in [1, 65536]", "tokens per KV block: vLLM `--block-size`, SGLang `--page-size`, TensorRT-LLM `tokens_per_block` (unset: 64, and TensorRT-LLM's 32 under `backend: trtllm`)"},
	{"search_space.num_gpu_blocks", "an integer in [0, 1073741824]", "KV blocks per worker; 0: from the memory arithmetic (`routerlab model info`)"},
	{"search_space.kv_cache_dtype", "`fp8`, `bf16`, `auto`; a list", "vLLM `--kv-cache-dtype`: sets the block count and the attention price (`auto`: the model's BF16)"},
	{"search_space.memory_budget", "`vllm`, `aiconfigurator`, `sglang`, `trtllm`", "how a worker's KV cache is sized: vLLM's profiler, AIConfigurator's budget (also less NCCL and runtime memory), SGLang's (mem_fraction_static less the weights, activations outside it) or TensorRT-LLM's (the fraction of what its profiling leaves free); unset: the timing reference's ([the timing model](timing.md))"},
	{"search_space.sglang_schedule_policy", "`fcfs`, `lpm`", "SGLang `--schedule-policy` under `backend: sglang`: first come first served (SGLang's default) or longest cached prefix first ([backend schedulers](backend-schedulers.md))"},
	{"search_space.sglang_max_prefill_tokens", "an integer in [0, 4194304]", "SGLang `--max-prefill-tokens`: prompt tokens one prefill batch takes beyond its first request; 0: SGLang's 16384"},
	{"search_space.sglang_scheduler_recv_interval", "an integer in [0, 1000]", "SGLang `--scheduler-recv-interval`: new requests are taken off the socket every this many decode batches (at once after a prefill batch or when idle); 0 or 1: every batch, SGLang's default"},
	{"search_space.sglang_schedule_conservativeness", "a number in [0, 100]", "SGLang `--schedule-conservativeness`: scales the share of its remaining output a running request is assumed to need; 0: SGLang's 1"},
	{"search_space.trtllm_enable_chunked_prefill", "`true`, `false`", "TensorRT-LLM `enable_chunked_prefill` under `backend: trtllm`; off (its default) computes a prompt in one step and refuses one over `agg_max_num_batched_tokens`"},
	{"search_space.trtllm_batch_wait_timeout_iters", "an integer in [0, 1000]", "TensorRT-LLM `batch_wait_timeout_iters` under `backend: trtllm`: a step with generation requests holds its contexts back up to this many steps in a row while they fall short of `trtllm_batch_wait_max_tokens_ratio` ([backend schedulers](backend-schedulers.md)); 0: off, its default"},
	{"search_space.trtllm_batch_wait_max_tokens_ratio", "a number in [0, 1]", "TensorRT-LLM `batch_wait_max_tokens_ratio`: held contexts run once their prompts and the step's generation tokens reach this share of `agg_max_num_batched_tokens`; 0: its default"},
	{"search_space.trtllm_adp_balance", "`true`, `false`", "TensorRT-LLM `attention_dp_config.enable_balance` under `backend: trtllm` with `attention_dp` > 1: a worker's ranks run their contexts only when every rank has one, or after `trtllm_adp_timeout_iters` steps ([backend schedulers](backend-schedulers.md)); off: its default"},
	{"search_space.trtllm_adp_timeout_iters", "an integer in [0, 10000]", "TensorRT-LLM `attention_dp_config.timeout_iters`: the steps a balanced rank's contexts wait at most (InferenceX's DeepSeek scripts: 60)"},
	{"search_space.trtllm_adp_batching_wait_iters", "an integer in [0, 10000]", "TensorRT-LLM `attention_dp_config.batching_wait_iters`: the steps balanced contexts wait more while every rank also has generation requests (InferenceX's DeepSeek scripts: 0)"},
	{"search_space.async_scheduling", "`true`, `false`", "vLLM's async scheduler: a busy worker schedules each step when the previous one starts, so an arrival waits for the step after"},
	{"search_space.float32_matmul_precision", "`highest`, `high`", "vLLM's `VLLM_FLOAT32_MATMUL_PRECISION`: the FP32 MoE router gate on CUDA cores (`highest`, vLLM's default) or TF32 tensor cores"},
	{"search_space.fuse_allreduce_rms", "`true`, `false`", "vLLM's `compilation_config.pass_config.fuse_allreduce_rms`; unset: `backend_version`'s default (on from 0.18 at TP > 1)"},
	{"search_space.max_cudagraph_capture_size", "an integer in [0, 1048576]", "vLLM's `max_cudagraph_capture_size`: larger steps run without CUDA graphs and pay eager all-reduces; 0: vLLM's default, min(2 × max_num_seqs, 512)"},
	{"search_space.cudagraph_mode", "`PIECEWISE`, `FULL_DECODE_ONLY`", "vLLM's `cudagraph_mode`: `FULL_DECODE_ONLY` runs every step holding a prefill chunk eagerly; unset: vLLM's default"},
	{"search_space.shared_experts_stream_tokens", "an integer in [-1, 1048576]", "`VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD`: steps of at most this many tokens overlap a MoE layer's shared experts with its routed ones; 0: vLLM's 256; -1: in series"},
	{"search_space.api_server_tokenize_ns", "an integer in [0, 1000000]", "ns per prompt token the API server spends tokenising text prompts before the engine sees them; 0: token ids"},
	{"search_space.api_server_tokenize_batching", "`serial`, `parallel`, `each`", "how the API server tokenises one window's prompts (vLLM 0.16 and later: serial); `each`: no window, every prompt as it arrives (SGLang's TokenizerManager)"},
	{"search_space.request_path_us", "an integer in [0, 1000000]", "µs from a client's send to the API server's handler, in TTFT; 0: the instant client (fleets go through Dynamo's frontend)"},
	{"search_space.stream_end_us", "an integer in [0, 1000000]", "closed loop: µs from a stream's last token to the client's next send"},
	{"search_space.timing_reference", "`silicon`, `dynosim`; a list", "how a step is priced and scheduled: as vLLM runs it (`silicon`) or as Dynamo's mocker replay does (`dynosim`)"},
	{"search_space.router_mode", "`kv_router`, `round_robin`, `random`, `least_loaded`, `power_of_two_choices`, `device_aware_weighted`; a list", "Dynamo's routing policy ([the router](router.md#selection-policies))"},
	{"search_space.overlap_score_credit", "numbers in [0, 1000000]; a list", "the KV router's credit for a worker's cached prefix blocks (above 1 allowed, as Dynamo at 057096c3 allows it)"},
	{"search_space.prefill_load_scale", "numbers in [0, 1024]; a list", "the KV router's weight of a worker's prefill load"},
	{"search_space.router_temperature", "numbers in [0, 100]; a list", "softmax temperature of the KV router's worker choice; 0 takes the cheapest"},
	// The router's active-load accounting and admission (loadkeys.go; docs/router.md, "Load,
	// admission and where decode time goes"): at Dynamo's default they are left out of the
	// fingerprint.
	{"search_space.router_track_active_blocks", "`true`, `false`; a list", "Dynamo `--router-track-active-blocks`: in-flight prompt blocks count in the KV router's cost (default `true`)"},
	{"search_space.router_assume_kv_reuse", "`true`, `false`; a list", "Dynamo `--router-assume-kv-reuse`: requests sharing a prefix share its active blocks; `false`: each counts its own (default `true`)"},
	{"search_space.router_track_prefill_tokens", "`true`, `false`; a list", "Dynamo `--router-track-prefill-tokens`: prompt tokens count as a worker's load until the first token (default `true`)"},
	{"search_space.router_track_output_blocks", "`true`, `false`; a list", "Dynamo `--router-track-output-blocks`: generated blocks count too, weighted 1 − generated ÷ output length; needs active blocks tracked (default `false`)"},
	{"search_space.router_active_sequence_stride", "integers in [1, 65536]; a list", "Dynamo `--router-active-sequence-stride`: one active hash per N complete prompt blocks, counted as N (default 1)"},
	{"search_space.router_prefill_load_model", "`none`, `aic`; a list", "Dynamo `--router-prefill-load-model`: `aic` prices each prefill on the engines' tables and decays each worker's oldest over it; needs prefill tokens tracked (default `none`)"},
	{"search_space.router_queue_threshold", "`none` or numbers in [0, 1e6]; a list", "Dynamo `--router-queue-threshold`: the KV router holds requests while every worker's prefill load exceeds it × `max_num_batched_tokens` (default `none`: no queue)"},
	{"search_space.router_queue_policy", "`fcfs`, `wspt`, `lcfs`; a list", "Dynamo `--router-queue-policy`: the queue's order: arrival, shortest prompt first, latest arrival (default `fcfs`)"},
	{"search_space.active_decode_blocks_threshold", "`none` or numbers in [0, 1]; a list", "Dynamo `--active-decode-blocks-threshold`: a worker above this share of its KV blocks in use is busy; every worker busy rejects the request (default `none`)"},
	{"search_space.active_prefill_tokens_threshold", "`none` or integers in [0, 1e12]; a list", "Dynamo `--active-prefill-tokens-threshold`: a worker with more prompt tokens to prefill is busy (default `none`)"},
	{"search_space.active_prefill_tokens_threshold_frac", "`none` or numbers in [0, 1e6]; a list", "Dynamo `--active-prefill-tokens-threshold-frac`: the same as a multiple of `max_num_batched_tokens` (default `none`)"},
	// How the router knows the fleet and how many routers there are (config/routerindex.go,
	// [the router](router.md)).
	{"search_space.use_kv_events", "`true`, `false`; a list", "Dynamo `--router-kv-events`: the router indexes the workers' KV events; false: it predicts each worker's cache from its own routing decisions"},
	{"search_space.router_ttl_secs", "numbers in [0, 86400]; a list", "Dynamo `--router-ttl-secs`, events off: a predicted block is forgotten this long after the last request routed with it (120)"},
	{"search_space.router_kv_event_delay_ms", "numbers in [0, 86400000]; a list", "events on: how late a KV event reaches the router's index (the event plane's latency; 0)"},
	{"search_space.router_predicted_ttl_secs", "numbers in [0, 86400]; a list", "Dynamo `--router-predicted-ttl-secs`, events on: the router also predicts blocks from its own decisions for this long; 0: off"},
	{"search_space.overlap_score_credit_decay", "numbers in [0, 1000000]; a list", "Dynamo `--router-kv-overlap-score-credit-decay`: a worker's cached-prefix credit shrinks with its prefill load above the least loaded worker's; 0: off"},
	{"search_space.router_replicas", "integers in [1, 64]; a list", "routers (Dynamo frontends) in front of the fleet, requests reaching them in turn; each counts only its own requests' load unless synced"},
	{"search_space.router_replica_sync", "`true`, `false`; a list", "Dynamo `--router-replica-sync`: every router books every router's requests"},
	{"search_space.router_replica_sync_delay_ms", "numbers in [0, 86400000]; a list", "how late a router's bookings and frees reach the other routers (0)"},
	{"search_space.router_session_affinity_ttl_secs", "integers in [0, 31536000]; a list", "Dynamo `--router-session-affinity-ttl-secs`: a session's requests go to the worker its first was routed to until it has been idle this long; 0: off ([sessions](sessions.md#session-affinity))"},
	// KV tiers below the GPU cache (config/kvtiers.go, [KV tiers](kv-tiers.md)); every key but
	// num_g2_blocks is moot, and left out of a sweep, while it is 0.
	{"search_space.num_g2_blocks", "integers in [0, 16777216]; a list", "Dynamo's KV manager: host-memory (G2) blocks per worker that GPU evictions are offloaded to; 0: offload off (default)"},
	{"search_space.num_g3_blocks", "integers in [0, 16777216]; a list", "disk (G3) blocks per worker that G2 evictions go on to; 0: no G3 (default)"},
	{"search_space.kv_bytes_per_token", "integers in [0, 1073741824]; a list", "KV bytes per token one GPU moves over its link; 0: the model's, from the KV arithmetic (`routerlab model info`)"},
	{"search_space.bandwidth_g1_to_g2_gbps", "numbers in [0, 1e6]; a list", "GB/s of the offload link, GPU to host (14; 0: instant)"},
	{"search_space.bandwidth_g2_to_g1_gbps", "numbers in [0, 1e6]; a list", "GB/s of the onboard link, host to GPU (14; 0: instant)"},
	{"search_space.bandwidth_g2_to_g3_gbps", "numbers in [0, 1e6]; a list", "GB/s from host to disk (7; 0: instant)"},
	{"search_space.bandwidth_g3_to_g2_gbps", "numbers in [0, 1e6]; a list", "GB/s from disk to host, staging a disk hit (7; 0: instant)"},
	{"search_space.offload_batch_size", "integers in [1, 1048576]; a list", "evicted blocks per offload transfer (32)"},
	{"search_space.host_cache_hit_weight", "numbers in [0, 1]; a list", "Dynamo `--router-host-cache-hit-weight`: the router's credit per prefix block in a worker's host tier (0.75)"},
	{"search_space.disk_cache_hit_weight", "numbers in [0, 1]; a list", "Dynamo `--router-disk-cache-hit-weight`: the credit per prefix block in its disk tier (0.25)"},
	{"workload.trace_path", "a Mooncake JSONL file, `builtin:toolagent`, `builtin:conversation`, either with `-sessions` ([sessions](sessions.md)) (`:xN` repeats it N times)", "the trace ([traces](traces.md))"},
	{"workload.trace_format", "`mooncake`, `mooncake-delta`, `agentic_mooncake`, `applied_compute_agentic`, `auto`", "the trace's row format, as Dynamo's `--trace-format` names it; `auto` detects it from the first row ([trace formats](traces.md#trace-formats))"},
	{"workload.trace_block_size", "an integer in [1, 1048576]", "tokens per `hash_ids` block"},
	{"workload.replay_concurrency", "an integer in [0, 1048576]", "closed loop: requests in flight (with sessions: sessions in flight, [sessions](sessions.md)); 0: open loop on the trace's timestamps"},
	{"workload.arrival_speedup_ratio", "a number in [1e-06, 1e+06]", "open loop: timestamps are divided by it"},
	{"workload.search_requests", "an integer ≥ 0", "the sweep's search subset: the first N requests"},
	{"workload.seed", "an integer", "seed of the router's tie-breaking and sampling"},
	{"workload.strict", "`true`, `false`", "a request the fleet would reject is an error naming its line (also `--strict`)"},
	{"goal.target", "`e2e_latency`, `ttft`, `tpot`, `throughput`, `throughput_per_gpu`, `throughput_per_user`, `goodput`, `goodput_per_gpu`, `pareto`", "what the sweep minimises (mean latency) or maximises (throughput; per GPU; a streaming user's tokens/s; output tokens/s of requests meeting `goal.sla`, or AIConfigurator's default SLO without it, per GPU); `pareto` traces throughput per GPU against per-user throughput ([search space](search-space.md#goals))"},
	{"goal.max_ttft_ms", "a number ≥ 0", "SLA bound on mean TTFT: infeasible candidates rank by violation"},
	{"goal.max_tpot_ms", "a number ≥ 0", "SLA bound on mean TPOT"},
	{"goal.max_e2e_latency_ms", "a number ≥ 0", "SLA bound on mean e2e latency"},
	{"goal.max_itl_ms", "a number ≥ 0", "SLA bound on mean inter-token latency (over every token gap)"},
	{"goal.max_p95_ttft_ms", "a number ≥ 0", "SLA bound on p95 TTFT over requests"},
	{"goal.max_p95_tpot_ms", "a number ≥ 0", "SLA bound on p95 TPOT over requests (a request's mean inter-token latency, Spica's `itl_ms`)"},
	{"goal.max_p95_e2e_latency_ms", "a number ≥ 0", "SLA bound on p95 e2e latency over requests"},
	{"goal.sla", "a mapping of the four keys below", "a per-request SLO: reports add the share of requests meeting every target and the goodput"},
	{"goal.sla.ttft_ms", "a number ≥ 0", "the SLO's TTFT target"},
	{"goal.sla.tpot_ms", "a number ≥ 0", "the SLO's TPOT target (a one-token answer has TPOT 0)"},
	{"goal.sla.e2e_latency_ms", "a number ≥ 0", "the SLO's e2e latency target"},
	{"goal.sla.percentile", "a number in [1, 100]", "the share of requests that must meet the SLO (90 unset)"},
	{"sweep.algorithm", "`gp_bandit`, `random`, `grid`", "the search"},
	{"sweep.max_rounds", "an integer in [1, 10000]", "rounds of the search"},
	{"sweep.candidates_per_round", "an integer in [1, 10000]", "configurations evaluated per round"},
	{"sweep.parallel_evals", "an integer in [1, 1024]", "simulations at once (results do not depend on it)"},
	{"sweep.seed", "an integer", "seed of the search"},
	{"validate.enabled", "`true`, `false`", "replay round_robin, default_kv and the winner on the validation requests after the search"},
	{"validate.requests", "an integer ≥ 0", "validation requests, the first N; 0: the whole trace"},
}

var keyIndex = func() map[string]bool {
	m := make(map[string]bool, len(keyDocs))
	for _, k := range keyDocs {
		m[k.Key] = true
	}
	return m
}()

// Keys returns the experiment file's key table in its reference order.
func Keys() []KeyDoc { return slices.Clone(keyDocs) }

// Aliases returns the short --set names of experiment-file keys (the explorer's knob names),
// alias → key, sorted by alias.
func Aliases() [][2]string {
	var out [][2]string
	for _, a := range slices.Sorted(maps.Keys(aliases)) {
		out = append(out, [2]string{a, aliases[a]})
	}
	return out
}

// KeyReference renders the key table as the Markdown of docs/experiment-file.md's generated
// part: each key with what it accepts, the seed's value where the seed sets it, and its meaning.
func KeyReference() string {
	seed := Default().Fingerprint()
	var b strings.Builder
	section := ""
	for _, k := range keyDocs {
		if sec, _, _ := strings.Cut(k.Key, "."); sec != section {
			section = sec
			fmt.Fprintf(&b, "\n### `%s`\n\n| key | accepts | seed | meaning |\n|---|---|---|---|\n", sec)
		}
		v, _ := seed.Get(k.Key)
		if v != "" {
			v = "`" + strings.ReplaceAll(v, "|", `\|`) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Key, k.Want, v, k.Doc)
	}
	b.WriteString("\n### Short names for `--set`\n\n| name | key |\n|---|---|\n")
	for _, a := range Aliases() {
		fmt.Fprintf(&b, "| `%s` | `%s` |\n", a[0], a[1])
	}
	return b.String()
}
