package router

import (
	"fmt"
	"math"
)

// Session affinity is Dynamo's --router-session-affinity-ttl-secs, as
// docs/components/router/router-configuration.md ("Session Affinity") defines it at
// ai-dynamo/dynamo 057096c3, with the mechanics of lib/llm/src/session_affinity/coordinator.rs
// (AffinityCoordinator) and mod.rs at 0bdea740: off by default; on, the first request of a
// session binds the session to the worker it is routed to, and later requests of the session
// are dispatched to that worker without the policy choosing, however loaded it is. Requests in
// flight keep a binding alive (leases); when the last one finishes the binding's idle timer
// starts, and a request arriving TTL or more after that is routed afresh and binds anew.
// Dynamo holds at most 65,536 bindings and fails a new session's request beyond that; here
// such a request is routed without binding (the traces modelled stay far below the limit).

// MaxSessionAffinityTTLSecs is Dynamo's bound of the TTL (a year).
const MaxSessionAffinityTTLSecs = 31_536_000

// maxAffinityEntries is Dynamo's MAX_SESSION_AFFINITY_ENTRIES.
const maxAffinityEntries = 65_536

type affinity struct {
	ttlUS int64
	bound map[int64]*binding // session key → its binding
	// session is, per request in flight that holds a lease, its session key.
	session map[int64]int64
}

type binding struct {
	worker    int32
	leases    int32
	idleSince int64 // when the last lease ended
}

func newAffinity(ttlSecs float64) *affinity {
	if ttlSecs == 0 {
		return nil
	}
	return &affinity{ttlUS: int64(ttlSecs * 1e6), bound: map[int64]*binding{}, session: map[int64]int64{}}
}

// live reports whether b still binds at now: a lease is held, or it has been idle for less
// than the TTL.
func (a *affinity) live(b *binding, now int64) bool { return b.leases > 0 || now < b.idleSince+a.ttlUS }

// routeSession routes a request of a session under affinity: to its bound worker, or as
// routeFree chooses, binding the session there.
func (r *Router) routeSession(req *Request) int {
	a, now := r.aff, r.clock()
	b := a.bound[req.Session]
	if b != nil && a.live(b, now) {
		w := int(b.worker)
		if r.timed {
			r.catchUp()
		}
		r.scan(req.BlockHashes)
		r.withPredicted(req.BlockHashes)
		if !r.plain {
			if r.cfg.Load.stride() > 1 {
				r.strideActive()
			}
			r.refreshView()
		}
		r.book(w, req)
		r.predictRouted(w, req)
		b.leases++
		a.session[req.ID] = req.Session
		return w
	}
	w := r.routeFree(req)
	if b == nil && len(a.bound) >= maxAffinityEntries {
		a.prune(now)
		if len(a.bound) >= maxAffinityEntries {
			return w
		}
	}
	if b == nil {
		b = &binding{}
		a.bound[req.Session] = b
	}
	*b = binding{worker: int32(w), leases: 1}
	a.session[req.ID] = req.Session
	return w
}

// finished ends request id's lease; the last one starts its binding's idle timer.
func (a *affinity) finished(id, now int64) {
	key, ok := a.session[id]
	if !ok {
		return
	}
	delete(a.session, id)
	if b := a.bound[key]; b != nil {
		if b.leases--; b.leases == 0 {
			b.idleSince = now
		}
	}
}

// prune drops expired bindings, as Dynamo's reaper does every min(TTL, 30 s).
func (a *affinity) prune(now int64) {
	for k, b := range a.bound {
		if !a.live(b, now) {
			delete(a.bound, k)
		}
	}
}

// validateAffinity checks router_session_affinity_ttl_secs: 0 (off) or whole seconds from 1
// to a year, as Dynamo's AffinityCoordinator accepts; one router without the router queue or
// busy thresholds (the combinations are not modelled).
func (c Config) validateAffinity() error {
	v := c.SessionAffinityTTLSecs
	switch {
	case v == 0:
		return nil
	case math.IsNaN(v) || v < 1 || v > MaxSessionAffinityTTLSecs || v != math.Trunc(v):
		return fmt.Errorf("router_session_affinity_ttl_secs: %v must be a whole number of seconds from 1 to %d (0: off)", v, MaxSessionAffinityTTLSecs)
	case c.Replicas > 1:
		return fmt.Errorf("router_session_affinity_ttl_secs: with %d routers (router_replicas) is not modelled: Dynamo syncs bindings between replicas best effort", c.Replicas)
	case c.Load.Admission():
		return fmt.Errorf("router_session_affinity_ttl_secs: with the router queue or busy thresholds is not modelled")
	}
	return nil
}
