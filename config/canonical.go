package config

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/trace"
)

// The canonical replays of the simulator digest: small replays, each on two workers, that
// between them take every path an experiment file can send a replay down — every embedded
// model on every GPU, precision and vLLM version it has tables for, every router mode and
// knob, both timing references, async scheduling, preemption, rejections, the API server's
// tokenizer and request path, CUDA-graph and fusion settings, SLA goodput — through the same
// --set, experiment and engine-config code as a user's run.

// replayCase is one canonical replay: --set assignments on the seed experiment (after
// replayBase), the trace, and engine settings no file key reaches.
type replayCase struct {
	sets         []string
	conversation bool                 // the conversation trace instead of toolagent
	long         bool                 // the long conversation trace (longConversation requests)
	wide         bool                 // the wide fleet's trace (wideAgent requests)
	derived      bool                 // KV blocks derived from memory (else replayBlocks unless sets name them)
	edit         func(*engine.Config) // nil: the experiment's own config
}

// trace is the case's trace among the canonical ones.
func (c replayCase) trace(ts canonicalTraceSet) *trace.Trace {
	switch {
	case c.wide:
		return ts.wide
	case c.long:
		return ts.long
	case c.conversation:
		return ts.conv
	}
	return ts.agent
}

// replayBase applies to every case unless it sets the key itself: two workers, a modest
// closed loop.
var replayBase = []string{"replicas=2", "workload.replay_concurrency=12"}

// replayBlocks is the KV cache of a case that does not derive it: far below a derived one
// (so the block pools, and the digest's cost, stay small) and far above what 12 requests in
// flight hold.
const replayBlocks = "num_gpu_blocks=3000"

// overriding is base's assignments whose keys sets does not assign, then sets.
func overriding(base, sets []string) []string {
	var out []string
	for _, b := range base {
		k, _, _ := strings.Cut(b, "=")
		if !slices.ContainsFunc(sets, func(s string) bool { return strings.HasPrefix(s, k+"=") }) {
			out = append(out, b)
		}
	}
	return append(out, sets...)
}

