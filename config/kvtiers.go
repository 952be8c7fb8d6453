package config

import (
	"fmt"

	"github.com/routerlab/routerlab/kvtier"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
)

// The KV tiers' knobs (package kvtier) under the names of Dynamo's Spica search space
// (docs/components/aisimulate/spica/search-space.md @ 4871677d: the KV manager's
// num_g2_blocks, kv_bytes_per_token, bandwidth_g1_to_g2_gbps, bandwidth_g2_to_g1_gbps,
// offload_batch_size; the router's host_cache_hit_weight and disk_cache_hit_weight, searched
// only when num_g2_blocks > 0) and of the mocker's G3 fields (lib/mocker/src/kvbm_offload/
// config.rs @ 7b9ab971: num_g3_blocks, bandwidth_g2_to_g3_gbps, bandwidth_g3_to_g2_gbps).
// Like the index knobs they are search_space lists, left out of the fingerprint at their
// defaults, so offload off (num_g2_blocks 0, the default) leaves every result and
// fingerprint as it was.
const (
	KeyNumG2Blocks        = "num_g2_blocks"
	KeyNumG3Blocks        = "num_g3_blocks"
	KeyKVBytesPerToken    = "kv_bytes_per_token"
	KeyBandwidthG1ToG2    = "bandwidth_g1_to_g2_gbps"
	KeyBandwidthG2ToG1    = "bandwidth_g2_to_g1_gbps"
	KeyBandwidthG2ToG3    = "bandwidth_g2_to_g3_gbps"
	KeyBandwidthG3ToG2    = "bandwidth_g3_to_g2_gbps"
	KeyOffloadBatchSize   = "offload_batch_size"
	KeyHostCacheHitWeight = "host_cache_hit_weight"
	KeyDiskCacheHitWeight = "disk_cache_hit_weight"
)

// tierBlock is the tier knobs in the order dimensions are reported (after the index knobs,
// routerindex.go): offload off by default; when on, Dynamo's defaults (kv_bytes_per_token 0:
// derived from the model, per GPU). The hit weights are the router's, read in kv_router
// only; the rest shape the workers under every router.
var tierBlock = routerKeyBlock{
	{KeyNumG2Blocks, "0", false, numKey(0, kvtier.MaxBlocks, true)},
	{KeyNumG3Blocks, "0", false, numKey(0, kvtier.MaxBlocks, true)},
	{KeyKVBytesPerToken, "0", false, numKey(0, 1<<30, true)},
	{KeyBandwidthG1ToG2, num(kvtier.DefaultG1G2GBps), false, numKey(0, 1e6, false)},
	{KeyBandwidthG2ToG1, num(kvtier.DefaultG1G2GBps), false, numKey(0, 1e6, false)},
	{KeyBandwidthG2ToG3, num(kvtier.DefaultG2G3GBps), false, numKey(0, 1e6, false)},
	{KeyBandwidthG3ToG2, num(kvtier.DefaultG2G3GBps), false, numKey(0, 1e6, false)},
	{KeyOffloadBatchSize, "32", false, numKey(1, 1<<20, true)},
	// [0, 1], as validate_range in Dynamo's KvRouterConfig::validate (config.rs @ 057096c3).
	{KeyHostCacheHitWeight, num(router.DefaultTierWeights().Host), true, numKey(0, 1, false)},
	{KeyDiskCacheHitWeight, num(router.DefaultTierWeights().Disk), true, numKey(0, 1, false)},
}

// tierKnobIgnored reports whether tier knob key is moot at a point, given its other tier
// knobs: every one but num_g2_blocks without G2 (Spica searches them only when offload is
// on), the G3 ones without G3. ok is false for other keys.
func tierKnobIgnored(at func(string) Value, key string) (ignored, ok bool) {
	switch key {
	case KeyNumG2Blocks:
		return false, true
	case KeyNumG3Blocks, KeyKVBytesPerToken, KeyBandwidthG1ToG2, KeyBandwidthG2ToG1, KeyOffloadBatchSize, KeyHostCacheHitWeight:
		return at(KeyNumG2Blocks).Num == 0, true
	case KeyBandwidthG2ToG3, KeyBandwidthG3ToG2, KeyDiskCacheHitWeight:
		return at(KeyNumG2Blocks).Num == 0 || at(KeyNumG3Blocks).Num == 0, true
	}
	return false, false
}

// tierConfig reads the tier knobs of one point for a worker of capacity c: nil and nil
// with offload off. The block's bytes are block_size × kv_bytes_per_token, the model's
// per-GPU KV bytes per token (model.Capacity) unless kv_bytes_per_token overrides them.
func tierConfig(val func(string) Value, c model.Capacity) (*kvtier.Config, *router.TierWeights) {
	g2 := int(val(KeyNumG2Blocks).Num)
	if g2 == 0 {
		return nil, nil
	}
	perToken := int64(val(KeyKVBytesPerToken).Num)
	if perToken == 0 {
		perToken = c.KVBytesPerToken
	}
	tc := &kvtier.Config{
		NumG2Blocks: g2, NumG3Blocks: int(val(KeyNumG3Blocks).Num),
		BlockBytes: int64(c.BlockSize) * perToken,
		G1ToG2GBps: val(KeyBandwidthG1ToG2).Num, G2ToG1GBps: val(KeyBandwidthG2ToG1).Num,
		G2ToG3GBps: val(KeyBandwidthG2ToG3).Num, G3ToG2GBps: val(KeyBandwidthG3ToG2).Num,
		OffloadBatchSize: int(val(KeyOffloadBatchSize).Num),
	}
	return tc, &router.TierWeights{Host: val(KeyHostCacheHitWeight).Num, Disk: val(KeyDiskCacheHitWeight).Num}
}

// checkTiers refuses KV tiers beside a backend other than vLLM: the tiers hook into vLLM's
// scheduler only (engine/tiers.go), so SGLang's and TensorRT-LLM's replays would not have them.
func (f *File) checkTiers() error {
	for _, g2 := range f.Values(KeyNumG2Blocks) {
		if g2.Num == 0 {
			continue
		}
		for _, b := range f.Values(KeyBackend) {
			if be := model.Backend(b.Text); be.OrDefault() != model.BackendVLLM {
				return &Error{File: f.Name, Key: "search_space." + KeyNumG2Blocks,
					Msg: fmt.Sprintf("%s with backend %s is not modelled (KV tiers hook into vLLM's scheduler only); use backend vllm or num_g2_blocks 0", g2.Text, b.Text)}
			}
		}
	}
	return nil
}
