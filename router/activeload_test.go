package router

import "testing"

func loadRouter(t testing.TB, lc LoadConfig, workers int) *Router {
	cfg := DefaultConfig()
	cfg.Load = lc
	return newTest(t, cfg, workers)
}

// Two requests sharing a 3-block prefix on one worker.
func twoSharing(r *Router) {
	put(r, 0, &Request{ID: 1, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 4}}, false)
	put(r, 0, &Request{ID: 2, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 5}}, false)
}

func TestTrackingFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		lc   LoadConfig
		want WorkerLoad
	}{
		{"default", LoadConfig{}, WorkerLoad{InFlight: 2, PrefillTokens: 512, ActiveBlocks: 5}},
		{"no kv reuse: shared blocks count per request", LoadConfig{NoAssumeKVReuse: true}, WorkerLoad{InFlight: 2, PrefillTokens: 512, ActiveBlocks: 8}},
		{"no active blocks", LoadConfig{NoTrackActiveBlocks: true}, WorkerLoad{InFlight: 2, PrefillTokens: 512}},
		{"no prefill tokens", LoadConfig{NoTrackPrefillTokens: true}, WorkerLoad{InFlight: 2, ActiveBlocks: 5}},
		{"stride 3: one group of 3 per request", LoadConfig{ActiveSequenceStride: 3}, WorkerLoad{InFlight: 2, PrefillTokens: 512, ActiveBlocks: 3}},
	} {
		r := loadRouter(t, tc.lc, 1)
		twoSharing(r)
		if got := r.Load(0); got != tc.want {
			t.Errorf("%s: load %+v, want %+v", tc.name, got, tc.want)
		}
		r.Finished(1)
		r.Finished(2)
		if got := r.Load(0); got != (WorkerLoad{}) {
			t.Errorf("%s: after both finished, load %+v, want zero", tc.name, got)
		}
	}
}

func TestNoPrefillTrackingDropsThePrefillTerm(t *testing.T) {
	r := loadRouter(t, LoadConfig{NoTrackPrefillTokens: true}, 2)
	req := &Request{ID: 7, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 4}}
	// Only the decode-block term is left: 4 new blocks on either worker.
	if got := kvCosts(r, req); got[0] != 4 || got[1] != 4 {
		t.Fatalf("costs %v, want [4 4]", got)
	}
}

func TestStrideRoundsTheActivePrefixDown(t *testing.T) {
	r := loadRouter(t, LoadConfig{ActiveSequenceStride: 2}, 1)
	put(r, 0, &Request{ID: 1, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 4}}, true)
	// Shares blocks 1..3 with request 1, but only the group (1, 2) matches as a whole: of
	// its 4 blocks (2 groups) one group is new.
	req := &Request{ID: 2, InputLength: 256, BlockHashes: []uint64{1, 2, 3, 9}}
	r.scan(req.BlockHashes)
	r.strideActive()
	if got := r.activePrefix[0]; got != 2 {
		t.Fatalf("active prefix %d, want 2 (rounded down to the stride)", got)
	}
}

func TestOutputBlocksDecayWithProgress(t *testing.T) {
	r := loadRouter(t, LoadConfig{TrackOutputBlocks: true}, 1)
	put(r, 0, &Request{ID: 1, InputLength: 64, BlockHashes: []uint64{1}}, true)
	r.Generated(1, 1, 256) // 65 tokens: the second block begins, 1 − 1/256 of it counts
	if got, want := r.Load(0).OutputBlocks, 1-1.0/256; got != want {
		t.Fatalf("output blocks %v, want %v", got, want)
	}
	r.Generated(1, 64, 256) // still 2 blocks: unchanged
	r.Generated(1, 128, 256)
	if got, want := r.Load(0).OutputBlocks, 2*(1-128.0/256); got != want {
		t.Fatalf("output blocks %v, want %v (2 blocks at half weight)", got, want)
	}
	r.Finished(1)
	if got := r.Load(0).OutputBlocks; got != 0 {
		t.Fatalf("output blocks %v after the request finished, want 0", got)
	}
}

func TestAICPrefillLoadDecaysTheOldest(t *testing.T) {
	r := loadRouter(t, LoadConfig{PrefillLoadModel: PrefillLoadAIC}, 1)
	r.SetPrefillPricer(func(n, _ int) int64 { return int64(n) * 10 }) // 10 µs per token
	r.SetNow(1000)
	r.Route(&Request{ID: 1, InputLength: 640, BlockHashes: blocks(1, 10)}) // expects 6.4 ms
	r.Route(&Request{ID: 2, InputLength: 640, BlockHashes: blocks(100, 10)})
	r.SetNow(1000 + 3200) // half of the oldest's expected time
	if got := r.activePrefillTokens(0); got != 1280-320 {
		t.Fatalf("active prefill tokens %d, want %d", got, 1280-320)
	}
	r.SetNow(1000 + 9600) // spills over into the second
	if got := r.activePrefillTokens(0); got != 1280-960 {
		t.Fatalf("active prefill tokens %d, want %d", got, 1280-960)
	}
	r.FirstToken(1) // the second becomes the anchor now, undecayed
	if got := r.activePrefillTokens(0); got != 640 {
		t.Fatalf("after the first's prefill, active prefill tokens %d, want 640", got)
	}
}
