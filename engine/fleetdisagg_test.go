package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/planner"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// genDisaggFleet draws a changing disaggregated fleet: both pools' slots and GPUs, a
// start-up time, and a planner (easy latency target, or sla with tight targets) that
// scales every few milliseconds.
func genDisaggFleet(t *rapid.T, tr *trace.Trace) Config {
	cfg := genConfig(t, tr)
	genFleet(t, &cfg)
	cfg = genDisagg(t, cfg)
	f := cfg.Fleet
	f.Failures, f.FailuresPerHour = nil, 0
	f.DecodeSlots = rapid.IntRange(cfg.Disagg.DecodeWorkers, 4).Draw(t, "decode_slots")
	f.DecodeGPUsPerWorker = rapid.IntRange(1, 4).Draw(t, "decode_gpus")
	budget := f.Slots*f.GPUsPerWorker + f.DecodeSlots*f.DecodeGPUsPerWorker
	switch rapid.IntRange(0, 2).Draw(t, "planner_kind") {
	case 1:
		f.Planner = planner.Config{Target: planner.TargetLatency, LoadScaling: true, LoadEveryS: 0.002, MaxGPUBudget: budget}.Defaults()
	case 2:
		f.Planner = planner.Config{Target: planner.TargetSLA, LoadScaling: true, ThroughputScaling: rapid.Bool().Draw(t, "throughput"),
			LoadEveryS: 0.002, ThroughputEveryS: 0.01, TTFTMS: 1, ITLMS: 0.3, MinObservations: 2, MaxGPUBudget: budget}.Defaults()
	default:
		f.Planner = planner.Config{}
	}
	return cfg
}

// TestDisaggFleetProperty drives random disaggregated fleets that change event by event: no
// worker of either pool holds a request before its start-up ends, a draining worker gets no
// new request (prefill: prompts; decode: prefilled requests routed to it), every request
// completes, and each pool's GPU-hours are the integral of its live workers' GPUs.
func TestDisaggFleetProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := genTrace(t, 64)
		cfg := genDisaggFleet(t, tr)
		timer := PoolTimers{Prefill: &fakeTimer{base: 1000, perToken: 10}, Decode: &fakeTimer{base: 800, perToken: 1}}
		s, err := New(cfg, timer, tr)
		if err != nil {
			t.Fatal(err)
		}
		s.stepwise = rapid.Bool().Draw(t, "stepwise")
		fs, n := s.fleet, len(s.workers)
		if fs.first != cfg.Fleet.Slots || n != cfg.Fleet.Slots+cfg.Fleet.DecodeSlots {
			t.Fatalf("pools [0, %d) and [%d, %d), want %d prefill and %d decode slots", fs.first, fs.first, n, cfg.Fleet.Slots, cfg.Fleet.DecodeSlots)
		}
		// assigned is what worker w holds or will: requests routed to it and not finished.
		assigned := func(w int) map[int32]bool {
			m := map[int32]bool{}
			for i := range s.reqs {
				if r := &s.reqs[i]; int(r.worker) == w && !r.finished && r.fl != nil {
					m[int32(i)] = true
				}
			}
			return m
		}
		prev := make([]uint8, n)
		copy(prev, fs.state)
		startedAt := make([]int64, n)
		for w := range startedAt {
			startedAt[w] = -1
		}
		drainSet := make([]map[int32]bool, n)
		var gpuUS [2]float64
		livePool := func(k int) int {
			c := 0
			for w, st := range fs.state {
				if st != slotOff && fs.poolOf(w) == k {
					c++
				}
			}
			return c * fs.gpus(k)
		}
		live := [2]int{livePool(0), livePool(1)}
		last := int64(0)
		for events := 0; !s.Done(); events++ {
			if events > 2_000_000 {
				t.Fatal("no progress")
			}
			e := s.heap.pop()
			for k := range 2 {
				gpuUS[k] += float64(live[k]) * float64(e.time-last)
			}
			last = e.time
			s.process(e)
			live = [2]int{livePool(0), livePool(1)}
			for w := range n {
				st := fs.state[w]
				if st != prev[w] {
					switch st {
					case slotStarting:
						startedAt[w] = e.time
					case slotServing:
						if startedAt[w] >= 0 && e.time-startedAt[w] < cfg.Fleet.StartupUS {
							t.Fatalf("t=%d worker %d serves %d µs after it started; start-up is %d", e.time, w, e.time-startedAt[w], cfg.Fleet.StartupUS)
						}
					case slotDraining:
						drainSet[w] = assigned(w)
					}
					prev[w] = st
				}
				switch st {
				case slotOff, slotStarting:
					if a := assigned(w); len(a) > 0 {
						t.Fatalf("t=%d worker %d (state %d) holds requests %v", e.time, w, st, a)
					}
					for ri, src := range s.dis.src { // a prefill worker's KV waiting to move
						if src != nil && int(s.dis.srcWorker[ri]) == w {
							t.Fatalf("t=%d worker %d (state %d) stopped holding request %d's KV for its transfer", e.time, w, st, ri)
						}
					}
				case slotDraining:
					for ri := range assigned(w) {
						if !drainSet[w][ri] {
							t.Fatalf("t=%d draining worker %d got request %d", e.time, w, ri)
						}
					}
				}
			}
		}
		rep := s.Report()
		f := rep.Summary.Fleet
		if rep.Summary.RequestsCompleted+s.refused != len(s.reqs) || f.Lost != 0 {
			t.Fatalf("%d requests: %d completed, %d refused, %d lost", len(s.reqs), rep.Summary.RequestsCompleted, s.refused, f.Lost)
		}
		if f.Prefill == nil || f.Decode == nil {
			t.Fatal("no per-pool summary")
		}
		for k, p := range []*PoolFleet{f.Prefill, f.Decode} {
			if want := round(gpuUS[k]/3.6e9, 6); p.GPUHours != want {
				t.Fatalf("pool %d GPU-hours %v, integral of its live GPUs %v", k, p.GPUHours, want)
			}
		}
		if want := round((gpuUS[0]+gpuUS[1])/3.6e9, 6); math.Abs(f.GPUHours-want) > 2e-6 {
			t.Fatalf("GPU-hours %v, integral of live GPUs %v", f.GPUHours, want)
		}
	})
}

