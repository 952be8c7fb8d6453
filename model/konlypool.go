package model

import "fmt"

// TensorRT-LLM's generation-attention tables collected before AIConfigurator's dec5f4cd2
// (2026-08-03, the collector's move to 1.3.0rc20) measure the decode kernel on a
// KVCacheManager allocated as CacheType.SELFKONLY (collector/trtllm/collect_attn.py, from its
// first commit efcae124c through d1fe22a6). Such a pool holds one field per block (kv factor
// 1), and WindowBlockManager::setOffsets writes that field as both the K and the V block
// offset (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, every stored version: the field
// index is 0 under kSELFKONLY for K and V alike). The kernel reads V from the addresses it has
// just read K from, so a row holds K's HBM traffic and not V's: at large batch × context the
// rows move K and V at up to 1.72 × B200's 7.7 TB/s (1.2.0rc5), 1.73 × H100's 3.35 and 1.52 ×
// H200's 4.8, which only a second read served from the L2 explains. A serving step's
// dense-attention cache is CacheType.SELF (TensorRT-LLM pyexecutor/_util.py, as dec5f4cd2's
// collector says), K and V apart; the 1.3.0rc20 tables, collected on such a pool, never exceed
// 0.97 ×, nor does any vLLM or SGLang table exceed 1.07 ×.
var kOnlyPoolVersions = map[string]bool{"1.2.0rc5": true, "1.3.0rc10": true, "1.3.0rc15": true}

// kOnlyPool reports whether backend's version's generation-attention rows were measured on a
// K-only pool.
func kOnlyPool(b Backend, version string) bool {
	return b == BackendTRTLLM && kOnlyPoolVersions[version]
}

// withVRead prices each generation row as measured plus the V bytes its K-only pool did not
// read: batch × context × KV heads × head_dim × cache bytes at the system file's gpu.mem_bw.
// The datasheet bandwidth, not mem_bw × mem_bw_empirical_scaling_factor: the rows say what the
// kernel achieves on K, and the peak is the one bound on V's read that no observation tunes
// (so the addition never over-prices; the largest repriced rows land at 0.92–0.93 × the peak,
// where the SELF-pool and other backends' tables top out).
func withVRead(rows []attentionRow, memBW float64) ([]attentionRow, error) {
	out := make([]attentionRow, len(rows))
	for i, r := range rows {
		v, ok := r.vBytes()
		if !ok {
			return nil, fmt.Errorf("generation row %d: field kv_cache_dtype: %q is not a cache dtype the V read can be priced for (float16, bfloat16, fp8)", i+1, r.KVDtype)
		}
		r.Latency += v / memBW * 1e3 // rows hold milliseconds
		out[i] = r
	}
	return out, nil
}

// vBytes is the V cache a decode row reads (as much again as its K): batch × context × KV
// heads × head_dim × cache bytes, a sliding-window row's context its window's tokens; false
// for a cache dtype without a known size.
func (r attentionRow) vBytes() (float64, bool) {
	ctx := r.Step
	if r.Window > 0 && r.Window < ctx {
		ctx = r.Window
	}
	b, ok := kvCacheBytes(r.KVDtype)
	return float64(r.Batch) * float64(ctx) * float64(r.KVHeads) * float64(r.HeadDim) * b, ok
}

// kvCacheBytes is one cached element's size under an AIConfigurator kv_cache_dtype label.
func kvCacheBytes(dtype string) (float64, bool) {
	switch dtype {
	case "float16", "bfloat16":
		return 2, true
	case "fp8":
		return 1, true
	}
	return 0, false
}
