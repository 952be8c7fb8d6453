package engine

import (
	"fmt"

	"github.com/routerlab/routerlab/trace"
)

// MaxCacheBytes bounds the memory of one replay's KV caches (the workers' block pools, the
// router's index of them and the requests' block lists): 384 MiB of live heap, which with
// the Go collector's headroom (GOGC 100) keeps a replay's process under about 1 GB. A sweep
// runs up to min(parallel_evals, cores) replays at once, each under it.
const MaxCacheBytes = 384 << 20

// cacheBytesPerBlock is the live memory a cached KV block costs in groups of g blocks per
// trace block (block_size 64 under 512-token trace blocks: g 8): a record of g slots per
// group, the pools' and the router's hash tables, the requests' block lists. Measured with
// no block shared (TestCacheBytesPerBlockBoundsAReplay): 199 to 250 B at g 1 (the hash tables
// grow by doubling), 46 at g 8, 26 at g 32.
func cacheBytesPerBlock(g int32) int64 { return 48 + 256/int64(g) }

// checkCacheBudget refuses, before anything is allocated, a replay whose caches could pass
// MaxCacheBytes: the fleet caches at most workers × num_gpu_blocks blocks, and never more
// than the blocks its requests fill (each is computed on one worker).
func (c *Config) checkCacheBudget(tr *trace.Trace, served []int) error {
	d := c.Worker
	total := traceBlocks(d.BlockSize, tr.Requests, served)
	capacity := int64(c.Workers) * int64(d.NumGPUBlocks)
	if dg := c.Disagg; dg != nil { // a prompt's blocks live on a prefill and a decode worker
		total *= 2
		capacity += int64(dg.DecodeWorkers) * int64(dg.Decode.NumGPUBlocks)
	}
	blocks := min(total, capacity)
	per := cacheBytesPerBlock(groupSize(d.BlockSize, tr.BlockSize))
	if blocks*per <= MaxCacheBytes {
		return nil
	}
	return fmt.Errorf("block_size: %d tokens makes the KV caches of this replay up to %d blocks (the smaller of %d workers × num_gpu_blocks %d and the %d blocks its %d requests fill), about %d MiB, over the %d MiB a replay may take (engine.MaxCacheBytes): raise block_size, or lower num_gpu_blocks, replicas or --requests",
		d.BlockSize, blocks, c.Workers, d.NumGPUBlocks, total, requestsOf(tr, served), blocks*per>>20, MaxCacheBytes>>20)
}

func requestsOf(tr *trace.Trace, served []int) int {
	if served == nil {
		return len(tr.Requests)
	}
	return len(served)
}

// traceBlocks counts the KV blocks of block_size tokens the requests can ever fill: every
// request's prompt and output, rounded up per request (served: indices of the requests
// replayed, nil for all).
func traceBlocks(blockSize int, reqs []trace.Request, served []int) int64 {
	var n int64
	add := func(r *trace.Request) {
		n += (int64(r.InputLength) + int64(r.OutputLength) + int64(blockSize) - 1) / int64(blockSize)
	}
	if served == nil {
		for i := range reqs {
			add(&reqs[i])
		}
		return n
	}
	for _, i := range served {
		add(&reqs[i])
	}
	return n
}
