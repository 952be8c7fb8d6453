package engine

import (
	"fmt"
	"math"

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
	if rc.BlockSize == 0 {
		rc.BlockSize = d.BlockSize
	}
	if rc.BlockSize != d.BlockSize {
		return rc, fmt.Errorf("router block_size %d differs from the engine's block_size %d", rc.BlockSize, d.BlockSize)
	}
	for i := range tr.Requests {
		r := &tr.Requests[i]
		where := func() string { return fmt.Sprintf("%s: request %d", tr.Name, i+1) }
		switch {
		case r.InputLength < 1:
			return rc, fmt.Errorf("%s: input_length: %d must be at least 1", where(), r.InputLength)
		case r.OutputLength < 1:
			return rc, fmt.Errorf("%s: output_length: %d must be at least 1", where(), r.OutputLength)
		case len(r.HashIDs) < (r.InputLength+tr.BlockSize-1)/tr.BlockSize:
			return rc, fmt.Errorf("%s: hash_ids: %d ids cannot cover input_length %d at %d tokens per block",
				where(), len(r.HashIDs), r.InputLength, tr.BlockSize)
		case d.ContextLength > 0 && r.InputLength+r.OutputLength > d.ContextLength:
			return rc, fmt.Errorf("%s: input_length+output_length = %d exceeds context_length %d",
				where(), r.InputLength+r.OutputLength, d.ContextLength)
		}
		// A request that cannot fit alone in a worker's cache would be preempted forever.
		if need := (r.InputLength + r.OutputLength + d.BlockSize - 1) / d.BlockSize; need > d.NumGPUBlocks {
			return rc, fmt.Errorf("%s: needs %d KV blocks of %d tokens, more than num_gpu_blocks %d",
				where(), need, d.BlockSize, d.NumGPUBlocks)
		}
	}
	return rc, nil
}
