package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// Experiment is a File with its trace loaded and its worker models built, once; every run of
// a sweep or of the explorer reuses them. It is read-only after construction, so concurrent
// runs may share it.
type Experiment struct {
	File  *File
	Trace *trace.Trace
	// Worker is the worker model of the default point (first value of every list).
	Worker *model.Worker

	workers     map[model.Deployment]*model.Worker
	deployments []model.Deployment // the keys of workers in search-space order
}

// NewExperiment loads the file's trace and builds a worker model for every deployment its
// search space can name.
func NewExperiment(f *File) (*Experiment, error) {
	format, err := trace.ParseFormatName(f.Workload.TraceFormat)
	if err != nil {
		return nil, fmt.Errorf("%s: workload.trace_format: %w", f.Name, err)
	}
	tr, err := trace.LoadFormat(f.Workload.TracePath, f.Workload.TraceBlockSize, format)
	var missing *fs.PathError
	if errors.As(err, &missing) {
		return nil, fmt.Errorf("%s: workload.trace_path: %w", f.Name, err) // the file's own errors name it already
	}
	if err != nil {
		return nil, err
	}
	return newExperiment(f, tr)
}

// newExperiment is NewExperiment on a trace already loaded.
func newExperiment(f *File, tr *trace.Trace) (*Experiment, error) {
	e := &Experiment{File: f, Trace: tr, workers: map[model.Deployment]*model.Worker{}}
	for _, sku := range f.Values(KeyHardwareSKU) {
		for _, pc := range f.list("parallel_configs").parallel {
			for _, mbt := range f.Values("agg_max_num_batched_tokens") {
				for _, seqs := range f.Values("agg_max_num_seqs") {
					// vLLM refuses to start with fewer batched tokens than sequences
					// (SchedulerConfig.verify_max_model_len, vllm/config/scheduler.py at
					// 01230b40); it is also what kept a replay at one token a step busy for
					// hundreds of millions of steps (docs/trust.md).
					if mbt.Num < seqs.Num {
						return nil, fmt.Errorf("%s: search_space: agg_max_num_batched_tokens %d is below agg_max_num_seqs %d: vLLM refuses max_num_batched_tokens below max_num_seqs",
							f.Name, int(mbt.Num), int(seqs.Num))
					}
					for _, kv := range f.Values(KeyKVCacheDtype) {
						for _, ref := range f.Values(KeyTimingReference) {
							for _, b := range f.Values(KeyBackend) {
								d := f.deployment(sku.Text, pc, int(mbt.Num), int(seqs.Num), kvCacheDtype(kv), ref.Text, model.Backend(b.Text))
								w, err := model.NewWorker(d)
								if err != nil {
									return nil, f.shapeError(pc, err)
								}
								e.workers[d] = w
								e.deployments = append(e.deployments, d)
							}
						}
					}
				}
			}
		}
	}
	if err := e.addDisaggWorkers(); err != nil {
		return nil, err
	}
	cfg, err := e.EngineConfig(nil)
	if err != nil {
		return nil, err
	}
	e.Worker = e.workers[unresolved(cfg.Worker)]
	return e, nil
}

// blockSizeFor is a worker's KV block size under backend: block_size, or TensorRT-LLM's own
// tokens_per_block default when the experiment does not give one.
func (f *File) blockSizeFor(backend model.Backend) int {
	if backend == model.BackendTRTLLM && !f.blockSizeGiven {
		return engine.TRTLLMTokensPerBlock
	}
	return f.BlockSize
}

