// Package config reads routerlab's experiment file: the seed's YAML with a deployment, a
// search space of router knobs, a workload, a goal and sweep settings. A list-valued key of
// search_space is a search dimension; a replay takes Dynamo's default for the router knobs and
// the first value of every other list (File.DefaultPoint).
package config

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/layout"
	"github.com/routerlab/routerlab/model"
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
	// KeyBackend is the serving engine (vllm, sglang, trtllm), a deployment key that may be
	// listed: the sweep searches it within each deployment mode.
	KeyBackend = "backend"
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

// GPUs is how many GPUs the fleet of this entry takes: tp × attention_dp per worker.
func (p ParallelConfig) GPUs() int { return p.TP * p.AttentionDP * p.Replicas }

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

// DefaultSLO is the SLO reports count goodput under when goal.sla sets none, so that every
// report has a goodput: AIConfigurator's CLI defaults, --ttft 2000 and --tpot 30
// (ai-dynamo/aiconfigurator src/aiconfigurator/cli/main.py at 0054e1c4). It changes no
// simulated number and no fingerprint; replay's JSON carries goodput only under goal.sla.
var DefaultSLO = engine.SLO{TTFTMS: 2000, TPOTMS: 30}

// ReportSLO is the SLO reports count goodput under: goal.sla, or DefaultSLO without one.
func (g Goal) ReportSLO() engine.SLO {
	if g.SLA.Set() {
		return g.SLA
	}
	return DefaultSLO
}

// SLAText describes ReportSLO, e.g. "TTFT ≤ 200 ms, TPOT ≤ 12 ms for 90 % of requests", and
// says so when it is the default: "… (the default SLO; goal.sla sets another)".
func (g Goal) SLAText() string {
	slo := g.ReportSLO()
	var c []string
	for _, b := range [...]struct {
		name  string
		bound float64
	}{{"TTFT", slo.TTFTMS}, {"TPOT", slo.TPOTMS}, {"e2e latency", slo.E2EMS}} {
		if b.bound > 0 {
			c = append(c, fmt.Sprintf("%s ≤ %g ms", b.name, b.bound))
		}
	}
	text := fmt.Sprintf("%s for %g %% of requests", strings.Join(c, ", "), g.SLAPercentile)
	if !g.SLA.Set() {
		text += " (the default SLO; goal.sla sets another)"
	}
	return text
}

// Goal is what a sweep optimises.
type Goal struct {
	// Target: e2e_latency | ttft | tpot | throughput, or Spica's throughput_per_gpu |
	// throughput_per_user | goodput | goodput_per_gpu | pareto (docs/search-space.md).
	Target string
	// SLA bounds on means in ms (0 = none); with throughput as target this is
	// "maximise throughput subject to ...".
	MaxTTFTMS float64
	MaxTPOTMS float64
	MaxE2EMS  float64
	MaxITLMS  float64 // mean inter-token latency over every token gap
	// SLA bounds on the 95th percentile over requests (0 = none); a request's TPOT is its
	// mean inter-token latency, what Spica's itl_ms bounds.
	MaxP95TTFTMS, MaxP95TPOTMS, MaxP95E2EMS float64
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
	// dpLines: the line of each parallel_configs entry with attention_dp > 1 (attentiondp.go)
	dpLines map[ParallelConfig]int

	ModelName string
	// Quantization is the serving precision when it is not the checkpoint's (vLLM's
	// --quantization, e.g. fp8 for a BF16 checkpoint); "" serves the checkpoint as it is.
	Quantization   string
	BackendVersion string
	GPUBudget      int
	// MinGPUBudget is the fewest GPUs a derived configuration may take (0: no floor).
	MinGPUBudget  int
	ContextLength int
	// GPUMemoryUtilization and NumGPUBlocks override the memory model (0 = derive).
	GPUMemoryUtilization float64
	NumGPUBlocks         int
	BlockSize            int
	// blockSizeGiven: the file or a --set gave block_size; otherwise TensorRT-LLM workers
	// take its own default, engine.TRTLLMTokensPerBlock (blockSizeFor).
	blockSizeGiven  bool
	AsyncScheduling bool // vLLM --async-scheduling (off: step-synchronous)
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
	// 0.16 on; "" too) or parallel (0.10 to 0.15) (model.TokenizeBatchingOf); each: no batch,
	// every prompt as it arrives (SGLang).
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
	// Scheduler holds the SGLang and TensorRT-LLM scheduler arguments (the sglang_* and
	// trtllm_* keys); zero: each engine's defaults (docs/backend-schedulers.md).
	Scheduler engine.SchedulerConfig
	// MemoryBudget is how the KV cache's memory is computed: aiconfigurator
	// (AIConfigurator's vLLM budget) or vllm (what vLLM's profiler takes off before 0.21);
	// "": the timing reference's (model.Deployment.Budget).
	MemoryBudget string
	// Disagg holds the disaggregated fleet's scalar keys (disagg.go).
	Disagg DisaggSettings

	// lists holds every list-capable search_space key in canonical order.
	lists []list
	// derive: parallel_configs was left empty and is derived at every check (derive.go),
	// leaving out skipped.
	derive     bool
	deriveLine int // where parallel_configs: [] stands, for errors (0: --set)
	skipped    []layout.Skip

	Planner  PlannerSettings // the planner and the worker lifecycle (planner.go)
	Workload Workload
	Goal     Goal
	Sweep    SweepSettings
	Validate ValidateSettings
}

