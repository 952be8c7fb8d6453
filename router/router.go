// Package router chooses a worker for each request, with the semantics of NVIDIA Dynamo's
// KV-aware router and the usual baseline policies.
package router

import (
	"fmt"
	"math/rand/v2"
)

// Request is what the router knows of a request when it routes it.
type Request struct {
	ID          int64
	InputLength int // prompt tokens (isl)
	// BlockHashes are the chained hashes of the prompt's engine blocks, full blocks only,
	// in order; equal hash at position i means equal prompt prefix through block i. A
	// router built with NewGrouped reads only each trace block's first (its key), so an
	// engine may give every block its trace block's key there.
	BlockHashes []uint64
	// Session is 1 + the index of the request's session (0: none), the key of session
	// affinity (affinity.go).
	Session int64
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
	Hashes []uint64 // engine-block hashes
	// Keys and Subs place each block in its trace block, for a router built with
	// NewGrouped: Hashes[i] is sub-block Subs[i] of the trace block whose first engine
	// block hashes to Keys[i]. Nil for an ungrouped router.
	Keys []uint64
	Subs []uint8
	// Tier is where the blocks are: the GPU cache (0), or a lower tier (tiers.go).
	Tier StorageTier
}

// MaxWorkers bounds the fleet: the indexer keeps one bit per worker per cached block, so a
// cached block costs 8 + 8·⌈workers/64⌉ bytes (136 at the bound).
const MaxWorkers = 1024

// WorkerLoad is the router's bookkeeping for one worker.
type WorkerLoad struct {
	InFlight      int   // requests routed here and not finished
	PrefillTokens int64 // Σ (isl − cached prefix tokens) of its requests still in prefill
	ActiveBlocks  int   // distinct prompt blocks of its in-flight requests
	// OutputBlocks: generated blocks of its in-flight requests, weighted by their decay
	// (LoadConfig.TrackOutputBlocks; 0 otherwise).
	OutputBlocks float64
}

// Router routes requests and keeps the per-worker state the policies need. It is not safe
// for concurrent use; the simulator drives it from one event loop.
type Router struct {
	cfg     Config
	workers int
	policy  policy
	rng     *rand.Rand
	active  *maskTable // trace-block key → workers with any of it in an in-flight prompt; second: all of it; aux: record
	load    []WorkerLoad
	booked  map[int64]booking
	spare   [][]uint32 // refs slices of finished bookings, reused by the next ones

	// Records of active trace blocks (active.go): record r is the trace block keyed
	// activeKey[r]; per worker w, g refcounts say how many in-flight requests on w hold each
	// of its sub-blocks. Up to 64 workers the counts are a dense slab (row r·workers + w of
	// denseCounts, one array index on the hot path); wider fleets key a row of wideCounts by
	// (r, w) in refCounts, so memory follows what is in flight rather than records × workers.
	activeKey    []uint64
	activeTotals []uint32 // wider fleets: per record, g refcounts summed over its workers
	denseCounts  []uint32
	refCounts    *maskTable
	wideCounts   []uint32
	freeRows     []uint32
	freeRecs     []uint32

	// The prefix-cache index, one entry per trace block of g engine blocks (cached.go).
	g         int
	wholeSubs uint32     // all g sub-blocks
	cached    *maskTable // trace-block key → workers caching any of it; second: all of it; aux: record
	// Record rec is recStride counts (record): g counts of the workers caching each
	// sub-block, then (up to 64 workers) each worker's mask of cached sub-blocks, so one
	// record is one or two cache lines. Wider fleets key the masks by (rec, worker) in
	// subsWide instead, and keep, after the counts, the mask of the sub-blocks whose count
	// is not zero (heldSubs). Records come in chunks of 1,024 (recChunkShift) that never
	// move: a filling index neither copies its records nor zeroes their room again as it
	// grows.
	recs       [][]uint32
	recStride  int
	subsWide   *maskTable
	cachedN    int // distinct engine blocks cached on some worker
	cachedRecs int
	freeCached []uint32

	// Worker masks of ⌈workers/64⌉ words: all workers, and scan's two walking sets.
	all, liveCached, liveActive, none []uint64

	// Per-request scratch, filled by scan before the policy chooses.
	overlap      []int     // cached prefix blocks per worker
	activePrefix []int     // the request's leading blocks already active on the worker
	cost         []float64 // policy scratch

	sink uint64 // what prefetch loaded, kept so the loads are not dropped

	// Active load and admission beyond Dynamo's defaults (activeload.go, queue.go,
	// prefillload.go); plain is set when cfg.Load is the default and none of it is used.
	plain     bool
	view      []WorkerLoad // the loads the policies price: load, or viewBuf under the AIC model
	viewBuf   []WorkerLoad
	queue     routerQueue
	published []publishedLoad
	free      []bool
	freeIdx   []int
	orders    []prefillOrder
	expect    map[int64]int64
	pricer    PrefillPricer
	now       int64

	timed bool      // the configuration reads the clock (Config.timed)
	idx   timedView // approx.go

	aff     *affinity  // session affinity (affinity.go); nil: off
	tiers   *tierIndex // lower KV tiers (tiers.go); nil without them
	serving []bool     // nil: every worker takes requests (serving.go)
}