// A disaggregated fleet whose pools are overloaded: the planner (sla, TTFT 50 ms and ITL
// 5 ms) adds prefill workers for the queued prompts and decode workers for the decode KV,
// each pool on its own, and every request completes.
func TestDisaggPlannerScalesPools(t *testing.T) {
	var reqs []trace.Request
	for i := range 200 {
		ids := make([]int64, 8)
		for j := range ids {
			ids[j] = int64(8*i + j + 1)
		}
		reqs = append(reqs, req(int64(i*2), 500, 200, ids...))
	}
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: reqs}
	d := deployment(2000, 2048, 64)
	d.ContextLength = 8192
	cfg := Config{Workers: 1, Worker: d, Router: router.DefaultConfig(), RecordRequests: true,
		Disagg: &Disagg{DecodeWorkers: 1, Decode: d, KVBytesPerToken: 1},
		Fleet: &Fleet{Slots: 4, GPUsPerWorker: 1, DecodeSlots: 4, DecodeGPUsPerWorker: 2, StartupUS: 50_000,
			Planner: planner.Config{Target: planner.TargetSLA, LoadScaling: true, LoadEveryS: 0.02, TTFTMS: 50, ITLMS: 5, MaxGPUBudget: 12}.Defaults()}}
	cfg.Router.Mode = router.ModeRoundRobin
	timer := PoolTimers{Prefill: &fakeTimer{base: 1000, perToken: 10}, Decode: kvTimer{}}
	rep, err := Replay(context.Background(), cfg, timer, tr)
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Summary.Fleet
	if rep.Summary.RequestsCompleted != 200 {
		t.Fatalf("%d of 200 completed", rep.Summary.RequestsCompleted)
	}
	if f.Prefill.PeakWorkers < 2 || f.Decode.PeakWorkers < 2 {
		t.Fatalf("peak workers prefill %d, decode %d: want both pools scaled up", f.Prefill.PeakWorkers, f.Decode.PeakWorkers)
	}
	var pools = map[string]int{}
	for _, e := range f.Events {
		pools[e.Pool]++
	}
	if pools["prefill"] == 0 || pools["decode"] == 0 || pools["prefill"]+pools["decode"] != len(f.Events) {
		t.Fatalf("events by pool %v of %d", pools, len(f.Events))
	}
	if f.Prefill.ScalingEvents != pools["prefill"] || f.Decode.ScalingEvents != pools["decode"] {
		t.Fatalf("pool summaries count %d and %d events, events say %v", f.Prefill.ScalingEvents, f.Decode.ScalingEvents, pools)
	}
	if got := f.Prefill.GPUHours + f.Decode.GPUHours; math.Abs(got-f.GPUHours) > 2e-6 {
		t.Fatalf("pools' GPU-hours %v, fleet's %v", got, f.GPUHours)
	}
}

// kvTimer prices a pass at 1 ms plus 1 µs per prompt token and 0.2 µs per decode KV token.
type kvTimer struct{}

func (kvTimer) StepTimeUS(b *model.Batch) int64 {
	t := 1000 + b.DecodeContextTokens/5
	for _, c := range b.Prefill {
		t += int64(c.NewTokens)
	}
	return t
}

// A disaggregated fleet that changes refuses worker failures (a KV handoff from or to a
// failed worker is not modelled), conditional disaggregation (a request pinned to a decode
// worker that leaves) and a fleet without decode slots; without them it builds.
func TestDisaggFleetRefusals(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 100, 50, 1, 2)}}
	d := deployment(100, 512, 8)
	base := Config{Workers: 1, Worker: d, Router: router.DefaultConfig(),
		Disagg: &Disagg{DecodeWorkers: 1, Decode: d, KVBytesPerToken: 1},
		Fleet:  &Fleet{Slots: 2, GPUsPerWorker: 1, DecodeSlots: 2, DecodeGPUsPerWorker: 1, StartupUS: 20_000}}
	timer := PoolTimers{Prefill: &fakeTimer{base: 1000, perToken: 10}, Decode: &fakeTimer{base: 1000, perToken: 1}}
	if _, err := New(base, timer, tr); err != nil {
		t.Fatal(err)
	}
	failing, noSlots, conditional := base, base, base
	failing.Fleet = &Fleet{Slots: 2, GPUsPerWorker: 1, DecodeSlots: 2, DecodeGPUsPerWorker: 1, Failures: []Failure{{AtUS: 5, Worker: 0}}}
	noSlots.Fleet = &Fleet{Slots: 2, GPUsPerWorker: 1, StartupUS: 20_000}
	cd := *base.Disagg
	cd.Conditional = &ConditionalDisagg{EffISLThreshold: 2048, EffISLRatioThreshold: 0.7}
	conditional.Disagg = &cd
	for _, c := range []struct {
		cfg  Config
		want string
	}{{failing, "worker_failures with deployment_mode disagg"}, {noSlots, "fleet decode slots: 0"}, {conditional, "router_conditional_disagg with a fleet that changes"}} {
		if _, err := New(c.cfg, timer, tr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
