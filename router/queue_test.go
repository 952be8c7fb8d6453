package router

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func ptr[T any](v T) *T { return &v }

// queueRouter is a 2-worker kv router that queues as soon as every worker has any active
// prefill tokens (threshold 0), under policy p.
func queueRouter(t testing.TB, p QueuePolicy) *Router {
	cfg := DefaultConfig()
	cfg.Load = LoadConfig{QueueThreshold: ptr(0.0), QueuePolicy: p, MaxNumBatchedTokens: 1024}
	return newTest(t, cfg, 2)
}

func TestQueueHoldsOnlyWhileEveryWorkerIsAboveThreshold(t *testing.T) {
	r := queueRouter(t, QueueFCFS)
	a := &Request{ID: 1, InputLength: 128, BlockHashes: blocks(100, 2)}
	b := &Request{ID: 2, InputLength: 128, BlockHashes: blocks(200, 2)}
	c := &Request{ID: 3, InputLength: 128, BlockHashes: blocks(300, 2)}
	wa, wb := r.Route(a), r.Route(b)
	if wa < 0 || wb < 0 || wa == wb {
		t.Fatalf("the first two requests went to %d and %d, want one on each idle worker", wa, wb)
	}
	if w := r.Route(c); w != Queued {
		t.Fatalf("with both workers prefilling the third request got %d, want Queued", w)
	}
	var d Dispatch
	if r.Release(&d) {
		t.Fatalf("released %+v while every worker is still above the threshold", d)
	}
	r.FirstToken(a.ID)
	if !r.Release(&d) || d.ID != c.ID || d.Worker != wa {
		t.Fatalf("after worker %d's prefill ended: release %+v, want request 3 on worker %d", wa, d, wa)
	}
	if r.QueueLen() != 0 {
		t.Fatalf("queue holds %d after its only request left", r.QueueLen())
	}
}

func TestQueuePolicyOrder(t *testing.T) {
	for _, tc := range []struct {
		p    QueuePolicy
		want []int64
	}{
		{QueueFCFS, []int64{3, 4, 5}},
		{QueueLCFS, []int64{5, 4, 3}},
		{QueueWSPT, []int64{4, 5, 3}}, // shortest prompt first
	} {
		r := queueRouter(t, tc.p)
		r.Route(&Request{ID: 1, InputLength: 64, BlockHashes: blocks(10, 1)})
		r.Route(&Request{ID: 2, InputLength: 64, BlockHashes: blocks(20, 1)})
		r.Route(&Request{ID: 3, InputLength: 640, BlockHashes: blocks(30, 10)})
		r.Route(&Request{ID: 4, InputLength: 64, BlockHashes: blocks(40, 1)})
		r.Route(&Request{ID: 5, InputLength: 320, BlockHashes: blocks(50, 5)})
		var got []int64
		var d Dispatch
		for _, id := range []int64{1, 2, 3, 4, 5} {
			r.FirstToken(id) // a finished prefill frees room for one
			for r.Release(&d) {
				got = append(got, d.ID)
				r.FirstToken(d.ID)
			}
		}
		if len(got) != 3 || got[0] != tc.want[0] || got[1] != tc.want[1] || got[2] != tc.want[2] {
			t.Errorf("%s released %v, want %v", tc.p, got, tc.want)
		}
	}
}

// TestQueueInvariant: after any sequence of routes, first tokens and completions, a request
// waits in the router queue only while every worker is above the threshold, and every routed
// request is on a worker, waiting, or released exactly once.
func TestQueueInvariant(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := rapid.IntRange(1, 4).Draw(t, "workers")
		cfg := DefaultConfig()
		cfg.Load = LoadConfig{QueueThreshold: ptr(rapid.Float64Range(0, 2).Draw(t, "threshold")),
			QueuePolicy: QueuePolicies()[rapid.IntRange(0, 2).Draw(t, "policy")], MaxNumBatchedTokens: 256}
		r, err := New(cfg, workers, 1)
		if err != nil {
			t.Fatal(err)
		}
		placed := map[int64]bool{}
		prefilling := map[int64]bool{}
		queued := 0
		next := int64(0)
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				n := rapid.IntRange(1, 8).Draw(t, "blocks")
				req := &Request{ID: next, InputLength: 64 * n, BlockHashes: blocks(int(next)*100, n)}
				next++
				switch w := r.Route(req); {
				case w == Queued:
					queued++
				case w >= 0:
					placed[req.ID], prefilling[req.ID] = true, true
				default:
					t.Fatalf("route answered %d without busy thresholds", w)
				}
			case 1:
				for id := range prefilling {
					r.FirstToken(id)
					delete(prefilling, id)
					break
				}
			case 2:
				for id := range placed {
					r.Finished(id)
					delete(placed, id)
					delete(prefilling, id)
					break
				}
			}
			var d Dispatch
			for r.Release(&d) {
				queued--
				if d.Worker < 0 || placed[d.ID] {
					t.Fatalf("release %+v: not a fresh placement", d)
				}
				placed[d.ID], prefilling[d.ID] = true, true
			}
			if r.QueueLen() != queued {
				t.Fatalf("queue holds %d, want %d", r.QueueLen(), queued)
			}
			if r.QueueLen() > 0 && !r.saturated() {
				t.Fatalf("%d requests wait while a worker is at or below the threshold", r.QueueLen())
			}
		}
	})
}

