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
	spare   [][]uint32 // refs slices of finished bookings, reused by the next ones

	// Per-request scratch, filled by scan before the policy chooses.
	overlap   []int     // cached prefix blocks per worker
	newBlocks []int     // request blocks not yet active on the worker
	slots     []int     // slot of each scanned block, -1 when unknown
	scanned   int       // how many leading blocks scan looked up
	grows     int       // the index's grows at scan time: slots are stale once it moves
	cost      []float64 // policy scratch
}

// booking is what Route recorded about a request, so FirstToken and Finished can undo it.
type booking struct {
	worker        int32
	prefilling    bool
	prefillTokens int64
	refs          []uint32 // refcount records of the prompt blocks (see blockIndex)
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

// IndexedBlocks is the number of distinct blocks the indexer tracks (cached or active).
func (r *Router) IndexedBlocks() int { return r.index.len() }

// Route chooses a worker for req and books it there: its uncached prompt tokens join the
// worker's prefill load and its prompt blocks join the worker's active blocks. The router
// does not keep req. An id that is still booked is finished first, so a repeated id never
// corrupts the loads.
func (r *Router) Route(req *Request) int {
	if _, dup := r.booked[req.ID]; dup {
		r.Finished(req.ID)
	}
	r.index.touch(req.BlockHashes)
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
	delete(r.booked, id)
	w := int(b.worker)
	l := &r.load[w]
	if b.prefilling {
		l.PrefillTokens -= b.prefillTokens
	}
	l.InFlight--
	x := r.index
	for _, ref := range b.refs {
		if x.dropRef(ref, w) {
			l.ActiveBlocks--
		}
	}
	r.spare = append(r.spare, b.refs[:0])
}

// Apply feeds one KV event into the indexer. Events for workers outside the fleet and
// removals of blocks the indexer never saw are ignored, as Dynamo's indexer does.
func (r *Router) Apply(ev KVEvent) {
	if ev.Worker < 0 || ev.Worker >= r.workers {
		return
	}
	bit := uint64(1) << ev.Worker
	x := r.index
	x.touch(ev.Hashes)
	switch ev.Kind {
	case BlocksStored:
		for _, h := range ev.Hashes {
			x.tab[x.getOrAdd(h)].cached |= bit
		}
	case BlocksRemoved:
		for _, h := range ev.Hashes {
			if i := x.find(h); i >= 0 {
				x.tab[i].cached &^= bit
				x.releaseIfUnused(i)
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
// request's blocks already active on w is the length of w's active prefix. The walk stops
// as soon as no worker matches any more.
func (r *Router) scan(hashes []uint64) {
	all := uint64(1)<<r.workers - 1
	if r.workers == maxWorkers {
		all = ^uint64(0)
	}
	if cap(r.slots) < len(hashes) {
		r.slots = make([]int, len(hashes))
	}
	r.slots = r.slots[:len(hashes)]
	cached, active := all, all
	x := r.index
	r.grows = x.grows
	i := 0
	for ; i < len(hashes) && cached|active != 0; i++ {
		var c, a uint64
		s := x.find(hashes[i])
		r.slots[i] = s
		if s >= 0 {
			c, a = x.tab[s].cached, x.tab[s].active
		}
		for lost := cached &^ c; lost != 0; lost &= lost - 1 {
			r.overlap[bits.TrailingZeros64(lost)] = i
		}
		for lost := active &^ a; lost != 0; lost &= lost - 1 {
			r.newBlocks[bits.TrailingZeros64(lost)] = len(hashes) - i
		}
		cached &= c
		active &= a
	}
	r.scanned = i
	for ; cached != 0; cached &= cached - 1 {
		r.overlap[bits.TrailingZeros64(cached)] = i
	}
	for ; active != 0; active &= active - 1 {
		r.newBlocks[bits.TrailingZeros64(active)] = 0
	}
}

// book records req on worker w, using the overlap and slots of the last scan.
func (r *Router) book(w int, req *Request) {
	pre := int64(req.InputLength) - int64(r.overlap[w])*int64(r.cfg.BlockSize)
	if pre < 0 {
		pre = 0
	}
	l := &r.load[w]
	l.InFlight++
	l.PrefillTokens += pre
	var refs []uint32
	if k := len(r.spare); k > 0 {
		refs = r.spare[k-1]
		r.spare = r.spare[:k-1]
	}
	x := r.index
	for i, h := range req.BlockHashes {
		s := -1
		if i < r.scanned && x.grows == r.grows {
			s = r.slots[i] // inserts move no slot until the table grows
		}
		if s < 0 {
			s = x.getOrAdd(h)
		}
		rec, activated := x.addRef(s, w)
		if activated {
			l.ActiveBlocks++
		}
		refs = append(refs, rec)
	}
	r.booked[req.ID] = booking{worker: int32(w), prefilling: true, prefillTokens: pre, refs: refs}
}
