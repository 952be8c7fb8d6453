package router

import (
	"strings"
	"testing"
)

// A session's requests follow its first to its worker while it has requests in flight or
// has been idle for less than the TTL; after that the policy chooses afresh. Round robin
// makes every free choice visible: it would move each request on.
func TestSessionAffinityBindsUntilIdleTTL(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Mode = ModeRoundRobin
	cfg.SessionAffinityTTLSecs = 10
	r, err := New(cfg, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	var now int64
	r.SetClock(&now)
	route := func(id, session int64) int {
		return r.Route(&Request{ID: id, InputLength: 64, BlockHashes: []uint64{uint64(id)}, Session: session})
	}
	w := route(1, 7)
	if other := route(2, 0); other == w {
		t.Fatalf("round robin routed two requests to %d", w)
	}
	if got := route(3, 7); got != w { // the first is still in flight
		t.Fatalf("bound session went to %d, want %d", got, w)
	}
	if r.Load(w).InFlight != 2 {
		t.Fatalf("bound worker has %d in flight, want 2 (the bound request is booked)", r.Load(w).InFlight)
	}
	now = 5_000_000
	r.Finished(1)
	now = 20_000_000 // a lease is still held: no expiry
	if got := route(4, 7); got != w {
		t.Fatalf("session with a request in flight went to %d, want %d", got, w)
	}
	r.Finished(3)
	now = 21_000_000
	r.Finished(4) // idle from 21 s
	now = 30_999_999
	if got := route(5, 7); got != w {
		t.Fatalf("session idle 9.999999 s went to %d, want %d", got, w)
	}
	r.Finished(5) // idle from 30.999999 s
	now = 41_000_000
	if got := route(6, 7); got == w {
		t.Fatalf("session idle past its TTL stayed on %d (round robin moves on)", w)
	}
}

// Off (0) changes nothing; out-of-range TTLs and the unmodelled combinations are refused by name.
func TestSessionAffinityConfig(t *testing.T) {
	for _, c := range []struct {
		ttl      float64
		replicas int
		queue    bool
		want     string
	}{
		{0.5, 1, false, "must be a whole number of seconds from 1 to 31536000"},
		{MaxSessionAffinityTTLSecs + 1, 1, false, "must be a whole number"},
		{60, 2, false, "with 2 routers (router_replicas) is not modelled"},
		{60, 1, true, "with the router queue or busy thresholds is not modelled"},
	} {
		cfg := DefaultConfig()
		cfg.SessionAffinityTTLSecs, cfg.Replicas = c.ttl, c.replicas
		if c.queue {
			q := 1.0
			cfg.Load.QueueThreshold, cfg.Load.MaxNumBatchedTokens, cfg.Load.KVBlocks = &q, 16384, 1000
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c, err, c.want)
		}
	}
	cfg := DefaultConfig()
	cfg.SessionAffinityTTLSecs = MaxSessionAffinityTTLSecs
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}
