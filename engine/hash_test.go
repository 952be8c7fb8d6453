package engine

// blockHashes is the engine-block hashes of a prompt (blockKeys' arguments): its group
// keys expanded to each block's own hash, as KV events name blocks. The per-block
// reference pool and the tests that compare sharing block by block key on them.
func blockHashes(dst []uint64, hashIDs []int64, offset int64, input, blockSize, traceBlock int) []uint64 {
	n := len(dst)
	dst = blockKeys(dst, hashIDs, offset, input, blockSize, traceBlock)
	if groupSize(blockSize, traceBlock) == 1 {
		return dst // every block is its own group, keyed by its hash
	}
	var key uint64
	sub := int32(0)
	for j := n; j < len(dst); j++ {
		if j > n && dst[j] == key {
			sub++
		} else {
			key, sub = dst[j], 0
		}
		dst[j] = subBlockHash(key, sub)
	}
	return dst
}