// knobCases vary one setting family each from the seed deployment.
func knobCases() []replayCase {
	return []replayCase{
		{},
		{sets: []string{"router_mode=round_robin", "kv_cache_dtype=bf16"}},
		{sets: []string{"router_mode=random", "overlap_score_credit=0.5", "prefill_load_scale=4"}},
		{sets: []string{"router_temperature=0.7", "overlap_score_credit=0", "prefill_load_scale=0.25", "workload.seed=7"}},
		{sets: []string{"router_mode=least_loaded", "num_gpu_blocks=300", "workload.replay_concurrency=24"}, conversation: true}, // preempts
		{sets: []string{"router_mode=kv_router", "num_gpu_blocks=200"}, conversation: true},                                      // preempts
		{sets: []string{"async_scheduling=true"}},
		{sets: []string{"timing_reference=dynosim"}},
		{sets: []string{"timing_reference=dynosim", "parallel_configs=[{tp: 2, moe_tp: 2, replicas: 2}]"}, conversation: true},
		{sets: []string{"float32_matmul_precision=high"}},
		{sets: []string{"workload.replay_concurrency=0", "workload.arrival_speedup_ratio=3"}},
		{sets: []string{"workload.replay_concurrency=0", "workload.arrival_speedup_ratio=0.5"}, conversation: true},
		{sets: []string{"api_server_tokenize_ns=40", "api_server_tokenize_batching=parallel", "request_path_us=250", "stream_end_us=120"}},
		{sets: []string{"api_server_tokenize_ns=25", "workload.replay_concurrency=0", "workload.arrival_speedup_ratio=2"}, conversation: true},
		{sets: []string{"cudagraph_mode=FULL_DECODE_ONLY", "max_cudagraph_capture_size=64", "batched_tokens=2048", "max_num_seqs=24"}},
		{sets: []string{"cudagraph_mode=PIECEWISE", "batched_tokens=512", "max_num_seqs=8"}, conversation: true},
		{sets: []string{"shared_experts_stream_tokens=-1", "fuse_allreduce_rms=false"}},
		{sets: []string{"memory_budget=vllm", "context_length=32768", "gpu_memory_utilization=0.5"}, derived: true},
		{sets: []string{"memory_budget=aiconfigurator", "context_length=32768", "gpu_memory_utilization=0.5"}, derived: true},
		{sets: []string{"goal.sla.ttft_ms=900", "goal.sla.tpot_ms=25", "goal.sla.percentile=95"}},
		{sets: []string{"goal.sla.e2e_latency_ms=20000"}, conversation: true},
		{sets: []string{"context_length=12000"}}, // rejects the longest requests
		{sets: []string{"workload.strict=true", "workload.seed=11"}},
		{sets: []string{"block_size=128", "workload.replay_concurrency=20"}}, // four engine blocks per trace block
		{sets: []string{"block_size=512"}, conversation: true},
		{edit: func(c *engine.Config) { c.Worker.NoPrefixCaching = true }},
		{edit: func(c *engine.Config) { c.SnapshotEveryUS = 250_000 }, conversation: true},
		// Dynamo's load accounting and admission (config/loadkeys.go): what the router
		// counts, its queue and its busy thresholds, under an open loop that fills them.
		{sets: []string{"router_track_active_blocks=false", "router_assume_kv_reuse=false", "router_track_prefill_tokens=false"}},
		{sets: []string{"router_track_output_blocks=true", "router_active_sequence_stride=4", "router_prefill_load_model=aic"}},
		{sets: []string{"router_queue_threshold=2", "router_queue_policy=wspt", "workload.replay_concurrency=0", "workload.arrival_speedup_ratio=8"}},
		{sets: []string{"router_queue_threshold=1.5", "router_queue_policy=lcfs", "active_decode_blocks_threshold=0.5",
			"active_prefill_tokens_threshold=4096", "active_prefill_tokens_threshold_frac=2", "workload.replay_concurrency=0",
			"workload.arrival_speedup_ratio=8"}, conversation: true},
		// The SGLang and TensorRT-LLM schedulers' own paths (docs/backend-schedulers.md): LPM,
		// decode retraction under a small pool, chunked prefill with whole-sequence reservations.
		{sets: []string{"backend=sglang", "sglang_schedule_policy=lpm", "num_gpu_blocks=300", "sglang_schedule_conservativeness=0.3"}, conversation: true},
		{sets: []string{"backend=sglang", "sglang_max_prefill_tokens=4096", "batched_tokens=2048"}},
		{sets: []string{"backend=trtllm", "trtllm_enable_chunked_prefill=true", "num_gpu_blocks=600"}, conversation: true},
		// Dynamo's planner and the worker lifecycle (config/planner.go, engine/fleet.go): both
		// scaling loops on short intervals under an SLA, then load scaling on latency with a
		// failure, migration and cold start-up, then failures at a rate.
		{sets: []string{"goal.sla.ttft_ms=300", "goal.sla.tpot_ms=20", "startup_time=0.5", "load_predictor=kalman_reactive_log1p",
			"planner_load_sensitivity=aggressive", "planner_fpm_sampling=small",
			"planner_scaling_policy=[{enable_throughput_scaling: true, enable_load_scaling: true, throughput_adjustment_interval_seconds: 2, load_adjustment_interval_seconds: 0.5}]"}},
		{sets: []string{"planner_optimization_target=latency", "worker_failures=[{at_s: 1, worker: 1}, {at_s: 3, worker: 0}]", "migration_limit=1", "startup_time=1",
			"planner_scaling_policy=[{enable_throughput_scaling: false, enable_load_scaling: true, throughput_adjustment_interval_seconds: 180, load_adjustment_interval_seconds: 0.25}]"}, conversation: true},
		{sets: []string{"worker_failures={rate_per_hour: 3600}", "startup_time=0.2", "workload.replay_concurrency=0", "workload.arrival_speedup_ratio=4"}},
		// The router's tables grow: over 11,000 distinct trace blocks cached (a large KV
		// cache) and thousands in flight at once (open loop at 20×).
		{sets: []string{"num_gpu_blocks=40000", "workload.replay_concurrency=0", "workload.arrival_speedup_ratio=20"}, long: true},
		// Small caches evicting all along: blocks released, taken again and evicted (the
		// pools' stale LRU entries), and trace blocks leaving a worker's part of the router's
		// index sub-block by sub-block. Two mutants of the first full mutation run with
		// silicon/ reached these only outside the digest.
		{sets: []string{"num_gpu_blocks=400", "replicas=4", "workload.replay_concurrency=32"}, long: true},
		{sets: []string{"num_gpu_blocks=400", "replicas=4", "workload.replay_concurrency=32"}}, // eight engine blocks per trace block
		// A fleet past 64 workers, whose router keeps its index in wide masks (router/cached.go),
		// evicting all along: trace blocks cached by several workers lose holders down to one.
		// The first full mutation run with silicon/ had no such fleet in either suite.
		{sets: []string{"replicas=65", "num_gpu_blocks=250", "workload.replay_concurrency=130"}, wide: true},
		// The same at 16 engine blocks per trace block, a warm router and a half credit: more
		// workers hold part of a trace block. Which wide-index mutants a replay tells apart
		// varies from case to case: the one above misses one that this one catches.
		{sets: []string{"replicas=65", "num_gpu_blocks=400", "workload.replay_concurrency=130", "block_size=32",
			"router_temperature=0.3", "overlap_score_credit=0.5"}, wide: true},
	}
}

