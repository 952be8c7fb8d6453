package engine

import "math/bits"

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

// blockHashes appends to dst the chained hashes of the prompt's full engine blocks
// (input/blockSize of them), whose trace ids are hashIDs shifted by offset, and returns it. Hashes are never 0, which the pool uses as
// "no hash".
func blockHashes(dst []uint64, hashIDs []int64, offset int64, input, blockSize, traceBlock int) []uint64 {
	n := input / blockSize
	var key uint64
	k, sub, next := -1, 0, 0 // next: first token of trace block k+1
	for j := range n {
		var h uint64
		// One bijective mix per block; two different inputs collide only by a 64-bit
		// coincidence.
		if last := (j+1)*blockSize - 1; last >= next {
			k, sub = last/traceBlock, 0
			next = (k + 1) * traceBlock
			key = mix64(bits.RotateLeft64(key, 29) ^ (uint64(hashIDs[k]+offset)*0x9e3779b97f4a7c15 + 0xc2b2ae3d27d4eb4f))
			if key == 0 {
				key = 1
			}
			h = key
		} else {
			sub++
			h = subBlockHash(key, int32(sub))
		}
		dst = append(dst, h)
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