func TestBusyThresholds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Load = LoadConfig{ActivePrefillTokensThreshold: ptr(int64(100)), MaxNumBatchedTokens: 1024}
	r := newTest(t, cfg, 2)
	// Worker 1 holds the prefix, but it reports 500 prompt tokens to prefill: it is busy.
	r.Apply(KVEvent{Worker: 1, Kind: BlocksStored, Hashes: []uint64{1, 2, 3}})
	r.Published(1, 10, 500)
	if w := r.Route(&Request{ID: 1, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 4}}); w != 0 {
		t.Fatalf("routed to %d, want 0: the prefix holder is busy", w)
	}
	r.Published(0, 10, 101)
	if w := r.Route(&Request{ID: 2, InputLength: 64, BlockHashes: []uint64{9}}); w != Rejected {
		t.Fatalf("with every worker busy the request got %d, want Rejected", w)
	}
	r.Published(0, 10, 100) // at the threshold is not above it
	if w := r.Route(&Request{ID: 3, InputLength: 64, BlockHashes: []uint64{9}}); w != 0 {
		t.Fatalf("routed to %d, want 0 (at, not above, its threshold)", w)
	}
}

func TestDecodeBlocksThresholdIsAFractionOfTheCache(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Load = LoadConfig{ActiveDecodeBlocksThreshold: ptr(0.5), MaxNumBatchedTokens: 1024, KVBlocks: 1000}
	r := newTest(t, cfg, 1)
	r.Published(0, 501, 0)
	if w := r.Route(&Request{ID: 1, InputLength: 64, BlockHashes: []uint64{1}}); w != Rejected {
		t.Fatalf("501 of 1000 blocks over a 0.5 threshold: got %d, want Rejected", w)
	}
	r.Published(0, 500, 0)
	if w := r.Route(&Request{ID: 2, InputLength: 64, BlockHashes: []uint64{1}}); w != 0 {
		t.Fatalf("500 of 1000 blocks: got %d, want 0", w)
	}
}

// The names of the queue policies and prefill-load models parse to themselves, whatever the
// case and spacing, and nothing else parses.
func FuzzParseLoadNames(f *testing.F) {
	for _, s := range []string{"fcfs", " WSPT", "lcfs", "", "aic", "none", "sjf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, err := ParseQueuePolicy(s); err == nil {
			if q, err := ParseQueuePolicy(string(p)); err != nil || q != p {
				t.Fatalf("%q parsed to %q, which does not parse back", s, p)
			}
		} else if !strings.Contains(err.Error(), "router_queue_policy") {
			t.Fatalf("error %v does not name the key", err)
		}
		if m, err := ParsePrefillLoadModel(s); err == nil {
			if n, err := ParsePrefillLoadModel(string(m)); err != nil || n != m {
				t.Fatalf("%q parsed to %q, which does not parse back", s, m)
			}
		} else if !strings.Contains(err.Error(), "router_prefill_load_model") {
			t.Fatalf("error %v does not name the key", err)
		}
	})
}

// Busy workers are skipped by round robin and random, and priced out of least_loaded's choice.
func TestBusyWorkersLeftOutOfEveryMode(t *testing.T) {
	for _, mode := range Modes() {
		cfg := DefaultConfig()
		cfg.Mode = mode
		cfg.Load = LoadConfig{ActivePrefillTokensThreshold: ptr(int64(0)), MaxNumBatchedTokens: 1024}
		r := newTest(t, cfg, 3)
		r.Published(0, 0, 1)
		r.Published(2, 0, 1)
		for id := range int64(6) {
			if w := r.Route(&Request{ID: id, InputLength: 64, BlockHashes: []uint64{uint64(id)}}); w != 1 {
				t.Fatalf("%s: request %d went to %d, want the one free worker 1", mode, id, w)
			}
		}
	}
}
