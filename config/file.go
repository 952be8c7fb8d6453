// Package config reads routerlab's experiment file: the seed's YAML with a deployment, a
// search space of router knobs, a workload, a goal and sweep settings. A list-valued key of
// search_space is a search dimension; a replay takes Dynamo's default for the router knobs and
// the first value of every other list (File.DefaultPoint).
package config

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
)

// Knob keys of search_space that the router reads.
const (
	KeyRouterMode         = "router_mode"
	KeyOverlapScoreCredit = "overlap_score_credit"
	KeyPrefillLoadScale   = "prefill_load_scale"
	KeyRouterTemperature  = "router_temperature"
	// KeyHardwareSKU is the GPU a worker runs on (an embedded system, see model list); a
	// list of them makes the GPU a search dimension.
	KeyHardwareSKU = "hardware_sku"
	// KeyKVCacheDtype is vLLM's --kv-cache-dtype, a deployment key that may be listed.
	KeyKVCacheDtype = "kv_cache_dtype"
	// KeyFloat32MatmulPrecision is vLLM's VLLM_FLOAT32_MATMUL_PRECISION, a deployment setting.
	KeyFloat32MatmulPrecision = "float32_matmul_precision"
	// KeyTimingReference is how steps are priced and scheduled (model.ReferenceSilicon or
	// model.ReferenceDynosim), a key that may be listed.
	KeyTimingReference = "timing_reference"
)

// seedYAML is the seed experiment file, the same text as examples/router-sweep.yaml.
//
//go:embed seed.yaml
var seedYAML []byte

// kvAuto is vLLM's --kv-cache-dtype auto: the model's own dtype, BF16 for this checkpoint.
const kvAuto = "auto"

// kvCacheDtype resolves a kv_cache_dtype value to the model's name for it.
func kvCacheDtype(v Value) string {
	if v.Text == kvAuto {
		return model.KVBF16
	}
	return v.Text
}

// Value is one scalar of a search_space list.
type Value struct {
	Text  string
	Num   float64
	IsNum bool
}

func (v Value) String() string { return v.Text }

// Dimension is a list-valued search_space key.
type Dimension struct {
	Key    string
	Values []Value
	// Log is set for numeric values spanning more than a decade: a search should
	// compare them on a logarithmic axis.
	Log bool
}

// ParallelConfig is one entry of search_space.parallel_configs.
type ParallelConfig struct {
	TP          int
	AttentionDP int
	MoETP       int
	MoEEP       int
	Replicas    int
}

func (p ParallelConfig) String() string {
	return fmt.Sprintf("tp%d-dp%d-moetp%d-ep%d-x%d", p.TP, p.AttentionDP, p.MoETP, p.MoEEP, p.Replicas)
}

// Workload says which requests are replayed and how they arrive.
type Workload struct {
	TracePath           string
	TraceFormat         string
	TraceBlockSize      int
	ReplayConcurrency   int     // > 0: closed loop; 0: open loop on timestamps
	ArrivalSpeedupRatio float64 // open loop: timestamps are divided by it
	SearchRequests      int     // first N requests used by the sweep's search phase
	Seed                uint64
	// Strict makes a request the fleet would reject (longer than context_length) an error
	// naming its line instead of a counted rejection.
	Strict bool
}

// SLAText describes goal.sla, e.g. "TTFT ≤ 2000 ms, TPOT ≤ 50 ms for 90 % of requests"; ""
// when there is none.
func (g Goal) SLAText() string {
	var c []string
	for _, b := range [...]struct {
		name  string
		bound float64
	}{{"TTFT", g.SLA.TTFTMS}, {"TPOT", g.SLA.TPOTMS}, {"e2e latency", g.SLA.E2EMS}} {
		if b.bound > 0 {
			c = append(c, fmt.Sprintf("%s ≤ %g ms", b.name, b.bound))
		}
	}
	if len(c) == 0 {
		return ""
	}
	return fmt.Sprintf("%s for %g %% of requests", strings.Join(c, ", "), g.SLAPercentile)
}

// Goal is what a sweep optimises.
type Goal struct {
	Target string // e2e_latency | ttft | tpot | throughput
	// SLA bounds on means in ms (0 = none); with throughput as target this is
	// "maximise throughput subject to ...".
	MaxTTFTMS float64
	MaxTPOTMS float64
	MaxE2EMS  float64
	// SLA is a per-request objective (goal.sla): every replay reports the share of requests
	// meeting it and the goodput, and SLAPercentile is the share (in %) that must.
	SLA           engine.SLO
	SLAPercentile float64
}

