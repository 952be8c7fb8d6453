package router

import (
	"container/heap"
	"fmt"
	"strings"
)

// Admission as Dynamo's KV router does it (lib/kv-router/src/scheduling/queue.rs @ 00067c3,
// docs/components/router/router-filtering.md @ cf02239):
//   - the router queue (--router-queue-threshold, kv_router only: it is the KV scheduler's): a request waits in the router while every
//     worker's active prefill tokens (the router's own bookkeeping) exceed threshold ×
//     max_num_batched_tokens, and while earlier requests wait (a new arrival does not bypass
//     the backlog); a worker's load falling (a first token, a completion) releases waiting
//     requests in the queue policy's order, each routed on the load of that moment;
//   - busy thresholds: a worker whose published load (the engine's KV blocks in use and
//     prompt tokens still to prefill, as its forward-pass metrics report them) exceeds a
//     threshold is left out of the choice; a request finding every worker busy is rejected
//     (HTTP 503), counted as rejected and never simulated.

// Route's answers other than a worker.
const (
	Queued   = -1 // held in the router queue; Release routes it later
	Rejected = -2 // every worker busy
)

// QueuePolicy orders the router queue (--router-queue-policy).
type QueuePolicy string

const (
	QueueFCFS QueuePolicy = "fcfs" // earliest arrival first: the tail TTFT
	QueueWSPT QueuePolicy = "wspt" // shortest prompt first (Smith's rule, weight 1 ÷ isl): the mean TTFT
	QueueLCFS QueuePolicy = "lcfs" // latest arrival first: Dynamo's comparison-only ordering
)

// QueuePolicies lists the policies in a fixed order (help text, menus).
func QueuePolicies() []QueuePolicy { return []QueuePolicy{QueueFCFS, QueueWSPT, QueueLCFS} }