// deployment is one worker of the file's model. backend_version names the vLLM release;
// SGLang and TensorRT-LLM run the release whose tables are embedded (model.Backend's
// EmbeddedVersion), and vLLM's fuse_allreduce_rms default applies to vLLM alone.
func (f *File) deployment(sku string, pc ParallelConfig, maxBatchedTokens, maxSeqs int, kvDtype, timingReference string, backend model.Backend) model.Deployment {
	util := f.GPUMemoryUtilization
	if util == 0 {
		util = 0.9
	}
	version, fuse := f.BackendVersion, f.fusesAllReduceRMS(sku, pc)
	if backend != model.BackendVLLM {
		version, fuse = backend.EmbeddedVersion(), false
	}
	return model.Deployment{
		ModelName: f.ModelName, HardwareSKU: sku, Quantization: f.Quantization,
		Backend: backend, BackendVersion: version,
		TP: pc.TP, AttentionDP: pc.AttentionDP, MoETP: pc.MoETP, MoEEP: pc.MoEEP,
		MaxNumBatchedTokens: maxBatchedTokens, MaxNumSeqs: maxSeqs,
		BlockSize: f.blockSizeFor(backend), GPUMemoryUtilization: util,
		ContextLength: f.ContextLength, NumGPUBlocks: f.NumGPUBlocks, AsyncScheduling: f.AsyncScheduling,
		APIServerTokenizeNS: f.APIServerTokenizeNS, APIServerTokenizeBatching: f.APIServerTokenizeBatching,
		RequestPathUS: f.RequestPathUS, StreamEndUS: f.StreamEndUS,
		MaxCUDAGraphCaptureSize: f.MaxCUDAGraphCaptureSize, CUDAGraphMode: f.CUDAGraphMode,
		SharedExpertsStreamTokens: f.SharedExpertsStreamTokens, FuseAllReduceRMS: fuse,
		KVCacheDtype: kvDtype, Float32MatmulPrecision: f.float32Precision(), TimingReference: timingReference,
		MemoryBudget: f.MemoryBudget,
	}
}

// fusesAllReduceRMS is fuse_allreduce_rms as given, else backend_version's vLLM default for
// the layout on the GPU.
func (f *File) fusesAllReduceRMS(sku string, pc ParallelConfig) bool {
	if f.FuseAllReduceRMS != nil {
		return *f.FuseAllReduceRMS
	}
	return model.VLLMFusesAllReduceRMS(f.BackendVersion, sku, pc.TP, pc.AttentionDP)
}

// unresolved is the map key of a deployment: the same deployment whatever KV block count
// was resolved into it.
func unresolved(d model.Deployment) model.Deployment {
	d.NumGPUBlocks = 0
	return d
}

// EngineConfig returns the simulation of point p: deployment, router knobs and workload.
func (e *Experiment) EngineConfig(p Point) (engine.Config, error) {
	f := e.File
	if _, err := f.At(p, KeyRouterMode); err != nil {
		return engine.Config{}, err // a malformed point; every lookup below is then valid
	}
	val := func(key string) Value {
		v, _ := f.At(p, key)
		return v
	}
	mode, err := router.ParseMode(val(KeyRouterMode).Text)
	if err != nil {
		return engine.Config{}, err
	}
	var pc ParallelConfig
	pl := f.list("parallel_configs")
	for i, v := range pl.values {
		if v.Text == val("parallel_configs").Text && i < len(pl.parallel) { // disaggregated: pl.disagg
			pc = pl.parallel[i]
		}
	}
	d := f.deployment(val(KeyHardwareSKU).Text, pc, int(val("agg_max_num_batched_tokens").Num), int(val("agg_max_num_seqs").Num), kvCacheDtype(val(KeyKVCacheDtype)), val(KeyTimingReference).Text, model.Backend(val(KeyBackend).Text))
	replicas := pc.Replicas
	var dis *engine.Disagg
	var capacity model.Capacity
	var dpp *DisaggParallel
	if dp, ok := f.disaggAt(val("parallel_configs").Text); ok {
		dpp = &dp
		if val(KeyNumG2Blocks).Num > 0 {
			return engine.Config{}, &Error{File: f.Name, Key: "search_space." + KeyNumG2Blocks,
				Msg: "KV tiers are not modelled for a disaggregated fleet; set it to 0 or deployment_mode to agg"}
		}
		if d, replicas, dis, err = e.disaggEngine(p, val("parallel_configs").Text); err != nil {
			return engine.Config{}, err
		}
	} else {
		w, ok := e.workers[d]
		if !ok {
			return engine.Config{}, fmt.Errorf("config: no worker model for %+v", d)
		}
		capacity = w.Capacity()
		if d.NumGPUBlocks == 0 {
			d.NumGPUBlocks = capacity.NumGPUBlocks
		}
	}
	fleet, err := f.fleet(val("planner_scaling_policy").Text, val(KeyPlannerLoadSensitivity).Text, val(KeyPlannerFPMSampling).Text, pc, dpp)
	if err != nil {
		return engine.Config{}, err
	}
	cfg := engine.Config{
		Fleet:   fleet,
		Disagg:  dis,
		Workers: replicas,
		Worker:  d,
		Router: router.Config{
			Mode:               mode,
			OverlapScoreCredit: val(KeyOverlapScoreCredit).Num,
			PrefillLoadScale:   val(KeyPrefillLoadScale).Num,
			Temperature:        val(KeyRouterTemperature).Num,
			BlockSize:          d.BlockSize,
			Load:               loadConfig(val),
			IndexConfig:        indexConfig(val),
		},
		ReplayConcurrency:   f.Workload.ReplayConcurrency,
		ArrivalSpeedupRatio: f.Workload.ArrivalSpeedupRatio,
		Seed:                f.Workload.Seed,
		Strict:              f.Workload.Strict,
		SLO:                 f.Goal.SLA,
		Scheduler:           f.Scheduler,
	}
	cfg.KVTiers, cfg.Router.Tiers = tierConfig(val, capacity)
	return cfg, nil
}