// SweepSettings shape the search.
type SweepSettings struct {
	MaxRounds          int
	CandidatesPerRound int
	ParallelEvals      int
	Algorithm          string // gp_bandit | random | grid
	Seed               uint64
}

// ValidateSettings control the full-trace validation after a sweep.
type ValidateSettings struct {
	Enabled  bool
	Requests int // 0 = whole trace
}

// File is a parsed experiment file.
type File struct {
	Name string // path, or "embedded defaults"

	ModelName string
	// Quantization is the serving precision when it is not the checkpoint's (vLLM's
	// --quantization, e.g. fp8 for a BF16 checkpoint); "" serves the checkpoint as it is.
	Quantization   string
	BackendVersion string
	GPUBudget      int
	ContextLength  int
	// GPUMemoryUtilization and NumGPUBlocks override the memory model (0 = derive).
	GPUMemoryUtilization float64
	NumGPUBlocks         int
	BlockSize            int
	AsyncScheduling      bool // vLLM --async-scheduling (off: step-synchronous)
	// APIServerTokenizeNS is the API server's tokenisation cost per prompt token (ns) when
	// clients send text straight to vLLM; 0 (the default): Dynamo's frontend hands the
	// workers token ids.
	APIServerTokenizeNS int
	// RequestPathUS and StreamEndUS are the client's HTTP request path when clients post
	// straight to vLLM's OpenAI server (model.Deployment): from the send to the API server's
	// handler, and in a closed loop from a stream's last token to the next send, in µs. 0 (the
	// default): the simulator's instant client.
	RequestPathUS, StreamEndUS int
	// APIServerTokenizeBatching is how that tokenizer runs a batch of prompts: serial (vLLM
	// 0.16 on; "" too) or parallel (0.10 to 0.15) (model.TokenizeBatchingOf).
	APIServerTokenizeBatching string
	// MaxCUDAGraphCaptureSize is vLLM's max_cudagraph_capture_size: larger steps run without
	// CUDA graphs. 0 (the default): vLLM's own, min(2 × max_num_seqs, 512).
	MaxCUDAGraphCaptureSize int
	// CUDAGraphMode is vLLM's compilation_config.cudagraph_mode: "" (the default: vLLM's own)
	// or PIECEWISE graph every step up to the capture size; FULL_DECODE_ONLY runs every step
	// that holds a prefill chunk without graphs (model.CUDAGraphModes).
	CUDAGraphMode string
	// SharedExpertsStreamTokens is VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD: steps of at most
	// this many tokens overlap a MoE model's shared experts with its routed experts. 0 (the
	// default): vLLM's, 256; -1: no second stream (VLLM_DISABLE_SHARED_EXPERTS_STREAM=1).
	SharedExpertsStreamTokens int
	// FuseAllReduceRMS is vLLM's compilation_config.pass_config.fuse_allreduce_rms: small steps
	// run each all-reduce with the add + RMSNorm after it as one FlashInfer kernel. nil (the
	// default): as backend_version's vLLM does at -O2 for each layout
	// (model.VLLMFusesAllReduceRMS: on from 0.18 at TP > 1 without attention DP).
	FuseAllReduceRMS *bool
	// Float32MatmulPrecision is VLLM_FLOAT32_MATMUL_PRECISION: highest (vLLM's default; the FP32
	// router gate on CUDA cores) or high (TF32 tensor cores). "" means highest.
	Float32MatmulPrecision string
	// MemoryBudget is how the KV cache's memory is computed: aiconfigurator
	// (AIConfigurator's vLLM budget) or vllm (what vLLM's profiler takes off before 0.21);
	// "": the timing reference's (model.Deployment.Budget).
	MemoryBudget string

	// lists holds every list-capable search_space key in canonical order.
	lists []list

	Workload Workload
	Goal     Goal
	Sweep    SweepSettings
	Validate ValidateSettings
}

// list is one list-capable search_space key with its values.
type list struct {
	key      string
	values   []Value
	parallel []ParallelConfig // only for parallel_configs
}

// listKeys are the search_space keys that may hold several values, in the order
// dimensions are reported.
var listKeys = []string{
	KeyHardwareSKU, "backend", "deployment_mode", "parallel_configs",
	"agg_max_num_batched_tokens", "agg_max_num_seqs", KeyKVCacheDtype, KeyTimingReference, "planner_scaling_policy",
	KeyRouterMode, KeyOverlapScoreCredit, KeyPrefillLoadScale, KeyRouterTemperature,
}

// Error is a configuration problem at a place in a file.
type Error struct {
	File string
	Line int // 0 when the place is not a line (e.g. --set)
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
}

