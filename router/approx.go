package router

// What the router knows of the workers' caches when that knowledge lags or is guessed.
//
// With KV events off (Dynamo's --no-router-kv-events) the router never hears from the
// engines: it records each request's prompt blocks on the worker it chose, as if the worker
// had cached them at once, and forgets each block router_ttl_secs after the last request
// that brought it there (Dynamo: lib/kv-router/src/approx.rs, PruneManager, read at
// 209c9e83; its TTL and tree-size defaults in PruneConfig::default). When the predicted
// blocks outgrow the tree's bound (2^20 blocks, pruned to 80 %), the ones due to expire
// first go first, deepest first within one request's blocks — Dynamo's heap order
// (expiry, then sequence position).
//
// With events on, an event may reach the index KVEventDelayUS after the engine's cache
// changed (the event plane's latency): events wait in a queue until then.
//
// Both need the simulation's clock, which the engine lends the router (SetClock); the router
// catches up with it (expiries, delayed events) before each routing decision, which is the
// only moment the index is read, so the answer is the same as if it had kept time.

// Dynamo's PruneConfig::default: the tree is pruned past 2^20 blocks down to 80 % of that.
const approxMaxBlocks = 1 << 20

// timedView is the router's state that depends on the clock.
type timedView struct {
	now *int64 // the simulation's clock (µs), lent by SetClock; nil reads as 0
	// predictedIndex is router_predicted_ttl_secs' side index (nil: off).
	predictedIndex *Router
	// maxBlocks bounds the prediction (approxMaxBlocks; tests lower it).
	maxBlocks int

	// Events on: events not yet delivered, in order (those before delayedFront delivered),
	// with their blocks copied.
	delayed      []delayedEvent
	delayedFront int

	// Events off: the predicted blocks' expiry per (worker, trace block, sub-block), and the
	// routing decisions in order with the time their blocks expire. A block refreshed by a
	// later decision keeps only its latest expiry in predicted; an older decision's entry
	// for it is stale and skipped.
	predicted map[approxBlock]int64
	decisions []approxDecision
	front     int // decisions before it are spent
	evKeys    []uint64
	evSubs    []uint8
}

type approxBlock struct {
	key    uint64
	worker int32
	sub    uint8
}

type approxDecision struct {
	due    int64
	worker int32
	keys   []uint64 // per block, its trace block's key
	subs   []uint8  // per block, its place in the trace block
}

type delayedEvent struct {
	due int64
	ev  KVEvent
}

// SetClock lends the router the simulation's clock (µs). Routers with KV events off, an
// event delay or predicted blocks read it; the others never do.
func (r *Router) SetClock(now *int64) {
	r.idx.now = now
	if r.idx.predictedIndex != nil {
		r.idx.predictedIndex.SetClock(now)
	}
}

// timed reports whether the configuration needs the clock.
func (c Config) timed() bool { return c.NoKVEvents || c.KVEventDelayUS > 0 || c.PredictedTTLSecs > 0 }

// newPredicted is the side index of router_predicted_ttl_secs: a router with events off and
// that TTL, whose index alone is read.
func newPredicted(cfg Config, workers, g int) *Router {
	side := cfg
	side.Mode, side.NoKVEvents, side.TTLSecs, side.PredictedTTLSecs, side.Replicas = ModeRoundRobin, true, cfg.PredictedTTLSecs, 0, 1
	side.SessionAffinityTTLSecs = 0
	r, err := NewGrouped(side, workers, g, 0)
	if err != nil {
		panic("router: side index of a valid config: " + err.Error()) // cfg was validated
	}
	return r
}

// withPredicted raises r.overlap to the side index's overlap of hashes where it is longer,
// as Dynamo's find_matches answers the per-worker maximum of both indexes (no side index:
// nothing).
func (r *Router) withPredicted(hashes []uint64) {
	s := r.idx.predictedIndex
	if s == nil {
		return
	}
	s.catchUp()
	s.sink += s.cached.prefetch(hashes, s.g)
	s.scanCached(hashes)
	for w, n := range s.overlap[:r.workers] {
		r.overlap[w] = max(r.overlap[w], n)
	}
}

func (r *Router) clock() int64 {
	if r.idx.now == nil {
		return 0
	}
	return *r.idx.now
}

