package kvtier

// Key names one engine block: its trace block's key and its place (sub-block) in it, as the
// engine's pool and the router's KV events name blocks.
type Key struct {
	Group uint64
	Sub   uint8
}

// tier is one lower tier's blocks in LRU order: a slab of nodes linked from least (head)
// to most recently used (tail), and a map from key to node. A block is visible from its
// ready time on (its transfer into the tier has finished); until then it is pinned.
type tier struct {
	cap        int
	at         map[Key]int32
	nodes      []node
	free       []int32
	head, tail int32 // -1: empty
}

type node struct {
	key        Key
	ready      int64
	pins       int32 // onboards reading the block: not evictable meanwhile
	prev, next int32
}

func newTier(capacity int) tier {
	return tier{cap: capacity, at: make(map[Key]int32), head: -1, tail: -1}
}

func (t *tier) len() int { return len(t.at) }

// visible reports whether k is in the tier and its transfer has finished by now.
func (t *tier) visible(k Key, now int64) bool {
	i, ok := t.at[k]
	return ok && t.nodes[i].ready <= now
}

func (t *tier) has(k Key) bool {
	_, ok := t.at[k]
	return ok
}

// insert adds k as the most recently used block, ready at ready. The caller made room.
func (t *tier) insert(k Key, ready int64) {
	i := slot(&t.nodes, &t.free)
	t.nodes[i] = node{key: k, ready: ready, prev: t.tail, next: -1}
	t.link(i)
	t.at[k] = i
}

func (t *tier) link(i int32) {
	n := &t.nodes[i]
	n.prev, n.next = t.tail, -1
	if t.tail >= 0 {
		t.nodes[t.tail].next = i
	} else {
		t.head = i
	}
	t.tail = i
}

func (t *tier) unlink(i int32) {
	n := &t.nodes[i]
	if n.prev >= 0 {
		t.nodes[n.prev].next = n.next
	} else {
		t.head = n.next
	}
	if n.next >= 0 {
		t.nodes[n.next].prev = n.prev
	} else {
		t.tail = n.prev
	}
}

// touch makes k the most recently used block.
func (t *tier) touch(k Key) {
	if i, ok := t.at[k]; ok && i != t.tail {
		t.unlink(i)
		t.link(i)
	}
}

// arrived makes k visible from ready on.
func (t *tier) arrived(k Key, ready int64) { t.nodes[t.at[k]].ready = ready }

// pin adds d to k's onboards in flight.
func (t *tier) pin(k Key, d int32) { t.nodes[t.at[k]].pins += d }

// evictLRU removes the least recently used visible, unpinned block and returns it; false when every
// block is still in transfer.
func (t *tier) evictLRU(now int64) (Key, bool) {
	for i := t.head; i >= 0; i = t.nodes[i].next {
		if t.nodes[i].ready <= now && t.nodes[i].pins == 0 {
			k := t.nodes[i].key
			t.unlink(i)
			delete(t.at, k)
			t.free = append(t.free, i)
			return k, true
		}
	}
	return Key{}, false
}

// slot returns an index of items to fill: one from free, else a new one at the end.
func slot[T any](items *[]T, free *[]int32) int32 {
	if n := len(*free); n > 0 {
		i := (*free)[n-1]
		*free = (*free)[:n-1]
		return i
	}
	var zero T
	*items = append(*items, zero)
	return int32(len(*items) - 1)
}