// MaxFileBytes bounds an experiment file (1 MiB, hundreds of times the seed's size), so that
// a path such as /dev/zero ends in an error instead of exhausting memory.
const MaxFileBytes = 1 << 20

// Load reads and validates an experiment file.
func Load(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{File: path, Key: "(document)", Msg: fmt.Sprintf("larger than the %d MiB limit of an experiment file", MaxFileBytes>>20)}
	}
	return Parse(data, path)
}

// Default returns the embedded seed experiment on the built-in toolagent-like trace.
func Default() *File {
	f, err := Parse(seedYAML, "embedded defaults")
	if err != nil {
		panic("embedded seed.yaml is invalid: " + err.Error()) // a build defect, caught by tests
	}
	return f
}

func newFile(name string) *File {
	f := &File{
		Name:           name,
		BackendVersion: "0.19.0",
		BlockSize:      64,
		Workload: Workload{
			TracePath: "builtin:toolagent", TraceFormat: "mooncake", TraceBlockSize: 512,
			ReplayConcurrency: 32, ArrivalSpeedupRatio: 1, SearchRequests: 2000, Seed: 42,
		},
		Goal:     Goal{Target: "e2e_latency", SLAPercentile: 90},
		Sweep:    SweepSettings{MaxRounds: 6, CandidatesPerRound: 10, ParallelEvals: 10, Algorithm: "gp_bandit", Seed: 1},
		Validate: ValidateSettings{Enabled: true},
	}
	defaults := map[string][]string{
		"backend": {"vllm"}, "deployment_mode": {"agg"},
		"agg_max_num_batched_tokens": {"16384"}, "agg_max_num_seqs": {"512"}, KeyKVCacheDtype: {model.KVFP8},
		KeyTimingReference: {model.ReferenceSilicon}, "planner_scaling_policy": {"disabled"}, KeyRouterMode: {"kv_router"},
		KeyOverlapScoreCredit: {"1.0"}, KeyPrefillLoadScale: {"1.0"}, KeyRouterTemperature: {"0.0"},
	}
	for _, k := range listKeys {
		l := list{key: k}
		if k == "parallel_configs" {
			l.parallel = []ParallelConfig{{TP: 4, AttentionDP: 1, MoETP: 1, MoEEP: 4, Replicas: 8}}
			l.values = []Value{{Text: l.parallel[0].String()}}
		}
		for _, s := range defaults[k] {
			l.values = append(l.values, scalarValue(s))
		}
		f.lists = append(f.lists, l)
	}
	return f
}

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