// catchUp brings the index to the present: delayed events now due are applied, predicted
// blocks now expired are dropped.
func (r *Router) catchUp() {
	now := r.clock()
	v := &r.idx
	for v.delayedFront < len(v.delayed) && v.delayed[v.delayedFront].due <= now {
		r.apply(v.delayed[v.delayedFront].ev)
		v.delayed[v.delayedFront] = delayedEvent{}
		v.delayedFront++
	}
	if v.delayedFront > 0 && v.delayedFront*2 >= len(v.delayed) { // drop the delivered once they are half
		n := copy(v.delayed, v.delayed[v.delayedFront:])
		clear(v.delayed[n:])
		v.delayed, v.delayedFront = v.delayed[:n], 0
	}
	for v.front < len(v.decisions) && v.decisions[v.front].due <= now {
		r.forget(&v.decisions[v.front], len(v.decisions[v.front].keys))
		v.front++
	}
	r.compactDecisions()
}

// compactDecisions drops spent decisions once they are half the queue.
func (r *Router) compactDecisions() {
	v := &r.idx
	if v.front > 0 && v.front*2 >= len(v.decisions) {
		n := copy(v.decisions, v.decisions[v.front:])
		clear(v.decisions[n:])
		v.decisions = v.decisions[:n]
		v.front = 0
	}
}

// delay queues a copy of ev (its slices are the engine's, reused) for delivery after the
// event delay.
func (r *Router) delay(ev KVEvent) {
	c := KVEvent{Worker: ev.Worker, Kind: ev.Kind, Tier: ev.Tier, Hashes: append([]uint64(nil), ev.Hashes...)}
	if ev.Keys != nil {
		c.Keys = append([]uint64(nil), ev.Keys...)
		c.Subs = append([]uint8(nil), ev.Subs...)
	}
	r.idx.delayed = append(r.idx.delayed, delayedEvent{due: r.clock() + r.cfg.KVEventDelayUS, ev: c})
}

// predictRouted records a routed request where this router predicts caches: in its own
// index with events off, in the side index with predicted blocks.
func (r *Router) predictRouted(w int, req *Request) {
	if r.cfg.NoKVEvents {
		r.predict(w, req)
	} else if p := r.idx.predictedIndex; p != nil {
		p.predict(w, req)
	}
}

// predict records req's prompt blocks as cached on w until the TTL runs out, and prunes the
// prediction to its bound.
func (r *Router) predict(w int, req *Request) {
	v := &r.idx
	if v.predicted == nil {
		v.predicted = make(map[approxBlock]int64, 1024)
		if v.maxBlocks == 0 {
			v.maxBlocks = approxMaxBlocks
		}
	}
	n, g := len(req.BlockHashes), r.g
	if n == 0 {
		return
	}
	d := approxDecision{due: r.clock() + r.cfg.ttlUS(), worker: int32(w), keys: make([]uint64, n), subs: make([]uint8, n)}
	for j := range n {
		d.keys[j], d.subs[j] = req.BlockHashes[j-j%g], uint8(j%g)
		v.predicted[approxBlock{d.keys[j], int32(w), d.subs[j]}] = d.due
	}
	r.apply(r.event(w, BlocksStored, d.keys, d.subs))
	v.decisions = append(v.decisions, d)
	if len(v.predicted) > v.maxBlocks {
		// Prune: the oldest decision's blocks, deepest first, down to 80 % of the bound.
		for target := v.maxBlocks * 8 / 10; len(v.predicted) > target; {
			f := &v.decisions[v.front]
			keep := max(0, len(f.keys)-(len(v.predicted)-target))
			r.forget(f, len(f.keys)-keep)
			f.keys, f.subs = f.keys[:keep], f.subs[:keep]
			if keep == 0 {
				v.front++
			}
		}
	}
	r.compactDecisions()
}

// forget drops the last k blocks of decision d from the prediction, those a later decision
// has not refreshed.
func (r *Router) forget(d *approxDecision, k int) {
	v := &r.idx
	keys, subs := v.evKeys[:0], v.evSubs[:0]
	for j := len(d.keys) - k; j < len(d.keys); j++ {
		b := approxBlock{d.keys[j], d.worker, d.subs[j]}
		if due, ok := v.predicted[b]; ok && due == d.due {
			delete(v.predicted, b)
			keys, subs = append(keys, d.keys[j]), append(subs, d.subs[j])
		}
	}
	v.evKeys, v.evSubs = keys, subs
	if len(keys) > 0 {
		r.apply(r.event(int(d.worker), BlocksRemoved, keys, subs))
	}
}

// event is a KV event of blocks given by trace-block key and sub-block, in this router's
// spelling: an ungrouped router keys blocks by their own hash.
func (r *Router) event(w int, kind KVEventKind, keys []uint64, subs []uint8) KVEvent {
	if r.g == 1 {
		return KVEvent{Worker: w, Kind: kind, Hashes: keys}
	}
	return KVEvent{Worker: w, Kind: kind, Hashes: keys, Keys: keys, Subs: subs}
}
