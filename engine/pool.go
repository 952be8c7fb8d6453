package engine

// blockPool is one worker's KV cache: numGPUBlocks fixed-size blocks with vLLM-style prefix
// caching.
//
// A block is in exactly one of three states:
//   - in use: refs > 0 (held by running requests; it may also carry a cache hash);
//   - cached and free: refs == 0 with a hash, on the LRU list, reusable by a prefix hit and
//     evictable;
//   - plain free: refs == 0 without a hash (never filled with a full prompt block, or a
//     decode block), on a stack.
//
// Allocation takes plain blocks first and evicts the least recently freed cached block only
// when no plain block is left, so cached content survives until space is really needed.
type blockPool struct {
	refs []int32
	hash []uint64 // 0: no cache entry (block hashes are never 0, see blockHash)

	// LRU list of cached free blocks, intrusive over block ids; -1 ends it.
	prev, next       []int32
	lruHead, lruTail int32
	lruLen           int

	plain []int32 // stack of plain free blocks
	index map[uint64]int32
	inUse int

	removed []uint64 // evicted hashes not yet published as a KV event
}

func newBlockPool(n int) blockPool {
	p := blockPool{
		refs:    make([]int32, n),
		hash:    make([]uint64, n),
		prev:    make([]int32, n),
		next:    make([]int32, n),
		lruHead: -1,
		lruTail: -1,
		plain:   make([]int32, n),
		index:   make(map[uint64]int32, n),
	}
	// Pop order 0, 1, 2, … only to make block ids readable in tests.
	for i := range n {
		p.plain[i] = int32(n - 1 - i)
	}
	return p
}

func (p *blockPool) size() int { return len(p.refs) }

// available is how many blocks an allocation could obtain right now (plain + evictable).
func (p *blockPool) available() int { return len(p.plain) + p.lruLen }

// alloc returns a block with refs = 1 and no hash, evicting the LRU cached block if needed.
// The caller has checked available() > 0.
func (p *blockPool) alloc() int32 {
	var b int32
	if k := len(p.plain); k > 0 {
		b = p.plain[k-1]
		p.plain = p.plain[:k-1]
	} else {
		b = p.lruHead
		p.lruRemove(b)
		h := p.hash[b]
		delete(p.index, h)
		p.hash[b] = 0
		p.removed = append(p.removed, h)
	}
	p.refs[b] = 1
	p.inUse++
	return b
}

// touch takes a reference on a cached block found by a prefix hit.
func (p *blockPool) touch(b int32) {
	if p.refs[b] == 0 {
		p.lruRemove(b)
		p.inUse++
	}
	p.refs[b]++
}

// release drops one reference; an unreferenced block becomes cached-free (LRU tail) or plain.
func (p *blockPool) release(b int32) {
	p.refs[b]--
	if p.refs[b] > 0 {
		return
	}
	p.inUse--
	if p.hash[b] != 0 {
		p.lruPush(b)
	} else {
		p.plain = append(p.plain, b)
	}
}

// freeAll releases a request's blocks tail first, as vLLM does, so that a prompt's last
// (least shared) blocks are evicted before its first ones.
func (p *blockPool) freeAll(blocks []int32) {
	for i := len(blocks) - 1; i >= 0; i-- {
		p.release(blocks[i])
	}
}

// store makes block b (full, in use) a cache entry for h. If another block already caches h
// (two requests computed the same prefix concurrently) b stays plain, as in vLLM; it reports
// whether a new entry was created.
func (p *blockPool) store(b int32, h uint64) bool {
	if _, dup := p.index[h]; dup {
		return false
	}
	p.index[h] = b
	p.hash[b] = h
	return true
}

// lookup finds the block caching h.
func (p *blockPool) lookup(h uint64) (int32, bool) {
	b, ok := p.index[h]
	return b, ok
}

func (p *blockPool) lruPush(b int32) {
	p.prev[b] = p.lruTail
	p.next[b] = -1
	if p.lruTail >= 0 {
		p.next[p.lruTail] = b
	} else {
		p.lruHead = b
	}
	p.lruTail = b
	p.lruLen++
}

func (p *blockPool) lruRemove(b int32) {
	pv, nx := p.prev[b], p.next[b]
	if pv >= 0 {
		p.next[pv] = nx
	} else {
		p.lruHead = nx
	}
	if nx >= 0 {
		p.prev[nx] = pv
	} else {
		p.lruTail = pv
	}
	p.lruLen--
}