// CheckRequests checks, under every deployment of the search space, the first n requests of
// the trace for each n given (0 = all): an error when all of them would be rejected, or with
// workload.strict when any would, naming its line. A sweep calls it before its first
// evaluation, so that its validation cannot fail on the trace after the search.
func (e *Experiment) CheckRequests(ns ...int) error {
	// A request is rejected when its prompt plus output passes context_length or needs more
	// blocks than a worker holds, both monotone in that total: the trace's smallest total
	// decides whether all are rejected, its largest whether any is (strict). So the trace is
	// walked once per count, and Admit runs (for its exact error) only for a deployment
	// that fails; a space of 3,400 batch sizes took 1.6–8.6 s walking it per deployment,
	// deaf to ctrl+c.
	strict := e.File.Workload.Strict
	decisive := make([]int, len(ns))
	for i, n := range ns {
		reqs := e.Trace.First(n).Requests
		if len(reqs) == 0 {
			decisive[i] = math.MaxInt // Admit names the empty trace
			continue
		}
		decisive[i] = reqs[0].InputLength + reqs[0].OutputLength
		for j := range reqs {
			total := reqs[j].InputLength + reqs[j].OutputLength
			if strict {
				decisive[i] = max(decisive[i], total)
			} else {
				decisive[i] = min(decisive[i], total)
			}
		}
	}
	for _, d := range e.deployments {
		if d.NumGPUBlocks == 0 {
			d.NumGPUBlocks = e.workers[d].Capacity().NumGPUBlocks
		}
		cfg := engine.Config{Worker: d, Strict: strict}
		for i, n := range ns {
			total := decisive[i]
			if !(d.ContextLength > 0 && total > d.ContextLength) && !(d.NumGPUBlocks > 0 && (total+d.BlockSize-1)/d.BlockSize > d.NumGPUBlocks) {
				continue
			}
			if _, _, err := cfg.Admit(e.Trace.First(n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Run replays the first `requests` requests of the experiment's trace (0 = all) under cfg.
func (e *Experiment) Run(ctx context.Context, cfg engine.Config, requests int) (*engine.Report, error) {
	return e.RunIn(ctx, nil, cfg, requests)
}

// RunIn is Run in sc's memory (engine.Scratch; nil: fresh memory). The report is the same.
func (e *Experiment) RunIn(ctx context.Context, sc *engine.Scratch, cfg engine.Config, requests int) (*engine.Report, error) {
	w, ok := e.workers[unresolved(cfg.Worker)]
	if !ok {
		var err error
		if w, err = model.NewWorker(cfg.Worker); err != nil {
			return nil, err
		}
	}
	var timer model.StepTimer = w
	if cfg.Disagg != nil {
		dw, ok := e.workers[unresolved(cfg.Disagg.Decode)]
		if !ok {
			var err error
			if dw, err = model.NewWorker(cfg.Disagg.Decode); err != nil {
				return nil, err
			}
		}
		timer = engine.PoolTimers{Prefill: w, Decode: dw}
	}
	if sc == nil {
		return engine.Replay(ctx, cfg, timer, e.Trace.First(requests))
	}
	return sc.Replay(ctx, cfg, timer, e.Trace.First(requests))
}

// float32Precision is the file's float32 matmul precision, vLLM's default when unset.
func (f *File) float32Precision() string {
	return cmp.Or(f.Float32MatmulPrecision, model.PrecisionHighest)
}
