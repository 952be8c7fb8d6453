package router

import "fmt"

// Several routers in front of one fleet (router_replicas): Dynamo runs one KV router in each
// frontend replica (docs/components/router/router-operations.md, read at 02a5f28f). Each
// keeps its own state:
//
//   - prefix cache: every router consumes every worker's KV events, so with events on their
//     indexes agree (each after the event delay); with events off each predicts only from
//     its own decisions;
//   - active load: each router counts only the requests it routed, unless replica sync
//     (--router-replica-sync) publishes every router's bookings, prefill completions and
//     frees to the others, which apply them ReplicaSyncDelayUS later.
//
// Requests reach the routers in turn, as a round-robin load balancer in front of the
// frontends would send them.

// Replicas routes through several routers sharing one fleet. Like Router, it is driven from
// one event loop and lends its clock to every router.
type Replicas struct {
	rs    []*Router
	next  int
	sync  bool
	delay int64
	now   *int64
	// Sync messages not yet delivered to the other routers, in order (delay > 0).
	pending []syncMsg
	front   int
	origin  map[int64]int32 // delayed sync: each request's routing router, until it finishes
}

type syncKind uint8

const (
	syncBook syncKind = iota
	syncFirstToken
	syncFinished
)

// syncMsg is one router's booking, prefill completion or free, on its way to the others.
type syncMsg struct {
	due    int64
	kind   syncKind
	origin int32
	worker int32
	pre    int64
	req    Request // syncBook: a copy with its own hashes
}

// NewReplicas builds cfg.Replicas routers (NewGrouped each) for the fleet; router i draws
// from seed + i, so router 0 draws as a lone router would.
func NewReplicas(cfg Config, workers, subBlocks int, seed uint64) (*Replicas, error) {
	n := max(cfg.Replicas, 1)
	if n > MaxReplicas {
		return nil, fmt.Errorf("router_replicas: %d out of range (1..%d)", n, MaxReplicas)
	}
	p := &Replicas{sync: cfg.ReplicaSync, delay: cfg.ReplicaSyncDelayUS, origin: map[int64]int32{}}
	for i := range n {
		r, err := NewGrouped(cfg, workers, subBlocks, seed+uint64(i))
		if err != nil {
			return nil, err
		}
		p.rs = append(p.rs, r)
	}
	return p, nil
}

// SetClock lends every router the simulation's clock (µs).
func (p *Replicas) SetClock(now *int64) {
	p.now = now
	for _, r := range p.rs {
		r.SetClock(now)
	}
}

// Router returns router i, for inspection.
func (p *Replicas) Router(i int) *Router { return p.rs[i] }

func (p *Replicas) clock() int64 {
	if p.now == nil {
		return 0
	}
	return *p.now
}

// Route sends req to the next router in turn, which chooses and books the worker; with sync
// the others book it too (after the sync delay).
func (p *Replicas) Route(req *Request) int {
	p.deliver()
	k := p.next
	p.next = (p.next + 1) % len(p.rs)
	r := p.rs[k]
	w := r.Route(req)
	if p.sync {
		pre := r.booked[req.ID].prefillTokens
		if p.delay == 0 {
			for j, o := range p.rs {
				if j != k {
					o.bookSynced(w, req, pre)
				}
			}
		} else {
			c := *req
			c.BlockHashes = append([]uint64(nil), req.BlockHashes...)
			p.origin[req.ID] = int32(k)
			p.pending = append(p.pending, syncMsg{due: p.clock() + p.delay, kind: syncBook, origin: int32(k), worker: int32(w), pre: pre, req: c})
		}
	}
	return w
}

// FirstToken tells the routers that know the request (its own, and with sync the others,
// after the delay) that its prefill is done.
func (p *Replicas) FirstToken(id int64) { p.lifecycle(syncFirstToken, id) }

// Finished tells the routers that know the request that it left its worker.
func (p *Replicas) Finished(id int64) { p.lifecycle(syncFinished, id) }

func (p *Replicas) lifecycle(kind syncKind, id int64) {
	if !p.sync || p.delay == 0 {
		// Unsynced routers do not know each other's requests: an unknown id is ignored.
		for _, r := range p.rs {
			r.lifecycle(kind, id)
		}
		return
	}
	// The routing router at once, the others when the message arrives.
	k, ok := p.origin[id]
	if !ok {
		return
	}
	if kind == syncFinished {
		delete(p.origin, id)
	}
	p.rs[k].lifecycle(kind, id)
	p.pending = append(p.pending, syncMsg{due: p.clock() + p.delay, kind: kind, origin: k, req: Request{ID: id}})
}

// Apply feeds a KV event to every router.
func (p *Replicas) Apply(ev KVEvent) {
	for _, r := range p.rs {
		r.Apply(ev)
	}
}

// deliver applies the sync messages now due, in order.
func (p *Replicas) deliver() {
	now := p.clock()
	for p.front < len(p.pending) && p.pending[p.front].due <= now {
		m := &p.pending[p.front]
		for j, o := range p.rs {
			if j == int(m.origin) {
				continue
			}
			if m.kind == syncBook {
				o.bookSynced(int(m.worker), &m.req, m.pre)
			} else {
				o.lifecycle(m.kind, m.req.ID)
			}
		}
		*m = syncMsg{}
		p.front++
	}
	if p.front > 0 && p.front*2 >= len(p.pending) {
		n := copy(p.pending, p.pending[p.front:])
		clear(p.pending[n:])
		p.pending, p.front = p.pending[:n], 0
	}
}

// bookSynced books another router's request on worker w with the prefill tokens that router
// priced it at.
func (r *Router) bookSynced(w int, req *Request, pre int64) {
	if _, dup := r.booked[req.ID]; dup {
		r.Finished(req.ID)
	}
	r.bookTokens(w, req, pre)
}

// lifecycle applies a request's prefill completion or free.
func (r *Router) lifecycle(kind syncKind, id int64) {
	if kind == syncFirstToken {
		r.FirstToken(id)
	} else {
		r.Finished(id)
	}
}