// booking is what Route recorded about a request, so FirstToken and Finished can undo it.
type booking struct {
	worker        int32
	prefilling    bool
	prefillTokens int64
	refs          []uint32 // per trace block of the prompt: record << 5 | (its sub-blocks − 1)
	// Beyond the default accounting: blocks booked without sharing (NoAssumeKVReuse), the
	// prompt's length, and its output blocks with their weighted sum (TrackOutputBlocks).
	own       int32
	isl       int
	outBlocks int32
	outWeight float64
}

// New builds a router for a fleet of workers (1..MaxWorkers). The seed drives tie-breaking,
// temperature sampling and the random policy.
func New(cfg Config, workers int, seed uint64) (*Router, error) {
	return NewGrouped(cfg, workers, 1, seed)
}

// NewGrouped builds a router whose requests' engine blocks come in trace blocks of
// subBlocks (1..32): engine block j is sub-block j mod subBlocks of the trace block keyed
// by BlockHashes[j − j mod subBlocks], and KV events say so (KVEvent.Keys, Subs). Its
// index then keeps one entry per trace block.
func NewGrouped(cfg Config, workers, subBlocks int, seed uint64) (*Router, error) {
	return NewGroupedReusing(nil, cfg, workers, subBlocks, seed)
}

// NewGroupedReusing is NewGrouped building the router in prev's memory: its tables, slabs
// and scratch keep their capacity, emptied, so a sweep that replays one simulation after
// another does not grow (and fault in) a router's memory again for each. prev (which may be
// nil) must not be used afterwards. The router routes exactly as a new one: no answer of a
// table depends on its capacity, and whatever a new router would find zeroed is zeroed
// (TestReusedRouterIsANewOne).
func NewGroupedReusing(prev *Router, cfg Config, workers, subBlocks int, seed uint64) (*Router, error) {
	if subBlocks < 1 || subBlocks > 32 {
		return nil, fmt.Errorf("sub-blocks per trace block: %d out of range (1..32)", subBlocks)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if workers < 1 || workers > MaxWorkers {
		return nil, fmt.Errorf("workers: %d out of range (1..%d)", workers, MaxWorkers)
	}
	if prev == nil {
		prev = &Router{}
	}
	def, _ := findPolicy(string(cfg.Mode)) // Validate accepted the mode
	cfg.Mode = def.mode
	words := (workers + 63) / 64
	all := zeroed(prev.all, words)
	for w := range workers {
		all[w>>6] |= 1 << (w & 63)
	}
	stride := subBlocks // a cached record's counts (recs)
	if words == 1 {
		stride += workers
	} else {
		stride++ // the mask of sub-blocks held anywhere (heldSubs)
	}
	// A new cached record takes its chunk's room as it is (newCachedRecord).
	recs := prev.recs
	if prev.recStride != stride {
		recs = nil
	}
	// Only the records prev made were written; the room past them never was.
	for i, c := range recs {
		clear(c[:min(len(c), max(0, prev.cachedRecs-i<<recChunkShift)*stride)])
	}
	booked := prev.booked
	if booked == nil {
		booked = make(map[int64]booking, 1024)
	}
	clear(booked)
	r := &Router{
		cfg:          cfg,
		workers:      workers,
		policy:       def.build(),
		rng:          rand.New(rand.NewPCG(seed, 0x726f75746572)), // "router"
		g:            subBlocks,
		recStride:    stride,
		wholeSubs:    uint32(1)<<subBlocks - 1,
		cached:       reuseMaskTable(prev.cached, 1<<13, words, true, true),
		active:       reuseMaskTable(prev.active, 1<<12, words, true, true),
		load:         zeroed(prev.load, workers),
		booked:       booked,
		spare:        prev.spare,
		activeKey:    prev.activeKey[:0],
		activeTotals: prev.activeTotals[:0],
		denseCounts:  prev.denseCounts[:0],
		wideCounts:   prev.wideCounts[:0],
		freeRows:     prev.freeRows[:0],
		freeRecs:     prev.freeRecs[:0],
		recs:         recs,
		freeCached:   prev.freeCached[:0],
		all:          all,
		liveCached:   zeroed(prev.liveCached, words),
		liveActive:   zeroed(prev.liveActive, words),
		none:         zeroed(prev.none, words),
		overlap:      zeroed(prev.overlap, workers),
		activePrefix: zeroed(prev.activePrefix, workers),
		cost:         zeroed(prev.cost, workers),
		timed:        cfg.timed(),
		aff:          newAffinity(cfg.SessionAffinityTTLSecs),
	}
	if cfg.PredictedTTLSecs > 0 {
		r.idx.predictedIndex = newPredicted(cfg, workers, subBlocks)
	}
	if cfg.Tiers != nil {
		r.tiers = newTierIndex(*cfg.Tiers, workers)
	}
	r.plain = cfg.Load.Default()
	r.view = r.load
	if !r.plain {
		r.queue = routerQueue{policy: cfg.Load.QueuePolicy, items: prev.queue.items[:0]}
		r.published = zeroed(prev.published, workers)
		r.free = zeroed(prev.free, workers)
		r.freeIdx = zeroed(prev.freeIdx, workers)
		r.orders = zeroed(prev.orders, workers)
		r.expect = map[int64]int64{}
	}
	if words > 1 {
		r.refCounts = reuseMaskTable(prev.refCounts, 1<<14, 1, false, false)
		r.subsWide = reuseMaskTable(prev.subsWide, 1<<13, 1, false, false)
	}
	*prev = Router{} // prev's memory is r's now
	return r, nil
}

// zeroed returns n zero elements in s's memory when it has room, else new ones.
func zeroed[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// refKey is the refcount table's key of record rec on worker w: the worker in the high
// half, so Fibonacci hashing spreads one record's workers over the table.
func refKey(rec uint32, w int) uint64 { return uint64(w)<<32 | uint64(rec) }

// Config returns the router's knobs.
func (r *Router) Config() Config { return r.cfg }

// Workers is the fleet size.
func (r *Router) Workers() int { return r.workers }

// Load returns worker w's bookkeeping.
func (r *Router) Load(w int) WorkerLoad { return r.load[w] }

// CachedBlocks is the number of distinct blocks cached on at least one worker, as the
// indexer knows from KV events.
func (r *Router) CachedBlocks() int { return r.cachedN }

// Route chooses a worker for req and books it there: its uncached prompt tokens join the
// worker's prefill load and its prompt blocks join the worker's active blocks. The router
// does not keep req. An id that is still booked is finished first, so a repeated id never
// corrupts the loads.
func (r *Router) Route(req *Request) int {
	if _, dup := r.booked[req.ID]; dup {
		r.Finished(req.ID)
	}
	if r.aff != nil && req.Session != 0 {
		return r.routeSession(req)
	}
	return r.routeFree(req)
}

// routeFree is Route by the policy, without session affinity.
func (r *Router) routeFree(req *Request) int {
	if r.timed {
		r.catchUp()
	}
	if !r.plain {
		if r.cfg.Load.Admission() {
			return r.admit(req)
		}
		return r.place(req)
	}
	r.scan(req.BlockHashes)
	r.withPredicted(req.BlockHashes)
	var w int
	if r.serving != nil {
		w = r.chooseServing(req)
	} else {
		w = r.policy.choose(r, req)
	}
	r.book(w, req)
	r.predictRouted(w, req)
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
	if r.orders != nil {
		r.aicDone(int(b.worker), id)
	}
}

// Finished removes a request from its worker (and its prefill tokens, if still booked).
// Unknown ids are ignored, so a second Finished is harmless.
func (r *Router) Finished(id int64) {
	if r.aff != nil {
		r.aff.finished(id, r.clock())
	}
	b, ok := r.booked[id]
	if !ok {
		return
	}
	delete(r.booked, id)
	w := int(b.worker)
	l := &r.load[w]
	if b.prefilling {
		l.PrefillTokens -= b.prefillTokens
		if r.orders != nil {
			r.aicDone(w, id)
		}
	}
	l.InFlight--
	l.ActiveBlocks -= int(b.own)
	l.OutputBlocks -= b.outWeight
	for _, ref := range b.refs {
		r.unbook(w, ref>>5, int(ref&31)+1)
	}
	r.spare = append(r.spare, b.refs[:0])
}

// Apply feeds one KV event into the indexer, after the event delay if there is one; with KV
// events off the router ignores it. Events for workers outside the fleet and removals of
// blocks the indexer never saw are ignored, as Dynamo's indexer does.
func (r *Router) Apply(ev KVEvent) {
	if r.timed {
		switch {
		case r.cfg.NoKVEvents:
			return
		case r.cfg.KVEventDelayUS > 0:
			r.delay(ev)
			return
		}
	}
	r.apply(ev)
}

// apply is Apply without delay.
func (r *Router) apply(ev KVEvent) {
	if ev.Worker < 0 || ev.Worker >= r.workers {
		return
	}
	if ev.Tier != TierDevice {
		r.applyTier(&ev)
		return
	}
	if ev.Keys != nil {
		// The event's trace blocks' slots, read at once (maskTable.prefetch).
		for i := 0; i < len(ev.Keys); i = ev.runEnd(i) {
			r.sink += r.cached.touch(ev.Keys[i])
		}
	}
	for i := 0; i < len(ev.Hashes); {
		j := ev.runEnd(i)
		switch ev.Kind {
		case BlocksStored:
			r.store(&ev, i, j)
		case BlocksRemoved:
			r.remove(&ev, i, j)
		}
		i = j
	}
}

// Overlaps writes, for each worker, how many leading blocks of hashes its prefix cache
// holds (per the indexer). out must have one slot per worker.
func (r *Router) Overlaps(hashes []uint64, out []int) {
	if r.timed {
		r.catchUp()
	}
	r.scan(hashes)
	if r.idx.predictedIndex != nil {
		r.withPredicted(hashes)
	}
	copy(out, r.overlap)
}

// scan fills r.overlap (cached prefix per worker, scanCached) and r.activePrefix (active
// prefix per worker, scanActive).
func (r *Router) scan(hashes []uint64) {
	r.sink += r.cached.prefetch(hashes, r.g)
	r.scanCached(hashes)
	r.scanActive(hashes)
}

// book records req on worker w, using the overlap found by the last scan.
func (r *Router) book(w int, req *Request) {
	pre := int64(req.InputLength) - int64(r.overlap[w])*int64(r.cfg.BlockSize)
	if pre < 0 {
		pre = 0
	}
	r.bookTokens(w, req, pre)
}

// bookTokens records req on worker w with pre uncached prompt tokens.
func (r *Router) bookTokens(w int, req *Request, pre int64) {
	l := &r.load[w]
	l.InFlight++
	l.PrefillTokens += pre
	var refs []uint32
	if k := len(r.spare); k > 0 {
		refs = r.spare[k-1]
		r.spare = r.spare[:k-1]
	}
	if !r.plain {
		r.bookCustom(w, req, pre, refs)
		return
	}
	n, g := len(req.BlockHashes), r.g
	for base := 0; base < n; base += g {
		nk := min(g, n-base)
		rec := r.bookBlocks(w, req.BlockHashes[base], nk)
		refs = append(refs, rec<<5|uint32(nk-1))
	}
	r.booked[req.ID] = booking{worker: int32(w), prefilling: true, prefillTokens: pre, refs: refs}
}

// bookCustom is book under a LoadConfig other than the default.
func (r *Router) bookCustom(w int, req *Request, pre int64, refs []uint32) {
	lc := &r.cfg.Load
	if lc.NoTrackPrefillTokens {
		r.load[w].PrefillTokens -= pre
		pre = 0
	}
	refs, own := r.bookLoad(w, req, refs)
	r.booked[req.ID] = booking{worker: int32(w), prefilling: true, prefillTokens: pre, refs: refs, own: own, isl: req.InputLength}
	if !lc.PrefillLoadModel.None() {
		r.aicBook(w, req.ID, pre, r.overlap[w]*r.cfg.BlockSize)
	}
}