// ParseQueuePolicy accepts a router_queue_policy value ("" is fcfs).
func ParseQueuePolicy(s string) (QueuePolicy, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "" {
		return QueueFCFS, nil
	}
	for _, p := range QueuePolicies() {
		if v == string(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("router_queue_policy: unknown policy %q (want fcfs, wspt or lcfs)", s)
}

func (p QueuePolicy) fcfs() bool { return p == "" || p == QueueFCFS }

// waiting is one request in the router queue.
type waiting struct {
	req Request
	seq int64 // arrival order
}

// routerQueue is a heap in the policy's order.
type routerQueue struct {
	policy QueuePolicy
	items  []waiting
	seq    int64
}

func (q *routerQueue) Len() int { return len(q.items) }
func (q *routerQueue) Less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	switch q.policy {
	case QueueWSPT:
		if a.req.InputLength != b.req.InputLength {
			return a.req.InputLength < b.req.InputLength
		}
	case QueueLCFS:
		return a.seq > b.seq
	}
	return a.seq < b.seq
}
func (q *routerQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *routerQueue) Push(x any)    { q.items = append(q.items, x.(waiting)) }
func (q *routerQueue) Pop() any {
	n := len(q.items) - 1
	x := q.items[n]
	q.items = q.items[:n]
	return x
}

// Dispatch is a request Release took from the queue: the worker it was routed to, or
// Rejected.
type Dispatch struct {
	ID     int64
	Worker int
}

// QueueLen is how many requests wait in the router queue.
func (r *Router) QueueLen() int { return r.queue.Len() }

// Published records worker w's load as its forward-pass metrics report it: KV blocks in use
// and prompt tokens still to prefill. The busy thresholds read it.
func (r *Router) Published(w int, kvBlocks int, prefillTokens int64) {
	r.published[w] = publishedLoad{kvBlocks: kvBlocks, prefillTokens: prefillTokens}
}

type publishedLoad struct {
	kvBlocks      int
	prefillTokens int64
}

// busy reports whether worker w's published load exceeds a busy threshold (OR of the three).
func (r *Router) busy(w int) bool {
	lc := &r.cfg.Load
	p := r.published[w]
	switch {
	case lc.ActiveDecodeBlocksThreshold != nil && float64(p.kvBlocks) > *lc.ActiveDecodeBlocksThreshold*float64(lc.KVBlocks):
		return true
	case lc.ActivePrefillTokensThreshold != nil && p.prefillTokens > *lc.ActivePrefillTokensThreshold:
		return true
	case lc.ActivePrefillTokensThresholdFrac != nil && float64(p.prefillTokens) > *lc.ActivePrefillTokensThresholdFrac*float64(lc.MaxNumBatchedTokens):
		return true
	}
	return false
}

// saturated reports whether every worker's active prefill tokens exceed the queue threshold
// × max_num_batched_tokens (busy workers are not eligible, so they count as above it).
func (r *Router) saturated() bool {
	lc := &r.cfg.Load
	limit := *lc.QueueThreshold * float64(lc.MaxNumBatchedTokens)
	busy := lc.busyThresholds()
	for w := range r.workers {
		if busy && r.busy(w) {
			continue
		}
		if float64(r.activePrefillTokens(w)) <= limit {
			return false
		}
	}
	return true
}

// admit is Route under admission: queue, reject or route.
func (r *Router) admit(req *Request) int {
	if r.cfg.Load.QueueThreshold != nil && r.cfg.Mode == ModeKV && (r.queue.Len() > 0 || r.saturated()) {
		r.queue.seq++
		heap.Push(&r.queue, waiting{req: *req, seq: r.queue.seq})
		return Queued
	}
	return r.place(req)
}

// place routes req among the workers that are not busy, or rejects it.
func (r *Router) place(req *Request) int {
	if r.timed { // a queued request is placed later than it arrived
		r.catchUp()
	}
	r.scan(req.BlockHashes)
	r.withPredicted(req.BlockHashes)
	if r.cfg.Load.stride() > 1 {
		r.strideActive()
	}
	r.refreshView()
	w := -1
	if r.cfg.Load.busyThresholds() {
		free := r.freeMask()
		if free == 0 {
			return Rejected
		}
		w = r.chooseFree(req)
	} else if r.serving != nil {
		w = r.chooseServing(req)
	} else {
		w = r.policy.choose(r, req)
	}
	r.book(w, req)
	r.predictRouted(w, req)
	return w
}

// freeMask marks the workers that are not busy in r.free and returns how many there are.
func (r *Router) freeMask() int {
	n := 0
	for w := range r.workers {
		r.free[w] = !r.busy(w) && (r.serving == nil || r.serving[w])
		if r.free[w] {
			n++
		}
	}
	return n
}

// chooseFree is the policy's choice among the free workers: busy ones priced out of the
// kv_router's and least_loaded's argmin and softmax, skipped by round_robin and random.
func (r *Router) chooseFree(req *Request) int {
	n := r.workers
	switch p := r.policy.(type) {
	case *roundRobin:
		for {
			w := p.choose(r, req)
			if r.free[w] {
				return w
			}
		}
	case randomPolicy:
		k := r.rng.IntN(r.freeCount())
		for w := range n {
			if r.free[w] {
				if k == 0 {
					return w
				}
				k--
			}
		}
	case kvPolicy:
		k := newKVCost(r.cfg, req)
		var tiered []float64 // with KV tiers, their credit too (tiers.go)
		if r.tiers != nil {
			tiered = r.tieredCosts(req)
		}
		cost := r.cost[:0]
		idx := r.freeIdx[:0]
		for w := range n {
			if r.free[w] {
				c := k.cost(&r.view[w], r.overlap[w], r.activePrefix[w])
				if tiered != nil {
					c = tiered[w]
				}
				cost = append(cost, c)
				idx = append(idx, w)
			}
		}
		r.freeIdx = idx
		if r.cfg.Temperature == 0 {
			return idx[argminRandomTie(r, cost)]
		}
		return idx[softmaxSample(r, cost, r.cfg.Temperature)]
	}
	// least_loaded and any other policy: the lowest in-flight count among the free workers.
	cost := r.cost[:0]
	idx := r.freeIdx[:0]
	for w := range n {
		if r.free[w] {
			cost = append(cost, float64(r.load[w].InFlight))
			idx = append(idx, w)
		}
	}
	r.freeIdx = idx
	return idx[argminRandomTie(r, cost)]
}

func (r *Router) freeCount() int {
	k := 0
	for _, f := range r.free[:r.workers] {
		if f {
			k++
		}
	}
	return k
}

// Release routes the next queued request when the fleet is no longer saturated, into d; it
// reports whether it took one. Call it until it returns false after a worker's load falls.
func (r *Router) Release(d *Dispatch) bool {
	if r.queue.Len() == 0 || r.saturated() {
		return false
	}
	x := heap.Pop(&r.queue).(waiting)
	d.ID = x.req.ID
	d.Worker = r.place(&x.req)
	return true
}