// list is one list-capable search_space key with its values.
type list struct {
	key      string
	values   []Value
	parallel []ParallelConfig // only for parallel_configs: aggregated entries
	disagg   []DisaggParallel // only for parallel_configs: disaggregated entries (disagg.go)
}

// listKeys are the search_space keys that may hold several values, in the order
// dimensions are reported.
var listKeys = append([]string{
	KeyHardwareSKU, KeyBackend, "deployment_mode", "parallel_configs",
	"agg_max_num_batched_tokens", "agg_max_num_seqs", KeyKVCacheDtype, KeyTimingReference, "planner_scaling_policy",
	KeyRouterMode, KeyOverlapScoreCredit, KeyPrefillLoadScale, KeyRouterTemperature,
}, loadBlock.names()...) // the router's load and admission keys last (loadkeys.go)

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
		KeyBackend: {string(model.BackendVLLM)}, "deployment_mode": {"agg"},
		"agg_max_num_batched_tokens": {"16384"}, "agg_max_num_seqs": {"512"}, KeyKVCacheDtype: {model.KVFP8},
		KeyTimingReference: {model.ReferenceSilicon}, "planner_scaling_policy": {"disabled"}, KeyRouterMode: {"kv_router"},
		KeyOverlapScoreCredit: {"1.0"}, KeyPrefillLoadScale: {"1.0"}, KeyRouterTemperature: {"0.0"},
	}
	for k, v := range routerDefaults() {
		defaults[k] = []string{v}
	}
	for k, v := range disaggListDefaults {
		defaults[k] = v
	}
	for _, k := range plannerListKeys {
		defaults[k] = []string{"default"}
	}
	for _, k := range slices.Concat(listKeys, indexBlock.names(), disaggListKeys, plannerListKeys) {
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

// check validates relations between keys after a whole file (or a --set) is applied.
func (f *File) check() error {
	if f.ModelName == "" {
		return &Error{File: f.Name, Key: "search_space.model_name", Msg: "missing"}
	}
	if len(f.Values(KeyHardwareSKU)) == 0 {
		return &Error{File: f.Name, Key: "search_space.hardware_sku", Msg: "missing"}
	}
	if err := f.checkLoad(); err != nil {
		return err
	}
	if err := f.checkPlanner(); err != nil {
		return err
	}
	if err := f.checkIndex(); err != nil {
		return err
	}
	if err := f.checkTiers(); err != nil {
		return err
	}
	if f.MinGPUBudget > 0 && f.GPUBudget > 0 && f.MinGPUBudget > f.GPUBudget {
		return &Error{File: f.Name, Key: "search_space.min_gpu_budget", Msg: fmt.Sprintf("%d is more than gpu_budget %d", f.MinGPUBudget, f.GPUBudget)}
	}
	if f.derive {
		if err := f.deriveParallel(); err != nil {
			return err
		}
	}
	if err := f.checkDisagg(); err != nil {
		return err
	}
	if err := f.checkFleetWith(); err != nil {
		return err
	}
	for _, pc := range f.list("parallel_configs").parallel {
		gpus := pc.GPUs()
		if f.GPUBudget > 0 && gpus > f.GPUBudget {
			return &Error{File: f.Name, Key: "search_space.parallel_configs",
				Msg: fmt.Sprintf("%s needs %d GPUs, more than gpu_budget %d (raise search_space.gpu_budget to %d, or --set gpu_budget=%d, to allow it)", pc, gpus, f.GPUBudget, gpus, gpus)}
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
