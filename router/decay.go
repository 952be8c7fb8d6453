package router

// The overlap credit's decay (Dynamo PR #10574; --router-kv-overlap-score-credit-decay, in
// lib/kv-router/src/scheduling/selector/default.rs, DefaultWorkerScorer::worker_logit, read
// at 07a6c9ce): a worker whose active prefill exceeds the least-loaded worker's gets less
// credit for its cached prefix, so a fleet warm on a prefix stops starving a cold worker:
//
//	credit_w = credit / (1 + decay · ((prefill_tokens_w − min_v prefill_tokens_v) / block_size) / request_blocks)
//
// request_blocks is the request's prompt in blocks (SchedulingRequest::request_blocks, "the
// incoming prompt size in KV blocks"; rounded up here, the source read does not show how):
// decay 1 halves the credit at one request's worth of excess prefill. The rest of the cost is kvPolicy's.

// chooseDecayed is kvPolicy.choose with the decayed credit.
func chooseDecayed(r *Router, req *Request) int {
	n := r.workers
	load, overlap, active := r.load[:n], r.overlap[:n], r.activePrefix[:n]
	lo, reqBlocks := decayBase(load, req, r.cfg.BlockSize)
	decay := r.cfg.OverlapScoreCreditDecay
	cfg := r.cfg
	cost := r.cost[:n]
	for w := range cost {
		excess := float64(load[w].PrefillTokens-lo) / float64(r.cfg.BlockSize)
		cfg.OverlapScoreCredit = r.cfg.OverlapScoreCredit / (1 + decay*excess/reqBlocks)
		cost[w] = newKVCost(cfg, req).cost(&load[w], overlap[w], active[w])
	}
	if r.cfg.Temperature == 0 {
		return argminRandomTie(r, cost)
	}
	return softmaxSample(r, cost, r.cfg.Temperature)
}

// decayBase is what the decay compares each worker with: the least prefill load of the fleet
// and the request's prompt in blocks.
func decayBase(load []WorkerLoad, req *Request, blockSize int) (lo int64, reqBlocks float64) {
	lo = load[0].PrefillTokens
	for w := 1; w < len(load); w++ {
		lo = min(lo, load[w].PrefillTokens)
	}
	return lo, float64(max(1, (req.InputLength+blockSize-1)/blockSize))
}
