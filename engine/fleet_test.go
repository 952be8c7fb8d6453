package engine

import (
	"context"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/planner"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// fleetSim builds a simulation with the real router and cfg's fleet.
func fleetSim(t interface{ Fatal(...any) }, cfg Config, tr *trace.Trace) *Sim {
	s, err := New(cfg, &fakeTimer{base: 1000, perToken: 10}, tr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A failure at 5 ms kills worker 0 mid-decode: with migration limit 1 its requests finish on
// worker 1 (prompt plus the tokens generated so far prefilled again); with limit 0 they
// are lost, and the report counts them.
func TestFailureMigratesOrLoses(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{
		req(0, 100, 50, 1, 2), req(0, 100, 50, 3, 4), req(0, 100, 50, 5, 6), req(0, 100, 50, 7, 8),
	}}
	for _, limit := range []int{0, 1} {
		cfg := Config{Workers: 2, Worker: deployment(100, 512, 8), Router: router.DefaultConfig(), RecordRequests: true,
			Fleet: &Fleet{Slots: 2, GPUsPerWorker: 1, StartupUS: 20_000, MigrationLimit: limit, Failures: []Failure{{AtUS: 5000, Worker: 0}}}}
		cfg.Router.Mode = router.ModeRoundRobin
		s := fleetSim(t, cfg, tr)
		rep, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		f := rep.Summary.Fleet
		if f.Failures != 1 {
			t.Fatalf("limit %d: %d failures, want 1", limit, f.Failures)
		}
		if limit == 1 && (f.Migrated != 2 || f.Lost != 0 || rep.Summary.RequestsCompleted != 4) {
			t.Fatalf("limit 1: migrated %d lost %d completed %d, want 2, 0, 4", f.Migrated, f.Lost, rep.Summary.RequestsCompleted)
		}
		if limit == 0 && (f.Migrated != 0 || f.Lost != 2 || rep.Summary.RequestsCompleted != 2) {
			t.Fatalf("limit 0: migrated %d lost %d completed %d, want 0, 2, 2", f.Migrated, f.Lost, rep.Summary.RequestsCompleted)
		}
		// Worker 0 restarts: starting from 5 ms, serving again from 25 ms.
		var sawStart, sawBack bool
		for _, p := range f.Timeline {
			sawStart = sawStart || (p.TimeMS == 5 && p.Starting == 1 && p.Serving == 1)
			sawBack = sawBack || (p.TimeMS == 25 && p.Serving == 2)
		}
		if !sawStart || !sawBack {
			t.Fatalf("limit %d: timeline %+v lacks the restart at 5 ms and its end at 25 ms", limit, f.Timeline)
		}
	}
}

// genFleet draws a lifecycle for cfg: slots, start-up, failures and a planner that scales
// on load every few milliseconds.
func genFleet(t *rapid.T, cfg *Config) {
	rc := router.DefaultConfig()
	rc.Mode = rapid.SampledFrom([]router.Mode{router.ModeKV, router.ModeRoundRobin, router.ModeRandom, router.ModeLeastLoaded, router.ModePowerOfTwoChoices}).Draw(t, "mode")
	rc.BlockSize = cfg.Worker.BlockSize
	cfg.Router = rc
	cfg.Worker.APIServerTokenizeNS = 0
	slots := rapid.IntRange(cfg.Workers, 4).Draw(t, "slots")
	f := &Fleet{
		Slots: slots, GPUsPerWorker: rapid.IntRange(1, 4).Draw(t, "gpus"),
		StartupUS:      int64(rapid.IntRange(0, 20_000).Draw(t, "startup_us")),
		MigrationLimit: rapid.IntRange(0, 2).Draw(t, "migration_limit"),
	}
	for range rapid.IntRange(0, 4).Draw(t, "failures") {
		f.Failures = append(f.Failures, Failure{AtUS: int64(rapid.IntRange(0, 200_000).Draw(t, "fail_at")), Worker: rapid.IntRange(0, slots-1).Draw(t, "fail_worker")})
	}
	if rapid.Bool().Draw(t, "random_failures") {
		f.FailuresPerHour = 36_000 // one per 100 ms per worker
	}
	if rapid.Bool().Draw(t, "planner") {
		f.Planner = planner.Config{Target: planner.TargetLatency, LoadScaling: true, LoadEveryS: 0.002, MaxGPUBudget: slots * f.GPUsPerWorker}.Defaults()
	}
	cfg.Fleet = f
}

// TestFleetProperty drives random fleets event by event: a worker never serves before its
// start-up ends, a draining worker gets no new request, every request completes, is
// migrated within the limit or is counted lost, and the GPU-hours are the integral of the
// live workers' GPUs.
func TestFleetProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := genTrace(t, 64)
		cfg := genConfig(t, tr)
		genFleet(t, &cfg)
		s := fleetSim(t, cfg, tr)
		s.stepwise = rapid.Bool().Draw(t, "stepwise")
		fs := s.fleet
		n := len(s.workers)
		prev := make([]uint8, n)
		copy(prev, fs.state)
		startedAt := make([]int64, n)
		servingSince := make([]int64, n)
		for w := range n {
			startedAt[w] = -1 // initial workers serve from 0
		}
		drainSet := make([]map[int32]bool, n)
		var gpuUS float64
		last := int64(0)
		live := func() int {
			k := 0
			for _, st := range fs.state {
				if st != slotOff {
					k++
				}
			}
			return k
		}
		liveNow := live()
		for events := 0; !s.Done(); events++ {
			if events > 2_000_000 {
				t.Fatal("no progress")
			}
			e := s.heap.pop()
			gpuUS += float64(liveNow*cfg.Fleet.GPUsPerWorker) * float64(e.time-last)
			last = e.time
			s.process(e)
			liveNow = live()
			for w := range n {
				st, wk := fs.state[w], &s.workers[w]
				if st != prev[w] {
					switch st {
					case slotStarting:
						startedAt[w] = e.time
					case slotServing:
						if startedAt[w] >= 0 && e.time-startedAt[w] < cfg.Fleet.StartupUS {
							t.Fatalf("t=%d worker %d serves %d µs after it started; start-up is %d", e.time, w, e.time-startedAt[w], cfg.Fleet.StartupUS)
						}
						servingSince[w] = e.time
					case slotDraining:
						drainSet[w] = map[int32]bool{}
						for _, ri := range wk.running {
							drainSet[w][ri] = true
						}
						for j := range wk.waiting.len() {
							drainSet[w][wk.waiting.at(j)] = true
						}
					}
					prev[w] = st
				}
				switch st {
				case slotOff, slotStarting:
					if len(wk.running) > 0 || wk.waiting.len() > 0 {
						t.Fatalf("t=%d worker %d (state %d) holds requests", e.time, w, st)
					}
				case slotServing:
					for _, ri := range wk.running {
						if q := s.reqs[ri].fl.queued; q < servingSince[w] {
							t.Fatalf("t=%d worker %d runs request %d queued at %d, before it served (%d)", e.time, w, ri, q, servingSince[w])
						}
					}
				case slotDraining:
					for _, ri := range wk.running {
						if !drainSet[w][ri] {
							t.Fatalf("t=%d draining worker %d got request %d", e.time, w, ri)
						}
					}
					for j := range wk.waiting.len() {
						if ri := wk.waiting.at(j); !drainSet[w][ri] {
							t.Fatalf("t=%d draining worker %d got request %d", e.time, w, ri)
						}
					}
				}
			}
		}
		rep := s.Report()
		f := rep.Summary.Fleet
		lost := 0
		for i := range s.reqs {
			if int(fs.migrations[i]) > cfg.Fleet.MigrationLimit {
				t.Fatalf("request %d migrated %d times, limit %d", i, fs.migrations[i], cfg.Fleet.MigrationLimit)
			}
			if !s.reqs[i].finished {
				lost++
			}
		}
		if lost != f.Lost+s.refused || rep.Summary.RequestsCompleted+f.Lost+s.refused != len(s.reqs) {
			t.Fatalf("%d requests: %d completed, %d lost, %d refused; %d unfinished", len(s.reqs), rep.Summary.RequestsCompleted, f.Lost, s.refused, lost)
		}
		if want := round(gpuUS/3.6e9, 6); f.GPUHours != want {
			t.Fatalf("GPU-hours %v, integral of live GPUs %v", f.GPUHours, want)
		}
	})
}

// A changing fleet refuses KV tiers by their key; the same fleet without them builds.
func TestFleetRefusesTiers(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 100, 50, 1, 2)}}
	base := Config{Workers: 2, Worker: deployment(100, 512, 8), Router: router.DefaultConfig(),
		Fleet: &Fleet{Slots: 2, GPUsPerWorker: 1, StartupUS: 20_000}}
	base.Router.Mode = router.ModeRoundRobin
	fleetSim(t, base, tr)
	tiers := base
	tiers.KVTiers = tierConfig()
	_, err := New(tiers, &fakeTimer{base: 1000, perToken: 10}, tr)
	if want := "num_g2_blocks: 16; a fleet that changes"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