// setNode assigns one key from its YAML node.
func (f *File) setNode(path string, n ast.Node) error {
	sec, key, _ := strings.Cut(path, ".")
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
			if w.TraceFormat != "mooncake" {
				return f.errAt(n, path, "unsupported format %q (only mooncake)", w.TraceFormat)
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
			if err := f.str(path, n, &g.Target); err != nil {
				return err
			}
			switch g.Target {
			case "e2e_latency", "ttft", "tpot", "throughput":
				return nil
			}
			return f.errAt(n, path, "unknown target %q (want e2e_latency, ttft, tpot or throughput)", g.Target)
		case "max_ttft_ms":
			return f.number(path, n, &g.MaxTTFTMS, 0, math.MaxFloat64)
		case "max_tpot_ms":
			return f.number(path, n, &g.MaxTPOTMS, 0, math.MaxFloat64)
		case "max_e2e_latency_ms":
			return f.number(path, n, &g.MaxE2EMS, 0, math.MaxFloat64)
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
			if err := f.str(path, n, &s.Algorithm); err != nil {
				return err
			}
			switch s.Algorithm {
			case "gp_bandit", "random", "grid":
				return nil
			}
			return f.errAt(n, path, "unknown algorithm %q (want gp_bandit, random or grid)", s.Algorithm)
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
	switch key {
	case "model_name":
		return f.str(path, n, &f.ModelName)
	case "quantization":
		return f.str(path, n, &f.Quantization)
	case "backend_version":
		return f.str(path, n, &f.BackendVersion)
	case "gpu_budget":
		return f.integer(path, n, &f.GPUBudget, 1, 1<<20)
	case "context_length":
		return f.integer(path, n, &f.ContextLength, 1, 1<<24)
	case "gpu_memory_utilization":
		return f.number(path, n, &f.GPUMemoryUtilization, 0.05, 1)
	case "num_gpu_blocks":
		return f.integer(path, n, &f.NumGPUBlocks, 0, 1<<30)
	case "block_size":
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
	case "memory_budget":
		return f.oneOf(path, n, &f.MemoryBudget, model.MemoryBudgets())
	case "parallel_configs":
		return f.setParallel(path, n)
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
	oneOf := func(allowed ...string) error {
		for _, a := range allowed {
			if v.Text == a {
				return nil
			}
		}
		return f.errAt(n, path, "unsupported value %q (want one of %s)", v.Text, strings.Join(allowed, ", "))
	}
	numIn := func(lo, hi float64, integer bool) error {
		if !v.IsNum || v.Num < lo || v.Num > hi || (integer && v.Num != math.Trunc(v.Num)) {
			kind := "a number"
			if integer {
				kind = "an integer"
			}
			return f.errAt(n, path, "value %q out of range: want %s in [%g, %g]", v.Text, kind, lo, hi)
		}
		return nil
	}
	switch key {
	case KeyHardwareSKU:
		if v.IsNum || v.Text == "" {
			return f.errAt(n, path, "want a GPU name such as b200_sxm (see routerlab model list), got %q", v.Text)
		}
		return nil
	case "backend":
		return oneOf("vllm")
	case "deployment_mode":
		return oneOf("agg")
	case "planner_scaling_policy":
		return oneOf("disabled")
	case KeyRouterMode:
		return oneOf("kv_router", "round_robin", "random", "least_loaded")
	case KeyKVCacheDtype:
		return oneOf(model.KVFP8, model.KVBF16, kvAuto)
	case KeyTimingReference:
		return oneOf(model.TimingReferences()...)
	case "agg_max_num_batched_tokens":
		return numIn(1, 1<<22, true)
	case "agg_max_num_seqs":
		return numIn(1, 1<<16, true)
	case KeyOverlapScoreCredit:
		return numIn(0, 1, false)
	case KeyPrefillLoadScale:
		return numIn(0, 1024, false)
	case KeyRouterTemperature:
		return numIn(0, 100, false)
	}
	return nil
}

func (f *File) setParallel(path string, n ast.Node) error {
	seq, ok := n.(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		return f.errAt(n, path, "want a non-empty list of {tp, moe_ep, replicas, ...}")
	}
	var pcs []ParallelConfig
	for _, item := range seq.Values {
		m, ok := item.(*ast.MappingNode)
		if !ok {
			return f.errAt(item, path, "want a mapping like {tp: 4, moe_ep: 4, replicas: 8}")
		}
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
				return f.errAt(kv.Key, p, "unknown key (want tp, attention_dp, moe_tp, moe_ep, replicas)")
			}
			hi := 4096
			if k == "replicas" {
				hi = router.MaxWorkers // the router's indexer keeps one bit per worker
			}
			if err := f.integer(p, kv.Value, dst, 1, hi); err != nil {
				return err
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
			return f.errAt(item, path, "moe_tp × moe_ep must equal tp × attention_dp (%d): %d does not divide it", gpus, max(pc.MoETP, pc.MoEEP))
		}
		if pc.MoETP*pc.MoEEP != pc.TP*pc.AttentionDP {
			return f.errAt(item, path, "moe_tp × moe_ep (%d) must equal tp × attention_dp (%d)", pc.MoETP*pc.MoEEP, pc.TP*pc.AttentionDP)
		}
		pcs = append(pcs, pc)
	}
	f.setParallelConfigs(pcs)
	return nil
}

// setParallelConfigs replaces search_space.parallel_configs with pcs, checked by the caller.
func (f *File) setParallelConfigs(pcs []ParallelConfig) {
	l := f.list("parallel_configs")
	l.parallel, l.values = pcs, make([]Value, len(pcs))
	for i, pc := range pcs {
		l.values[i] = Value{Text: pc.String()}
	}
}

// check validates relations between keys after a whole file (or a --set) is applied.
func (f *File) check() error {
	if f.ModelName == "" {
		return &Error{File: f.Name, Key: "search_space.model_name", Msg: "missing"}
	}
	if len(f.Values(KeyHardwareSKU)) == 0 {
		return &Error{File: f.Name, Key: "search_space.hardware_sku", Msg: "missing"}
	}
	for _, pc := range f.list("parallel_configs").parallel {
		gpus := pc.TP * pc.AttentionDP * pc.Replicas
		if f.GPUBudget > 0 && gpus > f.GPUBudget {
			return &Error{File: f.Name, Key: "search_space.parallel_configs",
				Msg: fmt.Sprintf("%s needs %d GPUs, more than gpu_budget %d", pc, gpus, f.GPUBudget)}
		}
	}
	return nil
}

func (f *File) list(key string) *list {
	for i := range f.lists {
		if f.lists[i].key == key {
			return &f.lists[i]
		}
	}
	panic("config: unknown list key " + key) // keys are compile-time constants of this package
}
