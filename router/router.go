// Package router chooses a worker for each request, with the semantics of NVIDIA Dynamo's
// KV-aware router and the usual baseline policies.
package router

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

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

// maxWorkers bounds the fleet because the indexer keeps one bit per worker per block.
const maxWorkers = 64

// WorkerLoad is the router's bookkeeping for one worker.
type WorkerLoad struct {
	InFlight      int   // requests routed here and not finished
	PrefillTokens int64 // Σ (isl − cached prefix tokens) of its requests still in prefill
	ActiveBlocks  int   // distinct prompt blocks of its in-flight requests
}

// Router routes requests and keeps the per-worker state the policies need. It is not safe
// for concurrent use; the simulator drives it from one event loop.
type Router struct {
	cfg     Config
	workers int
	policy  policy
	rng     *rand.Rand
	index   *blockIndex
	load    []WorkerLoad
	booked  map[int64]booking

	// Per-request scratch, filled by Route before the policy chooses.
	overlap   []int     // cached prefix blocks per worker
	newBlocks []int     // request blocks not yet active on the worker
	cost      []float64 // policy scratch
}

// booking is what Route recorded about a request, so FirstToken and Finished can undo it.
type booking struct {
	worker        int32
	prefilling    bool
	prefillTokens int64
	hashes        []uint64
}

// New builds a router for a fleet of workers (1..64). The seed drives tie-breaking,
// temperature sampling and the random policy.
func New(cfg Config, workers int, seed uint64) (*Router, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if workers < 1 || workers > maxWorkers {
		return nil, fmt.Errorf("workers: %d out of range (1..%d)", workers, maxWorkers)
	}
	mode, _ := ParseMode(string(cfg.Mode))
	cfg.Mode = mode
	return &Router{
		cfg:       cfg,
		workers:   workers,
		policy:    policyFor(mode),
		rng:       rand.New(rand.NewPCG(seed, 0x726f75746572)), // "router"
		index:     newBlockIndex(workers),
		load:      make([]WorkerLoad, workers),
		booked:    make(map[int64]booking, 1024),
		overlap:   make([]int, workers),
		newBlocks: make([]int, workers),
		cost:      make([]float64, workers),
	}, nil
}

// Config returns the router's knobs.
func (r *Router) Config() Config { return r.cfg }

// Workers is the fleet size.
func (r *Router) Workers() int { return r.workers }

// Load returns worker w's bookkeeping.
func (r *Router) Load(w int) WorkerLoad { return r.load[w] }

// Route chooses a worker for req and books it there: its uncached prompt tokens join the
// worker's prefill load and its prompt blocks join the worker's active blocks. The router
// keeps req.BlockHashes until Finished; the caller must not modify them meanwhile. An id
// that is still booked is finished first, so a repeated id never corrupts the loads.
func (r *Router) Route(req *Request) int {
	if _, dup := r.booked[req.ID]; dup {
		r.Finished(req.ID)
	}
	r.scan(req.BlockHashes)
	w := r.policy.choose(r, req)
	r.book(w, req)
	return w
}

// FirstToken marks the end of a request's prefill: its tokens leave the worker's prefill load.
func (r *Router) FirstToken(id int64) {
	b, ok := r.booked[id]
	if !ok || !b.prefilling {
		return
	}
	r.load[b.worker].PrefillTokens -= b.prefillTokens
	b.prefilling = false
	r.booked[id] = b
}

// Finished removes a request from its worker (and its prefill tokens, if still booked).
// Unknown ids are ignored, so a second Finished is harmless.
func (r *Router) Finished(id int64) {
	b, ok := r.booked[id]
	if !ok {
		return
	}
	w := int(b.worker)
	if b.prefilling {
		r.load[w].PrefillTokens -= b.prefillTokens
	}
	r.load[w].InFlight--
	bit := uint64(1) << w
	x := r.index
	for _, h := range b.hashes {
		e, ok := x.lookup(h)
		if !ok {
			continue
		}
		ref := &x.refs[int(e)*x.workers+w]
		*ref--
		if *ref == 0 {
			x.entries[e].active &^= bit
			r.load[w].ActiveBlocks--
			x.release(h, e)
		}
	}
	delete(r.booked, id)
}

// Apply feeds one KV event into the indexer. Events for workers outside the fleet and
// removals of blocks the indexer never saw are ignored, as Dynamo's indexer does.
func (r *Router) Apply(ev KVEvent) {
	if ev.Worker < 0 || ev.Worker >= r.workers {
		return
	}
	bit := uint64(1) << ev.Worker
	x := r.index
	switch ev.Kind {
	case BlocksStored:
		for _, h := range ev.Hashes {
			e := x.getOrAdd(h)
			x.entries[e].cached |= bit
		}
	case BlocksRemoved:
		for _, h := range ev.Hashes {
			if e, ok := x.lookup(h); ok {
				x.entries[e].cached &^= bit
				x.release(h, e)
			}
		}
	}
}

// Overlaps writes, for each worker, how many leading blocks of hashes its prefix cache
// holds (per the indexer). out must have one slot per worker.
func (r *Router) Overlaps(hashes []uint64, out []int) {
	r.scan(hashes)
	copy(out, r.overlap)
}

// scan walks hashes from the front once and fills r.overlap (cached prefix per worker)
// and r.newBlocks (blocks not already active per worker). Active blocks are prefix-closed
// too (an in-flight prompt holding block i holds its whole prefix), so the count of the
// request's blocks already active on w is the length of w's active prefix.
func (r *Router) scan(hashes []uint64) {
	all := uint64(1)<<r.workers - 1
	if r.workers == maxWorkers {
		all = ^uint64(0)
	}
	cached, active := all, all
	x := r.index
	i := 0
	for ; i < len(hashes) && cached|active != 0; i++ {
		var ent blockEntry
		if e, ok := x.lookup(hashes[i]); ok {
			ent = x.entries[e]
		}
		for lost := cached &^ ent.cached; lost != 0; lost &= lost - 1 {
			r.overlap[bits.TrailingZeros64(lost)] = i
		}
		for lost := active &^ ent.active; lost != 0; lost &= lost - 1 {
			r.newBlocks[bits.TrailingZeros64(lost)] = len(hashes) - i
		}
		cached &= ent.cached
		active &= ent.active
	}
	for ; cached != 0; cached &= cached - 1 {
		r.overlap[bits.TrailingZeros64(cached)] = i
	}
	for ; active != 0; active &= active - 1 {
		r.newBlocks[bits.TrailingZeros64(active)] = 0
	}
}

// book records req on worker w, using the overlap found by the last scan.
func (r *Router) book(w int, req *Request) {
	pre := int64(req.InputLength) - int64(r.overlap[w])*int64(r.cfg.BlockSize)
	if pre < 0 {
		pre = 0
	}
	l := &r.load[w]
	l.InFlight++
	l.PrefillTokens += pre
	bit := uint64(1) << w
	x := r.index
	for _, h := range req.BlockHashes {
		e := x.getOrAdd(h)
		ref := &x.refs[int(e)*x.workers+w]
		*ref++
		if *ref == 1 {
			x.entries[e].active |= bit
			l.ActiveBlocks++
		}
	}
	r.booked[req.ID] = booking{worker: int32(w), prefilling: true, prefillTokens: pre, hashes: req.BlockHashes}
}
