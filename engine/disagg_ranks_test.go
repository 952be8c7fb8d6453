package engine

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// A disaggregated fleet whose pools' workers are DEP workers (each pool its own attention_dp,
// 1 to 3): every request is prefilled once, on one prefill rank, and decoded on exactly one
// decode rank; its KV blocks are conserved through the transfer; every rank's pool agrees with
// its KV events; the ranks of a worker are busy together and started their step together; and
// the engine has a worker per rank of each pool.
func TestDisaggRanksInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tb := rapid.SampledFrom([]int{64, 128}).Draw(t, "trace_block")
		tr := genTrace(t, tb)
		cfg := genConfig(t, tr)
		cfg.Worker.AsyncScheduling, cfg.Worker.TimingReference = false, ""
		cfg = genDisagg(t, cfg)
		// Every event checks every rank's pool: -short (CI's race pass) stops at two ranks.
		most := 3
		if testing.Short() {
			most = 2
		}
		pr := rapid.IntRange(1, most).Draw(t, "prefill_attention_dp")
		dr := rapid.IntRange(1, most).Draw(t, "decode_attention_dp")
		cfg.Worker.AttentionDP, cfg.Disagg.Decode.AttentionDP = pr, dr
		timer := PoolTimers{
			Prefill: &ranksTimer{fakeTimer: fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "base")), perToken: 1}, ranks: pr, perMoE: 1},
			Decode:  &ranksTimer{fakeTimer: fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "decode_base")), perToken: 2}, ranks: dr, perMoE: 1},
		}
		// Per replay (stepwise, then with the decode fast path): the rank each request's KV
		// left from.
		from := map[*Sim][]int32{}
		prefilled := func(s *Sim) []int32 {
			if from[s] == nil {
				from[s] = make([]int32, len(tr.Requests))
				for i := range from[s] {
					from[s][i] = -1
				}
			}
			return from[s]
		}
		runDisaggTimed(t, cfg, timer, tr, func(s *Sim, ri int32, r *request) {
			d, prefilledOn := s.dis, prefilled(s)
			switch {
			case len(s.workers) != cfg.Workers*pr+cfg.Disagg.DecodeWorkers*dr || d.first != cfg.Workers*pr:
				t.Fatalf("%d engine workers, decode from %d, for %d × %d prefill and %d × %d decode ranks", len(s.workers), d.first, cfg.Workers, pr, cfg.Disagg.DecodeWorkers, dr)
			case int(r.worker) < d.first:
				t.Fatalf("request %d completes on prefill rank %d", ri, r.worker)
			case prefilledOn[ri] < 0 || int(prefilledOn[ri]) >= d.first:
				t.Fatalf("request %d: prefilled on %d (prefill ranks: [0, %d))", ri, prefilledOn[ri], d.first)
			}
		}, func(s *Sim, e event) {
			d, prefilledOn := s.dis, prefilled(s)
			if e.phase == phaseTransferDone {
				// The handoff set the source; a second prefill of the request would set it again.
				if prefilledOn[e.id] >= 0 {
					t.Fatalf("request %d transferred twice (first from %d)", e.id, prefilledOn[e.id])
				}
				prefilledOn[e.id] = d.srcWorker[e.id]
			}
			if len(s.heap) > 0 && s.heap[0].time == s.now {
				return // the other ranks' step ends at this instant are still queued
			}
			// Once per instant: a leaked or doubled block stays so, and checking every
			// event made this test the race pass's slowest by minutes.
			checkConserved(t, s)
			if err := ranksTogether(s, 0, d.first, pr); err != nil {
				t.Fatal(err)
			}
			if err := ranksTogether(s, d.first, len(s.workers), dr); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// ranksTogether says which two ranks of a worker among engine workers [from, to) (ranks
// each) are not in the same step.
func ranksTogether(s *Sim, from, to, ranks int) error {
	for first := from; first < to; first += ranks {
		a := &s.workers[first]
		for k := 1; k < ranks; k++ {
			b := &s.workers[first+k]
			if a.busy != b.busy || a.busy && a.lastStart != b.lastStart {
				return fmt.Errorf("ranks %d and %d: busy %v/%v, step started %d/%d", first, first+k, a.busy, b.busy, a.lastStart, b.lastStart)
			}
		}
	}
	return nil
}

// Ranks in a disaggregated pool are refused where they are not modelled, with the pool and
// the reason.
func TestDisaggRanksConfigErrors(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 10, 2, 1)}}
	base := Config{Workers: 1, Worker: deployment(64, 512, 4), Router: router.DefaultConfig()}
	base.Disagg = &Disagg{DecodeWorkers: 1, Decode: deployment(64, 512, 4)}
	base.Disagg.Decode.AttentionDP = 2
	two := PoolTimers{Prefill: &fakeTimer{base: 1}, Decode: &ranksTimer{ranks: 2}}
	cases := []struct {
		name  string
		edit  func(*Config)
		timer model.StepTimer
		want  string
	}{
		{"decode timer", func(*Config) {}, PoolTimers{Prefill: &fakeTimer{base: 1}, Decode: &fakeTimer{base: 1}}, "decode pool: attention_dp 2: the step timer does not price 2 lockstep ranks"},
		{"sglang", func(c *Config) { c.Worker.Backend, c.Disagg.Decode.Backend = model.BackendSGLang, model.BackendSGLang }, two, "vLLM workers only"},
		{"conditional", func(c *Config) { c.Disagg.Conditional = &ConditionalDisagg{} }, two, "router_conditional_disagg"},
	}
	for _, c := range cases {
		cfg := base
		dg := *base.Disagg
		cfg.Disagg = &dg
		c.edit(&cfg)
		if _, err := New(cfg, c.timer, tr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
