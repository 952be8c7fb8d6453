package engine

import (
	"context"
	"testing"

	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// The router's index knobs seen through the whole fleet (router/approx.go, replicas.go):
// each test fails on a router without the knob.

// replayIndex replays tr on workers workers with rc (fakeTimer steps) and returns the report
// with per-request records.
func replayIndex(t *testing.T, workers int, rc router.Config, concurrency int, tr *trace.Trace) *Report {
	t.Helper()
	cfg := Config{Workers: workers, Worker: deployment(100_000, 8192, 64), Router: rc,
		ReplayConcurrency: concurrency, ArrivalSpeedupRatio: 1, Seed: 7, RecordRequests: true}
	rep, err := Replay(context.Background(), cfg, &fakeTimer{base: 100, perToken: 1}, tr)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// sessions is an open-loop trace of n prefixes (4 trace blocks each) revisited turns times,
// round robin, one request every gapMS: each prefix comes back every n·gapMS ms. Every turn
// adds a block of its own.
func sessions(n, turns int, gapMS int64) *trace.Trace {
	tr := &trace.Trace{Name: "sessions", BlockSize: 512}
	next := int64(1_000_000)
	for i := range turns * n {
		p := int64(i % n)
		ids := []int64{p*10 + 1, p*10 + 2, p*10 + 3, p*10 + 4, next}
		next++
		tr.Requests = append(tr.Requests, req(int64(i)*gapMS, 5*512, 4, ids...))
	}
	return tr
}

// With KV events off, a TTL shorter than the trace's reuse distance forgets each prefix
// before it returns, so requests scatter and miss the cache; a TTL longer than it predicts
// the caches as well as the events report them.
func TestApproximateTTLShorterThanReuseLosesReuse(t *testing.T) {
	tr := sessions(8, 8, 100) // reuse distance 800 ms
	events := replayIndex(t, 16, router.DefaultConfig(), 0, tr).Summary.PrefixCacheReusedRatio
	approx := func(ttl float64) float64 {
		rc := router.DefaultConfig()
		rc.NoKVEvents, rc.TTLSecs = true, ttl
		return replayIndex(t, 16, rc, 0, tr).Summary.PrefixCacheReusedRatio
	}
	long, short := approx(120), approx(0.2)
	t.Logf("prefix reuse: events %.3f, approximate TTL 120 s %.3f, TTL 0.2 s %.3f", events, long, short)
	if long != events {
		t.Errorf("approximate with TTL 120 s reuses %.3f, events %.3f: want the same on this trace", long, events)
	}
	if short > events-0.2 {
		t.Errorf("approximate with TTL 0.2 s reuses %.3f, events %.3f: want at least 0.2 less", short, events)
	}
}

// A burst of requests sharing a new prefix, each arriving after the previous one's prefill:
// without delay the first one's KV events lead the others to its worker; with a delay longer
// than the burst the router has not heard of the prefix and spreads them — unless it also
// predicts blocks from its own decisions (router_predicted_ttl_secs, Dynamo's fix).
func TestKVEventDelayScattersBurst(t *testing.T) {
	tr := &trace.Trace{Name: "burst", BlockSize: 512}
	for i := range 16 {
		tr.Requests = append(tr.Requests, req(int64(i)*20, 5*512, 2, 1, 2, 3, 4, int64(100+i)))
	}
	reuse := func(delayMS int64) float64 {
		rc := router.DefaultConfig()
		rc.KVEventDelayUS = delayMS * 1000
		return replayIndex(t, 16, rc, 0, tr).Summary.PrefixCacheReusedRatio
	}
	prompt, delayed := reuse(0), reuse(1000)
	rc := router.DefaultConfig()
	rc.KVEventDelayUS, rc.PredictedTTLSecs = 1_000_000, 10
	predicted := replayIndex(t, 16, rc, 0, tr).Summary.PrefixCacheReusedRatio
	t.Logf("prefix reuse on the burst: no delay %.3f, 1 s delay %.3f, 1 s delay with router_predicted_ttl_secs 10 %.3f", prompt, delayed, predicted)
	if delayed > prompt-0.2 {
		t.Errorf("1 s event delay reuses %.3f, no delay %.3f: want at least 0.2 less", delayed, prompt)
	}
	if predicted != prompt {
		t.Errorf("with predicted blocks the delayed burst reuses %.3f, want the undelayed %.3f", predicted, prompt)
	}
}

// hotShare is the largest share of the hot prefix's requests (hash 1 first; the warm-up
// request 0 aside) on one worker.
func hotShare(rep *Report, tr *trace.Trace) float64 {
	per := map[int]int{}
	hot := 0
	for _, r := range rep.Requests {
		if tr.Requests[r.ID].HashIDs[0] == 1 && r.ID > 0 {
			per[r.Worker]++
			hot++
		}
	}
	most := 0
	for _, n := range per {
		most = max(most, n)
	}
	return float64(most) / float64(hot)
}

// Several unsynced routers each see only their own requests' load, so each keeps sending a
// hot prefix to the worker that caches it (dynamo#589); replica sync shows every router the
// whole load, unless its messages arrive after the burst. The prefix is warm on one worker,
// then 24 requests sharing it arrive at once. (Costs are linear in load, so only a burst
// short enough for the routers' own requests' constant costs to matter shows it.)
func TestUnsyncedReplicasPileOnHotPrefix(t *testing.T) {
	hot := []int64{1, 2, 3, 4, 5, 6, 7, 8}
	tr := &trace.Trace{Name: "hot", BlockSize: 512, Requests: []trace.Request{req(0, 9*512, 2, append(hot, 99)...)}}
	for i := range 24 {
		tr.Requests = append(tr.Requests, req(100, 9*512, 200, append(hot, int64(100+i))...))
	}
	share := func(replicas int, sync bool, delayMS int64) float64 {
		rc := router.DefaultConfig()
		rc.Replicas, rc.ReplicaSync, rc.ReplicaSyncDelayUS = replicas, sync, delayMS*1000
		return hotShare(replayIndex(t, 8, rc, 0, tr), tr)
	}
	one, unsynced, synced, late := share(1, false, 0), share(4, false, 0), share(4, true, 0), share(4, true, 50)
	t.Logf("largest share of the hot prefix on one worker: 1 router %.3f, 4 unsynced %.3f, 4 synced %.3f, 4 synced 50 ms late %.3f", one, unsynced, synced, late)
	if late != unsynced {
		t.Errorf("sync messages arriving after the burst: %.3f, want the unsynced %.3f", late, unsynced)
	}
	if unsynced < one+0.1 {
		t.Errorf("4 unsynced routers put %.3f of the hot prefix on one worker, 1 router %.3f: want at least 0.1 more", unsynced, one)
	}
	if synced-one > (unsynced-one)/2 {
		t.Errorf("4 synced routers %.3f, 1 router %.3f, unsynced %.3f: sync should remove most of the excess", synced, one, unsynced)
	}
}

// Overlap-credit decay (Dynamo PR #10574) against a cache-rich fleet starving a new worker:
// four workers warm on a long prefix (four identical requests at once land on four
// workers), one cold, then 100 requests sharing the prefix arrive, 12 or 13 a millisecond,
// faster than the fleet prefills, at prefill_load_scale 32. Without decay the warm workers' credit
// outweighs their backlog and the cold worker gets almost none of them; decay 0.5 shrinks
// the credit of the backlogged ones. (The PR measured 20 → 25 % on its own fleet.)
func TestCreditDecayFeedsColdWorker(t *testing.T) {
	prefix := []int64{1, 2, 3, 4, 5, 6, 7, 8}
	tr := &trace.Trace{Name: "warm", BlockSize: 512}
	for range 4 {
		tr.Requests = append(tr.Requests, req(0, len(prefix)*512, 1, prefix...))
	}
	for i := range 100 {
		ids := append(append([]int64(nil), prefix...), int64(1000+i))
		tr.Requests = append(tr.Requests, trace.Request{TimestampMS: 1000 + int64(i)*80/1000, InputLength: len(ids) * 512, OutputLength: 20, HashIDs: ids})
	}
	coldShare := func(decay float64) float64 {
		rc := router.DefaultConfig()
		rc.PrefillLoadScale, rc.OverlapScoreCreditDecay = 32, decay
		cfg := Config{Workers: 5, Worker: deployment(100_000, 8192, 64), Router: rc, ArrivalSpeedupRatio: 1, Seed: 7, RecordRequests: true}
		rep, err := Replay(context.Background(), cfg, &fakeTimer{base: 100, perToken: 1}, tr)
		if err != nil {
			t.Fatal(err)
		}
		warm, cold := map[int]bool{}, 0
		for _, r := range rep.Requests[:4] {
			warm[r.Worker] = true
		}
		if len(warm) != 4 {
			t.Fatalf("warm-up landed on %d workers, want 4", len(warm))
		}
		for _, r := range rep.Requests[4:] {
			if !warm[r.Worker] {
				cold++
			}
		}
		return float64(cold) / 100
	}
	off, on := coldShare(0), coldShare(0.5)
	t.Logf("cold worker's share of the next 100 requests: decay 0 %.2f, decay 0.5 %.2f", off, on)
	if off > 0.05 || on < 0.10 {
		t.Errorf("cold worker's share: decay 0 %.2f (want ≤ 0.05), decay 0.5 %.2f (want ≥ 0.10)", off, on)
	}
}
