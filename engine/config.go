package engine

import (
	"fmt"
	"math"

	"github.com/routerlab/routerlab/kvtier"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// Config is one simulated experiment: the fleet, the router and the replay discipline.
type Config struct {
	Workers int
	// Worker is every worker's deployment; the engine uses MaxNumBatchedTokens, MaxNumSeqs,
	// BlockSize, NumGPUBlocks (must be > 0: resolve it from model.Worker.Capacity first)
	// and ContextLength (0: unchecked).
	Worker model.Deployment
	Router router.Config // BlockSize 0 means the engine's block size
	// ReplayConcurrency > 0 replays closed loop with that many requests in flight.
	ReplayConcurrency int
	// ArrivalSpeedupRatio divides trace timestamps in open-loop replay
	// (ReplayConcurrency == 0); 0 means 1.
	ArrivalSpeedupRatio float64
	Seed                uint64
	SnapshotEveryUS     int64 // 0: no snapshots
	RecordRequests      bool  // keep per-request records in the Report
	// Strict makes a request the fleet must reject (see Admit) an error naming its line,
	// instead of a rejection counted in the summary.
	Strict bool
	// SLO, when it has a bound, adds goodput to the summary.
	SLO SLO
	// LoadReport adds Summary.Load: where decode time goes and how even the load is (stall.go).
	LoadReport bool `json:",omitempty"`
	// Scheduler holds the SGLang and TensorRT-LLM scheduler arguments (sched.go); the
	// worker's Backend picks the scheduler.
	Scheduler SchedulerConfig `json:",omitzero"`
	// KVTiers: host-memory (G2) and disk (G3) KV tiers below each worker's GPU cache
	// (tiers.go, package kvtier); nil: none. Router.Tiers weighs their hits.
	KVTiers *kvtier.Config `json:",omitempty"`
	// Disagg, when set, makes the fleet disaggregated (disagg.go): Workers × Worker are then
	// the prefill pool, which Router (the frontend's prefill router) routes to, and Disagg
	// holds the decode pool and the KV transfer between them.
	Disagg *Disagg `json:",omitempty"`
	// Fleet, when set, lets workers start, drain and fail, and runs Dynamo's planner
	// (fleet.go); nil: a static fleet of Workers.
	Fleet *Fleet `json:",omitempty"`
}

// SLO is a per-request service-level objective in milliseconds (0: no bound): a request is
// good when its TTFT, TPOT and e2e latency are all within the bounds given, as vLLM's
// benchmark_serving counts goodput (a request with one output token has TPOT 0).
type SLO struct {
	TTFTMS float64 `json:"ttft_ms,omitempty"`
	TPOTMS float64 `json:"tpot_ms,omitempty"`
	E2EMS  float64 `json:"e2e_latency_ms,omitempty"`
}

// Set reports whether the objective has any bound.
func (o SLO) Set() bool { return o.TTFTMS > 0 || o.TPOTMS > 0 || o.E2EMS > 0 }

// Good reports whether a request with these latencies meets every bound.
func (o SLO) Good(ttftMS, tpotMS, e2eMS float64) bool {
	within := func(x, bound float64) bool { return bound <= 0 || x <= bound }
	return within(ttftMS, o.TTFTMS) && within(tpotMS, o.TPOTMS) && within(e2eMS, o.E2EMS)
}

// validate checks the config against the trace and returns the router config to use.
func (c *Config) validate(timer model.StepTimer, tr *trace.Trace) (router.Config, error) {
	d := c.Worker
	rc := c.Router
	switch {
	case timer == nil:
		return rc, fmt.Errorf("engine: no step timer")
	case tr == nil:
		return rc, fmt.Errorf("engine: no trace")
	case tr.BlockSize <= 0:
		return rc, fmt.Errorf("%s: trace_block_size: %d must be positive", tr.Name, tr.BlockSize)
	case c.Workers < 1:
		return rc, fmt.Errorf("workers: %d must be at least 1", c.Workers)
	case d.BlockSize <= 0:
		return rc, fmt.Errorf("block_size: %d must be a positive number of tokens", d.BlockSize)
	case d.NumGPUBlocks <= 0:
		return rc, fmt.Errorf("num_gpu_blocks: %d must be positive (resolve it from the timing model's KV capacity or set it)", d.NumGPUBlocks)
	case d.MaxNumBatchedTokens <= 0:
		return rc, fmt.Errorf("max_num_batched_tokens: %d must be positive", d.MaxNumBatchedTokens)
	case d.MaxNumSeqs <= 0:
		return rc, fmt.Errorf("max_num_seqs: %d must be positive", d.MaxNumSeqs)
	case c.ReplayConcurrency < 0:
		return rc, fmt.Errorf("replay_concurrency: %d must be >= 0 (0 = open loop)", c.ReplayConcurrency)
	case math.IsNaN(c.ArrivalSpeedupRatio) || math.IsInf(c.ArrivalSpeedupRatio, 0) || c.ArrivalSpeedupRatio < 0:
		return rc, fmt.Errorf("arrival_speedup_ratio: %v must be a positive number", c.ArrivalSpeedupRatio)
	case c.SnapshotEveryUS < 0:
		return rc, fmt.Errorf("snapshot_every_us: %d must be >= 0", c.SnapshotEveryUS)
	}
	if _, err := kindOf(d.Backend); err != nil {
		return rc, err
	}
	if kind, _ := kindOf(d.Backend); kind != schedVLLM && d.MaxNumBatchedTokens < d.BlockSize {
		// SGLang and TensorRT-LLM cut prompts into chunks of whole pages or blocks.
		return rc, fmt.Errorf("max_num_batched_tokens: %d must be at least block_size %d under %s", d.MaxNumBatchedTokens, d.BlockSize, d.Backend)
	}
	if err := c.Scheduler.check(); err != nil {
		return rc, err
	}
	if err := c.checkSpeculative(); err != nil {
		return rc, err
	}
	if c.Fleet != nil {
		if err := c.Fleet.validate(c); err != nil {
			return rc, err
		}
		if tr.Sessions != nil {
			return rc, fmt.Errorf("%s: a trace of sessions with a fleet that changes: a lost turn would hold its session's later turns forever (not simulated yet)", tr.Name)
		}
	}
	if rc.BlockSize == 0 {
		rc.BlockSize = d.BlockSize
	}
	if c.KVTiers != nil {
		if err := c.KVTiers.Validate(); err != nil {
			return rc, err
		}
		// The tiers hook into vLLM's scheduler only (the KV connector's wait for external
		// blocks); SGLang's HiCache and TensorRT-LLM's host offload are not modelled.
		if kind, _ := kindOf(d.Backend); kind != schedVLLM {
			return rc, fmt.Errorf("num_g2_blocks: KV tiers are modelled for the vllm backend only, not %s", d.Backend)
		}
	}
	if !rc.Load.Default() {
		rc.Load.MaxNumBatchedTokens, rc.Load.KVBlocks = d.MaxNumBatchedTokens, d.NumGPUBlocks
	}
	if rc.BlockSize != d.BlockSize {
		return rc, fmt.Errorf("router block_size %d differs from the engine's block_size %d", rc.BlockSize, d.BlockSize)
	}
	for i := range tr.Requests {
		r := &tr.Requests[i]
		switch {
		case r.InputLength < 1:
			return rc, fmt.Errorf("%s: input_length: %d must be at least 1", tr.Where(i), r.InputLength)
		case r.OutputLength < 1:
			return rc, fmt.Errorf("%s: output_length: %d must be at least 1", tr.Where(i), r.OutputLength)
		case len(r.HashIDs) < (r.InputLength+tr.BlockSize-1)/tr.BlockSize:
			return rc, fmt.Errorf("%s: hash_ids: %d ids cannot cover input_length %d at %d tokens per block",
				tr.Where(i), len(r.HashIDs), r.InputLength, tr.BlockSize)
		}
	}
	if c.ReplayConcurrency == 0 && len(tr.Requests) > 0 {
		// Timestamps do not decrease, so the last one is the latest arrival.
		last := len(tr.Requests) - 1
		ratio := c.ArrivalSpeedupRatio
		if ratio == 0 {
			ratio = 1
		}
		if us := float64(tr.Requests[last].TimestampMS) * 1000 / ratio; us > maxArrivalUS {
			return rc, fmt.Errorf("%s: timestamp: %d ms / arrival_speedup_ratio %g is beyond the simulation clock's %.0f years",
				tr.Where(last), tr.Requests[last].TimestampMS, ratio, maxArrivalUS/(365.25*24*3600e6))
		}
	}
	return rc, nil
}

// maxArrivalUS bounds open-loop arrival times (µs) so that every later time of the run, an
// arrival plus the run's length, stays far inside int64 (about 146,000 years).
const maxArrivalUS = float64(1 << 62)

// Rejection counts the requests refused before routing for one reason, as vLLM's API server
// answers HTTP 400 to a request whose prompt plus max_tokens exceeds max_model_len and serves
// the rest.
type Rejection struct {
	Reason   string `json:"reason"`
	Requests int    `json:"requests"`
	First    string `json:"first"` // the first rejected request: file:line
}

// Admit splits tr's requests into those a worker of c can serve (their indices) and the
// rejections: input plus output beyond context_length, or more KV blocks than a worker holds
// (it would be preempted forever). With c.Strict a rejection is an error naming the line; a
// trace whose every request is rejected is an error too.
func (c *Config) Admit(tr *trace.Trace) (served []int, rejected []Rejection, err error) {
	d := c.Worker
	if c.Disagg != nil { // a request must fit on a worker of either pool
		d.NumGPUBlocks = min(d.NumGPUBlocks, c.Disagg.Decode.NumGPUBlocks)
	}
	// The two reasons depend on the worker only: each is worded once, when its first request
	// is refused, not per request (a trace of millions may refuse most of them).
	const tooLong, tooManyBlocks, overStep, overReserve = 0, 1, 2, 3
	slot := [4]int{-1, -1, -1, -1}
	wholePrompts := d.Backend == model.BackendTRTLLM && !c.Scheduler.TRTLLMChunkedPrefill
	// SGLang admits a request only while its prompt and output are fewer tokens than the pool
	// holds (it would clip max_new_tokens to stay below; the replay keeps output_length).
	sglang := d.Backend == model.BackendSGLang
	// Under SGLang's disaggregated serving a decode worker pre-allocates a prompt with
	// num_reserved_decode_tokens beside it; a prompt that never fits would wait forever.
	pd, reserveTokens := sglang && c.Disagg != nil, 0
	if pd {
		reserveTokens = c.Disagg.Decode.NumGPUBlocks*d.BlockSize - sglangReservedDecodeTokens
	}
	served = make([]int, 0, len(tr.Requests))
	for i := range tr.Requests {
		r := &tr.Requests[i]
		total := r.InputLength + r.OutputLength
		need := (total + d.BlockSize - 1) / max(1, d.BlockSize)
		var kind int
		switch {
		case d.ContextLength > 0 && total > d.ContextLength:
			kind = tooLong
		case d.NumGPUBlocks > 0 && (need > d.NumGPUBlocks || sglang && total >= d.NumGPUBlocks*d.BlockSize):
			kind = tooManyBlocks
		case wholePrompts && r.InputLength > d.MaxNumBatchedTokens:
			kind = overStep
		case pd && r.InputLength > reserveTokens:
			kind = overReserve
		default:
			served = append(served, i)
			continue
		}
		if c.Strict {
			detail := fmt.Sprintf("input_length %d + output_length %d = %d exceeds context_length %d", r.InputLength, r.OutputLength, total, d.ContextLength)
			switch kind {
			case tooManyBlocks:
				detail = fmt.Sprintf("input_length + output_length = %d needs %d KV blocks of %d tokens, more than num_gpu_blocks %d",
					total, need, d.BlockSize, d.NumGPUBlocks)
			case overStep:
				detail = overStepReason(r.InputLength, d.MaxNumBatchedTokens)
			case overReserve:
				detail = fmt.Sprintf("input_length %d: %s", r.InputLength, overReserveReason(c.Disagg.Decode.NumGPUBlocks*d.BlockSize))
			}
			return nil, nil, fmt.Errorf("%s: %s (strict: a request the fleet would reject is an error)", tr.Where(i), detail)
		}
		if slot[kind] < 0 {
			reason := fmt.Sprintf("input_length + output_length exceeds context_length %d", d.ContextLength)
			switch kind {
			case tooManyBlocks:
				reason = fmt.Sprintf("needs more KV blocks than a worker's %d", d.NumGPUBlocks)
			case overStep:
				reason = overStepReason(0, d.MaxNumBatchedTokens)
			case overReserve:
				reason = overReserveReason(c.Disagg.Decode.NumGPUBlocks * d.BlockSize)
			}
			slot[kind] = len(rejected)
			rejected = append(rejected, Rejection{Reason: reason, First: tr.Where(i)})
		}
		rejected[slot[kind]].Requests++
	}
	if len(served) == 0 {
		if len(rejected) == 0 {
			return nil, nil, fmt.Errorf("%s: no requests to replay", tr.Name)
		}
		return nil, nil, fmt.Errorf("%s: all %d requests rejected: %s (first: %s)", tr.Name, len(tr.Requests), rejected[0].Reason, rejected[0].First)
	}
	return served, rejected, nil
}

// overReserveReason is why SGLang's decode pool cannot pre-allocate a prompt: the prompt and
// num_reserved_decode_tokens exceed a decode worker's KV tokens.
func overReserveReason(tokens int) string {
	return fmt.Sprintf("prompt + SGLang's %d reserved decode tokens exceed a decode worker's %d KV tokens (its pre-allocation would wait forever)", sglangReservedDecodeTokens, tokens)
}
