package engine

import (
	"math/bits"
	"slices"
)

// Engine blocks and trace blocks. A trace names a prompt by hash ids of traceBlock-token
// blocks; the engine caches blockSize-token blocks. Engine block j (tokens j·B … (j+1)·B−1)
// ends inside trace block k = ((j+1)·B − 1) / traceBlock, so its content is fixed by
// hash_ids[0..k] and its position j. The first engine block ending in trace block k hashes
// to the trace block's key, which chains the previous trace block's key with hash_ids[k];
// the others hash the key with their place s after it (j − that first block). Two prompts
// share engine block j exactly when they share trace blocks 0..k, so sharing stays at
// trace-block granularity. Only the keys form a chain: a prompt's sub-block hashes do not
// wait for one another, so they cost a fraction of a chained hash each.

// mix64 is the splitmix64 finalizer: a cheap bijection with full avalanche.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// blockKeys appends to dst the group keys of the prompt's full engine blocks
// (input/blockSize of them, whose trace ids are hashIDs shifted by offset), and returns it.
// When engine blocks group into trace blocks (groupSize > 1), a block's group key is the
// key of the trace block it ends in: that and the block's place in the group (j mod G) are
// all the pool and the router (built with NewGrouped) read of a block, and the block's
// hash proper, subBlockHash(key, place), is derived only where a KV event publishes it —
// one chained mix per trace block, not one per engine block. Otherwise every block is its
// own group and its key is its hash. Keys are never 0, which the pool uses as "no hash".
func blockKeys(dst []uint64, hashIDs []int64, offset int64, input, blockSize, traceBlock int) []uint64 {
	n := input / blockSize
	grouped := groupSize(blockSize, traceBlock) > 1
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	var key uint64
	for j := 0; j < n; {
		// Engine block j is the first to end in trace block k; so do the ones up to end.
		k := ((j+1)*blockSize - 1) / traceBlock
		end := min(n, (k+1)*traceBlock/blockSize)
		// One bijective mix per trace block; two different inputs collide only by a 64-bit
		// coincidence.
		key = mix64(bits.RotateLeft64(key, 29) ^ (uint64(hashIDs[k]+offset)*0x9e3779b97f4a7c15 + 0xc2b2ae3d27d4eb4f))
		if key == 0 {
			key = 1
		}
		run := out[j:end]
		if grouped {
			for i := range run {
				run[i] = key
			}
		} else {
			for i := range run {
				run[i] = subBlockHash(key, int32(i))
			}
		}
		j = end
	}
	return dst
}

// subBlockHash is the hash of the engine block sub places after the first one ending in
// the trace block keyed key (sub 0: the key itself). The pool keeps no hashes: it derives
// them from its records' keys.
func subBlockHash(key uint64, sub int32) uint64 {
	if sub == 0 {
		return key
	}
	h := mix64(key ^ uint64(sub)*0xd6e8feb86659fd93)
	if h == 0 {
		h = 1
	}
	return h
}

// groupSize is how many engine blocks make one trace block (the pool's cache-entry group);
// 1 when trace blocks are not a whole number (at most 32) of engine blocks.
func groupSize(blockSize, traceBlock int) int32 {
	if blockSize > traceBlock || traceBlock%blockSize != 0 || traceBlock/blockSize > 32 {
		return 1
	}
	return int32(traceBlock / blockSize)
}