// modelCases replay every embedded model on every GPU, serving precision and vLLM version
// it has silicon tables for, each on its first layout (Embedded's order), with the settings
// that only some families reach (shared experts' stream, FP8 served from BF16) varied where
// they apply.
func modelCases() ([]replayCase, error) {
	tables, err := model.Embedded()
	if err != nil {
		return nil, err
	}
	var out []replayCase
	seen := map[string]bool{}
	for _, t := range tables {
		key := strings.Join([]string{t.Model, t.HardwareSKU, t.Quantization, t.BackendVersion, t.TimingReference}, " ")
		if t.TimingReference != "" || t.ValidateOnly() || seen[key] {
			continue
		}
		seen[key] = true
		l := t.Layout
		version := "backend_version=" + t.BackendVersion
		if t.Backend != model.BackendVLLM { // SGLang and TRT-LLM run their embedded release
			version = "backend=" + string(t.Backend)
		}
		sets := []string{"model_name=" + t.Model, "hardware_sku=" + t.HardwareSKU, version,
			"context_length=32768",
			fmt.Sprintf("parallel_configs=[{tp: %d, attention_dp: %d, moe_tp: %d, moe_ep: %d, replicas: 2}]", l.TP, l.AttentionDP, l.MoETP, l.MoEEP)}
		if t.Quantization != "" {
			sets = append(sets, "quantization="+t.Quantization)
		}
		out = append(out, replayCase{sets: sets, conversation: len(out)%2 == 1})
		if t.SharedExperts.Values != nil {
			out = append(out, replayCase{sets: append(sets[:len(sets):len(sets)], "shared_experts_stream_tokens=96")})
		}
	}
	return out, nil
}

// longConversation is the long trace's length: enough distinct blocks to grow the router's
// index past its initial tables.
const longConversation = 600

// wideAgent is the wide fleet's trace length: enough requests for 65 workers to share
// trace blocks and evict them.
const wideAgent = 1000

// canonicalTraceSet is the canonical replays' traces (canonicalTraces).
type canonicalTraceSet struct{ agent, conv, long, wide *trace.Trace }

// canonicalTraces are the replays' traces: both synthetic generators, each written as
// Mooncake JSONL and parsed back, so the parser and writer are on the path too; conv is
// the long conversation trace's first 120 requests; wide is a longer toolagent trace of
// another seed.
func canonicalTraces() (canonicalTraceSet, error) {
	read := func(profile string, seed uint64, requests int) (*trace.Trace, error) {
		t, err := trace.Synthesize(profile, seed, requests)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := trace.Write(&b, t.Requests); err != nil {
			return nil, err
		}
		return trace.Parse(&b, profile+".jsonl", t.BlockSize)
	}
	var ts canonicalTraceSet
	var err error
	if ts.agent, err = read("toolagent", 3, 160); err != nil {
		return ts, err
	}
	if ts.long, err = read("conversation", 5, longConversation); err != nil {
		return ts, err
	}
	if ts.wide, err = read("toolagent", 4, wideAgent); err != nil {
		return ts, err
	}
	ts.conv = ts.long.First(120)
	return ts, nil
}

// canonicalReplays writes every case's report to w, or the error that ended it: a build
// whose --set, experiment or engine code refuses what this one accepts names itself
// differently too.
func canonicalReplays(w io.Writer) error {
	ts, err := canonicalTraces()
	if err != nil {
		return err
	}
	models, err := modelCases()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for i, c := range append(knobCases(), models...) {
		tr := c.trace(ts)
		base := replayBase
		if !c.derived {
			base = append(base[:len(base):len(base)], replayBlocks)
		}
		sets := overriding(base, c.sets)
		fmt.Fprintln(w, i, sets)
		rep, err := replayCaseRun(sets, tr, c.edit)
		if err != nil {
			fmt.Fprintln(w, "error:", err)
			continue
		}
		rep.Summary.WallTimeMS = 0 // the one field that differs between identical runs
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	return nil
}

// replayCaseRun replays tr under the seed experiment with sets applied, at its default point.
func replayCaseRun(sets []string, tr *trace.Trace, edit func(*engine.Config)) (*engine.Report, error) {
	f := Default()
	if err := f.Apply(sets); err != nil {
		return nil, err
	}
	e, err := newExperiment(f, tr)
	if err != nil {
		return nil, err
	}
	cfg, err := e.EngineConfig(f.DefaultPoint())
	if err != nil {
		return nil, err
	}
	cfg.RecordRequests = true
	if edit != nil {
		edit(&cfg)
	}
	return e.Run(context.Background(), cfg, 0)
}
