package engine

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// isl_bounding by hand (lib/kv-router/src/conditional_disagg.rs at 088ca50b): the prompt
// tokens the decode worker lacks must be both fewer than the threshold and under the ratio.
func TestConditionalDisaggBypass(t *testing.T) {
	c := DefaultConditionalDisagg()
	for _, x := range []struct {
		prompt, cached int
		want           bool
	}{
		{1000, 896, true},      // 104 left, 0.104 of the prompt
		{100000, 64000, false}, // 36,000 left: over 2,048
		{200, 0, false},        // a short prompt with nothing cached: ratio 1
		{2048, 0, false},       // exactly at the threshold
		{10000, 8000, true},    // 2,000 left, 0.2
		{2500, 400, false},     // 2,100 left
		{640, 640, true},       // all cached
		{1000, 2000, true},     // more cached than the prompt: nothing left
		{3000, 600, false},     // 2,400 left
		{2000, 500, false},     // 1,500 left but 0.75 of the prompt
		{2000, 700, true},      // 1,300 left, 0.65
	} {
		if got := c.Bypass(x.prompt, x.cached); got != x.want {
			t.Errorf("prompt %d, %d cached: bypass %v, want %v", x.prompt, x.cached, got, x.want)
		}
	}
}

// A request whose prefix the decode worker holds is prefilled there; a new prompt, long or
// short, goes through the prefill worker.
func TestConditionalDisaggRoutesByDecodeCache(t *testing.T) {
	ids := func(from, n int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = from + int64(i)
		}
		return out
	}
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{
		req(0, 1024, 4, ids(1, 16)...),                 // new: prefill worker; its KV lands on the decode worker
		req(0, 1100, 4, append(ids(1, 16), 17, 18)...), // 1,024 cached there: 76 left, bypass
		req(0, 3000, 4, ids(100, 47)...),               // new and long: prefill worker
		req(0, 100, 4, 200, 201),                       // new and short: ratio 1, prefill worker
	}}
	d := deployment(400, 4096, 8)
	dec := d
	rc := router.DefaultConfig()
	cfg := Config{Workers: 1, Worker: d, Router: rc, ReplayConcurrency: 1, RecordRequests: true,
		Disagg: &Disagg{DecodeWorkers: 1, Decode: dec, KVBytesPerToken: 1000, Conditional: &ConditionalDisagg{EffISLThreshold: 2048, EffISLRatioThreshold: 0.7}}}
	timer := PoolTimers{Prefill: &fakeTimer{base: 100, perToken: 1}, Decode: &fakeTimer{base: 10, perToken: 1}}
	rep, err := Replay(context.Background(), cfg, timer, tr)
	if err != nil {
		t.Fatal(err)
	}
	sum := rep.Summary.Disagg
	if sum.Bypassed != 1 || sum.Prefill.Requests != 3 || sum.Decode.Requests != 4 {
		t.Fatalf("bypassed %d, prefilled %d, decoded %d; want 1, 3, 4", sum.Bypassed, sum.Prefill.Requests, sum.Decode.Requests)
	}
	b := rep.Requests[1]
	if b.Worker != 1 || b.CachedTokens != 1024 {
		t.Fatalf("request 1 %+v: want prefilled on the decode worker (1) with 1,024 tokens cached", b)
	}
	// Its 76 tokens in one decode-worker step of 10 + 76 µs, then three decodes of 11.
	if b.TTFTMS != 0.086 || b.E2EMS != 0.119 {
		t.Fatalf("request 1 %+v: want TTFT 0.086 ms, e2e 0.119 ms", b)
	}
	// Off (Dynamo's default), nothing bypasses.
	cfg.Disagg.Conditional = nil
	rep, err = Replay(context.Background(), cfg, timer, tr)
	if err != nil {
		t.Fatal(err)
	}
	if sum := rep.Summary.Disagg; sum.Bypassed != 0 || sum.Prefill.Requests != 4 {
		t.Fatalf("off: bypassed %d, prefilled %d; want 0, 4", sum.Bypassed, sum.Prefill.Requests)
	}
}

// Every request is prefilled exactly once — on a prefill worker, or, when conditional
// disaggregation bypasses the prefill pool, on the decode worker it was pinned to — and
// completes on that decode worker.
func TestConditionalDisaggPrefillsOnceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tb := rapid.SampledFrom([]int{64, 128}).Draw(t, "trace_block")
		tr := genTrace(t, tb)
		cfg := genDisagg(t, genConfig(t, tr))
		cfg.Router.Mode = router.ModeKV
		// Decode workers cache and publish their prefixes, as conditional disaggregation
		// needs (vLLM's --enable-conditional-disagg).
		cfg.Disagg.Decode.NoPrefixCaching = false
		cfg.Disagg.Conditional = &ConditionalDisagg{
			EffISLThreshold:      rapid.IntRange(0, 4096).Draw(t, "eff_isl_threshold"),
			EffISLRatioThreshold: rapid.SampledFrom([]float64{0, 0.7, 1}).Draw(t, "eff_isl_ratio_threshold"),
		}
		// Transfers per request, counted afresh for each of the two loops.
		var run *Sim
		handedOff := map[int32]int{}
		runDisaggChecked(t, cfg, tr, func(s *Sim, ri int32, r *request) {
			d := s.dis
			local, moved := d.local[ri], handedOff[ri]
			switch {
			case local == (moved == 1) || moved > 1:
				t.Fatalf("request %d: bypassed %v, handed off %d times", ri, local, moved)
			case d.pinned[ri] == 0 || int(r.worker) != d.first+int(d.pinned[ri]-1):
				t.Fatalf("request %d completed on worker %d, pinned to decode worker %d", ri, r.worker, d.pinned[ri]-1)
			case local && (d.prefilled[ri] != 0 || d.reserved[ri] != 0):
				t.Fatalf("request %d bypassed but went through the prefill pool", ri)
			}
		}, func(s *Sim, e event) {
			if s != run {
				run = s
				clear(handedOff)
			}
			if e.phase == phaseTransferDone {
				handedOff[e.id]++
			}
		})
	})
}
