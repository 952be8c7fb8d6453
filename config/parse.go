package config

// Reading an experiment file's YAML: the sections, each key's node checked where it stands
// (so an error names its line), search_space's lists and knobs, parallel_configs.

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// Parse reads an experiment file's text (a leading UTF-8 byte-order mark is skipped); name is
// used in error messages.
func Parse(data []byte, name string) (*File, error) {
	data = bytes.TrimPrefix(data, []byte{0xef, 0xbb, 0xbf})
	if err := checkYAMLShape(data, name); err != nil {
		return nil, err
	}
	doc, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := newFile(name)
	if len(doc.Docs) != 1 || doc.Docs[0].Body == nil {
		return nil, &Error{File: name, Key: "(document)", Msg: "expected one YAML document with search_space, workload, goal, sweep"}
	}
	if err := f.noAnchorsOrTags(doc.Docs[0].Body); err != nil {
		return nil, err
	}
	root, ok := doc.Docs[0].Body.(*ast.MappingNode)
	if !ok {
		return nil, f.errAt(doc.Docs[0].Body, "(document)", "expected a mapping at the top level")
	}
	if err := f.walkSections(root); err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) errAt(n ast.Node, key, format string, args ...any) error {
	line := 0
	if n != nil && n.GetToken() != nil {
		line = n.GetToken().Position.Line
	}
	return &Error{File: f.Name, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (f *File) walkSections(root *ast.MappingNode) error {
	seen := map[string]bool{}
	for _, mv := range root.Values {
		sec := keyText(mv)
		if seen[sec] {
			return f.errAt(mv.Key, sec, "duplicate key")
		}
		seen[sec] = true
		m, ok := mv.Value.(*ast.MappingNode)
		if !ok {
			return f.errAt(mv.Value, sec, "expected a mapping of keys")
		}
		switch sec {
		case "search_space", "workload", "goal", "sweep", "validate":
		default:
			return f.errAt(mv.Key, sec, "unknown section (want search_space, workload, goal, sweep or validate)")
		}
		inner := map[string]bool{}
		for _, kv := range m.Values {
			k := keyText(kv)
			path := sec + "." + k
			if inner[k] {
				return f.errAt(kv.Key, path, "duplicate key")
			}
			inner[k] = true
			if err := f.setNode(path, kv.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

func keyText(mv *ast.MappingValueNode) string {
	if mv.Key == nil || mv.Key.GetToken() == nil {
		return ""
	}
	return mv.Key.GetToken().Value
}

// setNode assigns one key from its YAML node. The key table (keys.go) decides which keys
// exist, besides the list keys of search_space, which register themselves (File.lists) and
// whose table entries TestKeyTableIsTheParsers requires.
func (f *File) setNode(path string, n ast.Node) error {
	sec, key, _ := strings.Cut(path, ".")
	isList := sec == "search_space" && slices.ContainsFunc(f.lists, func(l list) bool { return l.key == key })
	if !keyIndex[path] && !isList {
		return f.errAt(n, path, "unknown key")
	}
	switch sec {
	case "search_space":
		return f.setSearch(path, key, n)
	case "workload":
		w := &f.Workload
		switch key {
		case "trace_path":
			return f.str(path, n, &w.TracePath)
		case "trace_format":
			if err := f.str(path, n, &w.TraceFormat); err != nil {
				return err
			}
			if _, err := trace.ParseFormatName(w.TraceFormat); err != nil {
				return f.errAt(n, path, "unsupported format %q (auto, mooncake, mooncake-delta, agentic_mooncake or applied_compute_agentic)", w.TraceFormat)
			}
			return nil
		case "trace_block_size":
			return f.integer(path, n, &w.TraceBlockSize, 1, 1<<20)
		case "replay_concurrency":
			return f.integer(path, n, &w.ReplayConcurrency, 0, 1<<20)
		case "arrival_speedup_ratio":
			return f.number(path, n, &w.ArrivalSpeedupRatio, 1e-6, 1e6)
		case "search_requests":
			return f.integer(path, n, &w.SearchRequests, 0, math.MaxInt32)
		case "seed":
			return f.seed(path, n, &w.Seed)
		case "strict":
			return f.boolean(path, n, &w.Strict)
		}
	case "goal":
		g := &f.Goal
		switch key {
		case "target":
			return f.oneOf(path, n, &g.Target, goalTargets)
		case "max_ttft_ms":
			return f.number(path, n, &g.MaxTTFTMS, 0, math.MaxFloat64)
		case "max_tpot_ms":
			return f.number(path, n, &g.MaxTPOTMS, 0, math.MaxFloat64)
		case "max_e2e_latency_ms":
			return f.number(path, n, &g.MaxE2EMS, 0, math.MaxFloat64)
		case "max_itl_ms":
			return f.number(path, n, &g.MaxITLMS, 0, math.MaxFloat64)
		case "max_p95_ttft_ms":
			return f.number(path, n, &g.MaxP95TTFTMS, 0, math.MaxFloat64)
		case "max_p95_tpot_ms":
			return f.number(path, n, &g.MaxP95TPOTMS, 0, math.MaxFloat64)
		case "max_p95_e2e_latency_ms":
			return f.number(path, n, &g.MaxP95E2EMS, 0, math.MaxFloat64)
		case "sla":
			m, ok := n.(*ast.MappingNode)
			if !ok {
				return f.errAt(n, path, "want a mapping like {ttft_ms: 2000, tpot_ms: 50, percentile: 90}")
			}
			for _, kv := range m.Values {
				if err := f.setNode(path+"."+keyText(kv), kv.Value); err != nil {
					return err
				}
			}
			return nil
		case "sla.ttft_ms":
			return f.number(path, n, &g.SLA.TTFTMS, 0, math.MaxFloat64)
		case "sla.tpot_ms":
			return f.number(path, n, &g.SLA.TPOTMS, 0, math.MaxFloat64)
		case "sla.e2e_latency_ms":
			return f.number(path, n, &g.SLA.E2EMS, 0, math.MaxFloat64)
		case "sla.percentile":
			return f.number(path, n, &g.SLAPercentile, 1, 100)
		}
	case "sweep":
		s := &f.Sweep
		switch key {
		case "max_rounds":
			return f.integer(path, n, &s.MaxRounds, 1, 10000)
		case "candidates_per_round":
			return f.integer(path, n, &s.CandidatesPerRound, 1, 10000)
		case "parallel_evals":
			return f.integer(path, n, &s.ParallelEvals, 1, 1024)
		case "algorithm":
			return f.oneOf(path, n, &s.Algorithm, sweepAlgorithms)
		case "seed":
			return f.seed(path, n, &s.Seed)
		}
	case "validate":
		v := &f.Validate
		switch key {
		case "enabled":
			return f.boolean(path, n, &v.Enabled)
		case "requests":
			return f.integer(path, n, &v.Requests, 0, math.MaxInt32)
		}
	}
	return f.errAt(n, path, "unknown key")
}

func (f *File) setSearch(path, key string, n ast.Node) error {
	if ok, err := f.setPlanner(path, key, n); ok {
		return err
	}
	switch key {
	case "model_name":
		if err := f.str(path, n, &f.ModelName); err != nil {
			return err
		}
		id, err := model.ResolveModel(f.ModelName)
		if err != nil {
			return f.errAt(n, path, "%s", err)
		}
		f.ModelName = id
		return nil
	case "quantization":
		return f.str(path, n, &f.Quantization)
	case "backend_version":
		return f.str(path, n, &f.BackendVersion)
	case "gpu_budget":
		return f.integer(path, n, &f.GPUBudget, 1, 1<<20)
	case "min_gpu_budget":
		return f.integer(path, n, &f.MinGPUBudget, 1, 1<<20)
	case "context_length":
		return f.integer(path, n, &f.ContextLength, 1, 1<<24)
	case "gpu_memory_utilization":
		return f.number(path, n, &f.GPUMemoryUtilization, 0.05, 1)
	case "num_gpu_blocks":
		return f.integer(path, n, &f.NumGPUBlocks, 0, 1<<30)
	case "block_size":
		f.blockSizeGiven = true
		return f.integer(path, n, &f.BlockSize, 1, 1<<16)
	case "async_scheduling":
		return f.boolean(path, n, &f.AsyncScheduling)
	case "api_server_tokenize_ns":
		return f.integer(path, n, &f.APIServerTokenizeNS, 0, 1e6)
	case "request_path_us":
		return f.integer(path, n, &f.RequestPathUS, 0, 1e6)
	case "stream_end_us":
		return f.integer(path, n, &f.StreamEndUS, 0, 1e6)
	case "api_server_tokenize_batching":
		return f.oneOf(path, n, &f.APIServerTokenizeBatching, model.TokenizeBatchings())
	case "max_cudagraph_capture_size":
		return f.integer(path, n, &f.MaxCUDAGraphCaptureSize, 0, 1<<20)
	case "cudagraph_mode":
		return f.oneOf(path, n, &f.CUDAGraphMode, model.CUDAGraphModes())
	case "shared_experts_stream_tokens":
		return f.integer(path, n, &f.SharedExpertsStreamTokens, -1, 1<<20)
	case "fuse_allreduce_rms":
		var on bool
		if err := f.boolean(path, n, &on); err != nil {
			return err
		}
		f.FuseAllReduceRMS = &on
		return nil
	case KeyFloat32MatmulPrecision:
		return f.oneOf(path, n, &f.Float32MatmulPrecision, model.Float32MatmulPrecisions())
	case "sglang_schedule_policy":
		return f.oneOf(path, n, &f.Scheduler.SGLangPolicy, []string{engine.SGLangFCFS, engine.SGLangLPM})
	case "sglang_max_prefill_tokens":
		return f.integer(path, n, &f.Scheduler.SGLangMaxPrefillTokens, 0, 1<<22)
	case "sglang_scheduler_recv_interval":
		return f.integer(path, n, &f.Scheduler.SGLangRecvInterval, 0, 1000)
	case "sglang_schedule_conservativeness":
		return f.number(path, n, &f.Scheduler.SGLangConservativeness, 0, 100)
	case "trtllm_enable_chunked_prefill":
		return f.boolean(path, n, &f.Scheduler.TRTLLMChunkedPrefill)
	case "trtllm_batch_wait_timeout_iters":
		return f.integer(path, n, &f.Scheduler.TRTLLMBatchWaitTimeoutIters, 0, 1000)
	case "trtllm_batch_wait_max_tokens_ratio":
		return f.number(path, n, &f.Scheduler.TRTLLMBatchWaitMaxTokensRatio, 0, 1)
	case "trtllm_adp_balance":
		return f.boolean(path, n, &f.Scheduler.TRTLLMADPBalance)
	case "trtllm_adp_timeout_iters":
		return f.integer(path, n, &f.Scheduler.TRTLLMADPTimeoutIters, 0, 10000)
	case "trtllm_adp_batching_wait_iters":
		return f.integer(path, n, &f.Scheduler.TRTLLMADPBatchingWaitIters, 0, 10000)
	case "memory_budget":
		return f.oneOf(path, n, &f.MemoryBudget, model.MemoryBudgets())
	case "parallel_configs":
		return f.setParallel(path, n)
	}
	if ok, err := f.setDisaggScalar(path, key, n); ok {
		return err
	}
	for i := range f.lists {
		if f.lists[i].key == key {
			vals, err := f.scalars(path, n)
			if err != nil {
				return err
			}
			for _, v := range vals {
				if err := f.checkKnob(path, key, v, n); err != nil {
					return err
				}
			}
			f.lists[i].values = vals
			return nil
		}
	}
	return f.errAt(n, path, "unknown key")
}

// checkKnob validates one value of a list-valued search_space key.
func (f *File) checkKnob(path, key string, v Value, n ast.Node) error {
	c := valueCheck{v: v, fail: func(format string, a ...any) error { return f.errAt(n, path, format, a...) }}
	oneOf, numIn := c.oneOf, c.numIn
	switch key {
	case KeyHardwareSKU:
		if v.IsNum || v.Text == "" {
			return f.errAt(n, path, "want a GPU name such as b200_sxm (see routerlab model list), got %q", v.Text)
		}
		return nil
	case KeyBackend:
		return oneOf(model.BackendNames()...)
	case "deployment_mode":
		return oneOf(ModeAgg, ModeDisagg)
	case "prefill_max_num_batched_tokens", "decode_max_num_batched_tokens":
		return numIn(1, 1<<22, true)
	case "prefill_max_num_seqs", "decode_max_num_seqs":
		return numIn(1, 1<<16, true)
	case "planner_scaling_policy":
		if _, err := policyOf(v.Text); err != nil {
			return f.errAt(n, path, "%s", err)
		}
		return nil
	case KeyRouterMode:
		modes := router.Modes()
		names := make([]string, len(modes))
		for i, m := range modes {
			names[i] = string(m)
		}
		return oneOf(names...)
	case KeyKVCacheDtype:
		return oneOf(model.KVFP8, model.KVBF16, kvAuto)
	case KeyTimingReference:
		return oneOf(model.TimingReferences()...)
	case "agg_max_num_batched_tokens":
		return numIn(1, 1<<22, true)
	case "agg_max_num_seqs":
		return numIn(1, 1<<16, true)
	case KeyOverlapScoreCredit:
		// Finite and non-negative, no upper bound: the modelled revision (057096c3,
		// lib/kv-router/src/scheduling/config.rs, validate_overlap_score_credit) lets a
		// credit above 1 give cached blocks extra weight; earlier revisions capped it at 1.
		return numIn(0, 1e6, false)
	case KeyPrefillLoadScale:
		return numIn(0, 1024, false)
	case KeyRouterTemperature:
		return numIn(0, 100, false)
	}
	if k, ok := routerKeyOf(key); ok {
		return k.check(c)
	}
	return nil
}

func (f *File) setParallel(path string, n ast.Node) error {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return f.errAt(n, path, "want a list of {tp, moe_ep, replicas, ...}, or [] to derive them")
	}
	if len(seq.Values) == 0 { // derived when the file is checked (derive.go)
		f.setParallelList(nil)
		f.derive, f.deriveLine = true, 0
		if tok := n.GetToken(); tok != nil {
			f.deriveLine = tok.Position.Line
		}
		return nil
	}
	var pcs []ParallelConfig
	var dps []DisaggParallel
	for _, item := range seq.Values {
		m, ok := item.(*ast.MappingNode)
		if !ok {
			return f.errAt(item, path, "want a mapping like {tp: 4, moe_ep: 4, replicas: 8}")
		}
		if isDisaggEntry(m) {
			dp, err := f.parseDisaggEntry(path, m)
			if err != nil {
				return err
			}
			dps = append(dps, dp)
			continue
		}
		pc, err := f.parseShape(path, m)
		if err != nil {
			return err
		}
		f.noteDPLine(pc, m)
		pcs = append(pcs, pc)
	}
	f.derive, f.skipped = false, nil
	f.setFleets(pcs, dps) // both kinds: one branch per deployment_mode (checkDisagg)
	return nil
}

// parseShape reads one worker layout {tp, attention_dp, moe_tp, moe_ep, replicas}.
func (f *File) parseShape(path string, m *ast.MappingNode) (ParallelConfig, error) {
	item := ast.Node(m)
	pc := ParallelConfig{TP: 1, AttentionDP: 1, Replicas: 1} // moe_tp, moe_ep: 0 until given
	for _, kv := range m.Values {
		k := keyText(kv)
		p := path + "." + k
		var dst *int
		switch k {
		case "tp":
			dst = &pc.TP
		case "attention_dp", "dp":
			dst = &pc.AttentionDP
		case "moe_tp":
			dst = &pc.MoETP
		case "moe_ep":
			dst = &pc.MoEEP
		case "replicas":
			dst = &pc.Replicas
		default:
			return pc, f.errAt(kv.Key, p, "unknown key (want tp, attention_dp, moe_tp, moe_ep, replicas)")
		}
		hi := 4096
		if k == "replicas" {
			hi = router.MaxWorkers // the router's indexer keeps one bit per worker
		}
		if err := f.integer(p, kv.Value, dst, 1, hi); err != nil {
			return pc, err
		}
	}
	// Without expert parallelism vLLM shards every expert over all tp × attention_dp GPUs
	// (a dense model's layout); one of the two MoE keys implies the other.
	gpus := pc.TP * pc.AttentionDP
	switch {
	case pc.MoETP == 0 && pc.MoEEP == 0:
		pc.MoETP, pc.MoEEP = gpus, 1
	case pc.MoETP == 0 && gpus%pc.MoEEP == 0:
		pc.MoETP = gpus / pc.MoEEP
	case pc.MoEEP == 0 && gpus%pc.MoETP == 0:
		pc.MoEEP = gpus / pc.MoETP
	case pc.MoETP == 0 || pc.MoEEP == 0:
		return pc, f.errAt(item, path, "moe_tp × moe_ep must equal tp × attention_dp (%d): %d does not divide it", gpus, max(pc.MoETP, pc.MoEEP))
	}
	if pc.MoETP*pc.MoEEP != pc.TP*pc.AttentionDP {
		return pc, f.errAt(item, path, "moe_tp × moe_ep (%d) must equal tp × attention_dp (%d)", pc.MoETP*pc.MoEEP, pc.TP*pc.AttentionDP)
	}
	return pc, nil
}

// setParallelConfigs replaces search_space.parallel_configs with pcs, checked by the caller.
func (f *File) setParallelConfigs(pcs []ParallelConfig) {
	f.derive, f.skipped = false, nil
	f.setParallelList(pcs)
}

// setParallelList replaces the list's entries.
func (f *File) setParallelList(pcs []ParallelConfig) { f.setFleets(pcs, nil) }
