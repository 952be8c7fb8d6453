// Package kvtier models the KV cache tiers below a worker's GPU block pool as Dynamo's
// mocker models KVBM (ai-dynamo/dynamo lib/mocker/src/kvbm_offload/config.rs @ 7b9ab971,
// engine.rs @ 11b6254c, bandwidth_sharing_model.rs @ b4c8ca0e): G2, host memory, and G3,
// disk, each with its own capacity in blocks and its own LRU eviction.
//
// A block evicted from the GPU cache (G1) is offloaded to G2 unless a lower tier already
// holds it (the mocker's presence filter); a step's evictions go in batches of
// offload_batch_size, each one transfer on the G1→G2 link. A block G2 evicts goes on to G3
// over the G2→G3 link when G3 is on, else it is gone. A block is visible to a prefix
// look-up (and to the router, through a KV event naming its tier) once its transfer has
// finished. A prefix hit in a lower tier is onboarded: the G2 part over the G2→G1 link, the
// G3 part staged over the G3→G2 link first; the request waits for it, its blocks reserved.
//
// Every link is shared by its transfers in flight by processor sharing, as the mocker's
// links (link.go); an onboard's blocks stay pinned in their tier until its load ends.
package kvtier

import (
	"fmt"
	"math"
)

// Dynamo's defaults when offload is on (kvbm_offload/config.rs @ 7b9ab971): a PCIe Gen4
// x16 link between GPU and host, a local NVMe between host and disk, batches of 32.
const (
	DefaultG1G2GBps         = 14.0
	DefaultG2G3GBps         = 7.0
	DefaultOffloadBatchSize = 32
)

// Config is one worker's lower tiers. NumG2Blocks 0 turns offload off (nil Config in the
// engine); NumG3Blocks 0 leaves G3 out.
type Config struct {
	NumG2Blocks int `json:"num_g2_blocks"`
	NumG3Blocks int `json:"num_g3_blocks,omitempty"`
	// BlockBytes is what one block moves over one link: block_size × kv_bytes_per_token,
	// per GPU (each tensor-parallel rank moves its own shard over its own link).
	BlockBytes int64 `json:"block_bytes"`
	// Link bandwidths in GB/s (1e9 bytes per second); 0 moves blocks instantly, as Dynamo
	// treats a non-positive bandwidth.
	G1ToG2GBps float64 `json:"bandwidth_g1_to_g2_gbps"`
	G2ToG1GBps float64 `json:"bandwidth_g2_to_g1_gbps"`
	G2ToG3GBps float64 `json:"bandwidth_g2_to_g3_gbps,omitempty"`
	G3ToG2GBps float64 `json:"bandwidth_g3_to_g2_gbps,omitempty"`
	// OffloadBatchSize is how many evicted blocks one G1→G2 (or G2→G3) transfer carries.
	OffloadBatchSize int `json:"offload_batch_size"`
}

// MaxBlocks bounds each tier's capacity (a tier's blocks are kept as map entries).
const MaxBlocks = 1 << 24

// Validate names the first bad field by its experiment-file key.
func (c Config) Validate() error {
	switch {
	case c.NumG2Blocks < 1 || c.NumG2Blocks > MaxBlocks:
		return fmt.Errorf("num_g2_blocks: %d must be in [1, %d] with offload on", c.NumG2Blocks, MaxBlocks)
	case c.NumG3Blocks < 0 || c.NumG3Blocks > MaxBlocks:
		return fmt.Errorf("num_g3_blocks: %d must be in [0, %d]", c.NumG3Blocks, MaxBlocks)
	case c.BlockBytes < 1:
		return fmt.Errorf("kv_bytes_per_token: a block of %d bytes must be positive", c.BlockBytes)
	case c.OffloadBatchSize < 1:
		return fmt.Errorf("offload_batch_size: %d must be at least 1", c.OffloadBatchSize)
	}
	for _, b := range []struct {
		key string
		v   float64
	}{
		{"bandwidth_g1_to_g2_gbps", c.G1ToG2GBps}, {"bandwidth_g2_to_g1_gbps", c.G2ToG1GBps},
		{"bandwidth_g2_to_g3_gbps", c.G2ToG3GBps}, {"bandwidth_g3_to_g2_gbps", c.G3ToG2GBps},
	} {
		if math.IsNaN(b.v) || math.IsInf(b.v, 0) || b.v < 0 {
			return fmt.Errorf("%s: %v must be a finite number >= 0", b.key, b.v)
		}
	}
	return nil
}

// transferUS is how long n blocks take over a link of gbps GB/s, rounded up to whole µs.
func (c *Config) transferUS(n int, gbps float64) int64 {
	if gbps <= 0 || n == 0 {
		return 0
	}
	return int64(math.Ceil(float64(int64(n)*c.BlockBytes) / (gbps * 1e3)))
}
