package model

import "fmt"

// TensorRT-LLM's AUTO all-reduce strategy runs its one- and two-shot Lamport kernels
// (MIN_LATENCY, or ONESHOT/TWOSHOT from the strategy table) for every message below 1 MB at TP 2
// and 4 in each version read: cpp/tensorrt_llm/thop/allreduceOp.cpp's selectImplementation
// before TensorRT-LLM#5432 (TP 2 always, TP 4 below 1,000,000 bytes, TP 8 below 500,000), after
// it (TP 2 always, else up to 128 tokens), and the SM 9.0 strategy table of
// common/customAllReduceUtils.h in its two stored versions (ONESHOT or TWOSHOT at TP 2 and 4 for
// hidden 4,096 up to 512 tokens) — given P2P and NVLink, which H100 and H200 SXM have.
//
// AIConfigurator's 1.2.0rc5 H100 and H200 rows did not time those kernels everywhere below the
// bound: at 4 GPUs from 32,768 elements (8 tokens of 4,096) up they hold 9.4–11.9 µs, flat, where
// the 1.3.0rc10 and 1.3.0rc20 rows measure 3.6–7.9 µs and the same collection's 8-GPU rows
// 4.9–16.3 µs, which no one- or two-shot kernel does (four ranks exchange less than eight); at 2
// GPUs the 8,192- and 32,768-element rows hold 7.3–9.9 µs between neighbours of 3.3–3.8. B200's
// 1.2.0rc5 rows show neither. Which strategy the collector's AUTO took there is not established
// (AIConfigurator 81c9e3c1d, #1062, names one way it left the serving path's: "tunable_allreduce
// may override the strategy to NCCL symmetric"). Below the bound the 2- and 4-GPU rows are priced
// from 1.3.0rc10's, the first TensorRT-LLM collection whose collector pins AUTO to the strategy
// table (TLLM_DISABLE_ALLREDUCE_AUTOTUNE=1 in collector/collect_all_reduce.py from 81c9e3c1d,
// which re-collected them). The 8-GPU rows keep theirs: below TP 8's own bound (500,000 bytes)
// they agree with 1.3.0rc10's to within 10 % on H100 (20 % at H200's 128-element row).

// trtllmLamportVersion is the TensorRT-LLM all-reduce collection timed under the strategy table.
const trtllmLamportVersion = "1.3.0rc10"

// lamportAllReduceBytes bounds the messages TensorRT-LLM's AUTO sends to the Lamport kernels at
// TP 2 and 4 under every heuristic above (the strictest: below 1,000,000 bytes).
const lamportAllReduceBytes = 1000 * 1000

// lamportAllReduceMaxGPUs is the largest group the bound holds for.
const lamportAllReduceMaxGPUs = 4

// trtllmAllReduceMismeasured reports whether the deployment's all-reduce rows are TensorRT-LLM
// 1.2.0rc5's on an SM 9.0 GPU, whose 2- and 4-GPU rows below the bound timed another strategy.
func trtllmAllReduceMismeasured(b Backend, version, sku string) bool {
	return b == BackendTRTLLM && version == trtllmVersion && gpuSMVersion[sku] == 90
}

// withLamportRows returns rows with each 2- or 4-GPU BF16 row below the bound replaced by
// later's row of the same GPU count, size and launch mode.
func withLamportRows(rows, later []allreduceRow) ([]allreduceRow, error) {
	type key struct {
		gpus, size int64
		mode       string
	}
	lamport := func(r allreduceRow) bool {
		return r.Dtype == allreduceElemType && r.GPUs <= lamportAllReduceMaxGPUs && r.Size*allreduceElemSize < lamportAllReduceBytes
	}
	at := map[key]float64{}
	for _, r := range later {
		if lamport(r) {
			at[key{r.GPUs, r.Size, r.Mode}] = r.Latency
		}
	}
	out := make([]allreduceRow, len(rows))
	for i, r := range rows {
		if lamport(r) {
			l, ok := at[key{r.GPUs, r.Size, r.Mode}]
			if !ok {
				return nil, fmt.Errorf("no %s %d-GPU all-reduce row of %d elements in the %s collection", allreduceElemType, r.GPUs, r.Size, trtllmLamportVersion)
			}
			r.Latency = l
		}
		out[i] = r
	}
	return out, nil
}
