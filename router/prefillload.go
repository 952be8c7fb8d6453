package router

import (
	"fmt"
	"strings"
)

// The AIC prefill-load model (--router-prefill-load-model aic), as Dynamo's prefill tracker has
// it (lib/kv-router/src/sequences/prefill_tracker.rs @ 0b6b920): the router prices each routed
// request's expected prefill on its worker (the uncached tokens after the cached prefix) and
// keeps the worker's prefills in arrival order; the oldest is the anchor, and the worker's
// active prefill tokens are Σ booked prefill tokens − anchor's tokens × elapsed ÷ its expected
// duration, at least 0 (elapsed since it became the anchor, which may spill over into later
// prefills). When the anchor's prefill ends, the next oldest becomes the anchor at that time.

// PrefillLoadModel is the router's prompt-side load model.
type PrefillLoadModel string

const (
	PrefillLoadNone PrefillLoadModel = "none" // static prompt load until the first token
	PrefillLoadAIC  PrefillLoadModel = "aic"  // the oldest prefill decays over its priced duration
)

// ParsePrefillLoadModel accepts a router_prefill_load_model value ("" is none).
func ParsePrefillLoadModel(s string) (PrefillLoadModel, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", string(PrefillLoadNone):
		return PrefillLoadNone, nil
	case string(PrefillLoadAIC):
		return PrefillLoadAIC, nil
	}
	return "", fmt.Errorf("router_prefill_load_model: unknown model %q (want none or aic)", s)
}

// None reports whether the model is none (static prompt load).
func (m PrefillLoadModel) None() bool { return m == "" || m == PrefillLoadNone }

// PrefillPricer is the expected prefill time (µs) of newTokens prompt tokens after cached
// tokens already in the cache, on the timing tables the engines use.
type PrefillPricer func(newTokens, cachedTokens int) int64

// SetPrefillPricer gives the AIC model its pricer; without one every prefill is unmodelled
// (static, as model none).
func (r *Router) SetPrefillPricer(p PrefillPricer) { r.pricer = p }

// SetNow sets the router's clock (µs), which the AIC model decays by. The engine sets it
// before every call when the model is on.
func (r *Router) SetNow(t int64) { r.now = t }

// prefillOrder is one worker's active prefills, oldest first.
type prefillOrder struct {
	ids    []int64
	since  int64 // when ids[0] became the anchor
	expect int64 // ids[0]'s expected duration (µs)
	tokens int64 // ids[0]'s prefill tokens
}

// aicBook adds a routed request's prefill to worker w's order.
func (r *Router) aicBook(w int, id int64, pre int64, cachedTokens int) {
	o := &r.orders[w]
	expect := int64(0)
	if r.pricer != nil && pre > 0 {
		expect = r.pricer(int(pre), cachedTokens)
	}
	r.expect[id] = expect
	o.ids = append(o.ids, id)
	if len(o.ids) == 1 {
		o.since, o.expect, o.tokens = r.now, expect, pre
	}
}

// aicDone removes a request's prefill from worker w's order, re-anchoring at now when it was
// the oldest.
func (r *Router) aicDone(w int, id int64) {
	o := &r.orders[w]
	for i, x := range o.ids {
		if x != id {
			continue
		}
		o.ids = append(o.ids[:i], o.ids[i+1:]...)
		if i == 0 && len(o.ids) > 0 {
			b := r.booked[o.ids[0]]
			o.since, o.expect, o.tokens = r.now, r.expect[o.ids[0]], b.prefillTokens
		}
		break
	}
	delete(r.expect, id)
}

// activePrefillTokens is worker w's active prefill tokens now: the booked ones, decayed by the
// AIC model when it is on.
func (r *Router) activePrefillTokens(w int) int64 {
	l := r.load[w].PrefillTokens
	if r.cfg.Load.PrefillLoadModel.None() || r.pricer == nil {
		return l
	}
	o := &r.orders[w]
	if len(o.ids) == 0 {
		return l
	}
	// Completed tokens may pass the anchor's own: the elapsed time spills over into later
	// prefills, as Dynamo applies it to the worker's whole backlog.
	if o.expect <= 0 {
		return max(0, l-o.tokens)
	}
	elapsed := max(0, r.now-o.since)
	return max(0, l-int64(float64(o.tokens)*float64(elapsed)/float64(o.expect)))
}

// refreshView makes the policies' view of the loads current: the loads themselves, or with
// the AIC model a copy whose prefill tokens are decayed to now.
func (r *Router) refreshView() {
	if r.cfg.Load.PrefillLoadModel.None() || r.pricer == nil {
		r.view = r.load
		return
	}
	r.viewBuf = append(r.viewBuf[:0], r.load...)
	for w := range r.viewBuf {
		r.viewBuf[w].PrefillTokens = r.activePrefillTokens(w)
	}
	r.view = r.viewBuf
}
