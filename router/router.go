// Package router chooses a worker for each request, with the semantics of NVIDIA Dynamo's
// KV-aware router and the usual baseline policies.
package router

// Request is what the router knows of a request when it routes it.
type Request struct {
	ID          int64
	InputLength int // prompt tokens (isl)
	// BlockHashes are the chained hashes of the prompt's engine blocks, full blocks only,
	// in order; equal hash at position i means equal prompt prefix through block i.
	BlockHashes []uint64
}

// KVEventKind says whether blocks entered or left a worker's prefix cache.
type KVEventKind uint8

const (
	// BlocksStored: full blocks became reusable cache entries on the worker.
	BlocksStored KVEventKind = iota + 1
	// BlocksRemoved: cached blocks were evicted from the worker.
	BlocksRemoved
)

// KVEvent is what an engine publishes about its prefix cache; the router's indexer is fed
// only by these events.
type KVEvent struct {
	Worker int
	Kind   KVEventKind
	Hashes []uint64
}
