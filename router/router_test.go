package router

import (
	"slices"
	"testing"
)

// newTest builds a router or fails the test.
func newTest(t testing.TB, cfg Config, workers int) *Router {
	t.Helper()
	r, err := New(cfg, workers, 1)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// kvCosts returns the kv_router cost of req on every worker without booking it.
func kvCosts(r *Router, req *Request) []float64 {
	saved := r.cfg.Temperature
	r.cfg.Temperature = 0
	r.scan(req.BlockHashes)
	kvPolicy{}.choose(r, req)
	r.cfg.Temperature = saved
	return slices.Clone(r.cost)
}

// put books req on worker w directly (bypassing the policy) to set up a scenario.
func put(r *Router, w int, req *Request, prefillDone bool) {
	r.scan(req.BlockHashes)
	r.book(w, req)
	if prefillDone {
		r.FirstToken(req.ID)
	}
}

func blocks(from, n int) []uint64 {
	h := make([]uint64, n)
	for i := range h {
		h[i] = uint64(from + i)
	}
	return h
}

func TestRoutePrefersPrefixHolder(t *testing.T) {
	r := newTest(t, DefaultConfig(), 2)
	r.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: []uint64{1, 2, 3}})
	req := &Request{ID: 7, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 4}}
	// w0: 256/64 = 4 prefill + 4 new blocks = 8; w1: 4 − 3 cached = 1 prefill + 4 = 5.
	if got, want := kvCosts(r, req), []float64{8, 5}; !slices.Equal(got, want) {
		t.Fatalf("costs %v, want %v", got, want)
	}
	if w := r.Route(req); w != 1 {
		t.Fatalf("routed to %d, want the prefix holder 1", w)
	}
	if got, want := r.Load(1), (WorkerLoad{InFlight: 1, PrefillTokens: 64, ActiveBlocks: 4}); got != want {
		t.Fatalf("load %+v, want %+v", got, want)
	}
}
