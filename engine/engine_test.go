package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// fakeTimer prices a step at base + perToken × (prefill tokens + decodes): hand-computable.
// It records every batch it priced.
type fakeTimer struct {
	base, perToken int64
	batches        []model.Batch
	record         bool
}

func (f *fakeTimer) StepTimeUS(b *model.Batch) int64 {
	tok := int64(b.Decodes)
	for _, c := range b.Prefill {
		tok += int64(c.NewTokens)
	}
	if f.record {
		f.batches = append(f.batches, model.Batch{
			Prefill: append([]model.Chunk(nil), b.Prefill...), Decodes: b.Decodes, DecodeContextTokens: b.DecodeContextTokens,
		})
	}
	return f.base + f.perToken*tok
}

// fixedRouter sends request id to worker id modulo workers and records the KV events.
type fixedRouter struct {
	workers int
	events  []router.KVEvent
}

func (f *fixedRouter) Route(r *router.Request) int { return int(r.ID) % f.workers }
func (f *fixedRouter) FirstToken(id int64)         {}
func (f *fixedRouter) Finished(id int64)           {}
func (f *fixedRouter) Apply(ev router.KVEvent) {
	f.events = append(f.events, router.KVEvent{Worker: ev.Worker, Kind: ev.Kind, Hashes: slices.Clone(ev.Hashes)})
}

func deployment(blocks, budget, seqs int) model.Deployment {
	return model.Deployment{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs, BlockSize: 64, NumGPUBlocks: blocks}
}

func req(ts int64, in, out int, ids ...int64) trace.Request {
	return trace.Request{TimestampMS: ts, InputLength: in, OutputLength: out, HashIDs: ids}
}

// runScripted runs a one-worker-per-id-modulo simulation to the end in both loop modes,
// checks they agree, and returns the step-by-step one.
func runScripted(t *testing.T, cfg Config, timer model.StepTimer, tr *trace.Trace) (*Sim, *fixedRouter) {
	t.Helper()
	if _, err := cfg.validate(timer, tr); err != nil {
		t.Fatal(err)
	}
	var outs [2]string
	var sims [2]*Sim
	var rts [2]*fixedRouter
	for i, stepwise := range []bool{true, false} {
		rt := &fixedRouter{workers: cfg.Workers}
		s := newSim(cfg, timer, tr, rt)
		s.stepwise = stepwise
		rep, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = reportJSON(t, rep)
		sims[i], rts[i] = s, rt
	}
	if outs[0] != outs[1] {
		t.Fatalf("fast path differs from step-by-step:\n%s\n%s", outs[0], outs[1])
	}
	if !slices.EqualFunc(rts[0].events, rts[1].events, eventEq) {
		t.Fatalf("KV events differ between loop modes")
	}
	return sims[0], rts[0]
}

func eventEq(a, b router.KVEvent) bool {
	return a.Worker == b.Worker && a.Kind == b.Kind && slices.Equal(a.Hashes, b.Hashes)
}

// reportJSON is the report without wall time, for comparisons.
func reportJSON(t interface{ Fatal(...any) }, rep *Report) string {
	c := *rep
	c.Summary.WallTimeMS = 0
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func records(s *Sim) map[int]RequestRecord {
	m := map[int]RequestRecord{}
	for _, r := range s.Report().Requests {
		m[r.ID] = r
	}
	return m
}

func TestConfigErrors(t *testing.T) {
	tr := &trace.Trace{Name: "x.jsonl", BlockSize: 512, Requests: []trace.Request{req(0, 100, 1, 1)}}
	timer := &fakeTimer{base: 1}
	good := Config{Workers: 1, Worker: deployment(100, 1024, 8), ReplayConcurrency: 1}
	cases := []struct {
		mut  func(*Config, *trace.Trace)
		want string
	}{
		{func(c *Config, _ *trace.Trace) { c.Worker.NumGPUBlocks = 0 }, "num_gpu_blocks"},
		{func(c *Config, _ *trace.Trace) { c.Workers = 0 }, "workers"},
		{func(c *Config, _ *trace.Trace) { c.Worker.MaxNumSeqs = 0 }, "max_num_seqs"},
		{func(c *Config, _ *trace.Trace) { c.ArrivalSpeedupRatio = -1 }, "arrival_speedup_ratio"},
		{func(c *Config, _ *trace.Trace) { c.Router.BlockSize = 32 }, "block_size"},
		{func(c *Config, _ *trace.Trace) { c.Worker.NumGPUBlocks = 1 }, "x.jsonl: all 1 requests rejected: needs more KV blocks than a worker's 1 (first: x.jsonl:1)"},
		{func(_ *Config, t *trace.Trace) { t.Requests[0].OutputLength = 0 }, "x.jsonl:1: output_length"},
		{func(_ *Config, t *trace.Trace) { t.Requests[0].HashIDs = nil }, "x.jsonl:1: hash_ids"},
		{func(c *Config, _ *trace.Trace) { c.Worker.ContextLength = 50 }, "all 1 requests rejected: input_length + output_length exceeds context_length 50"},
		{func(c *Config, _ *trace.Trace) { c.Worker.ContextLength, c.Strict = 50, true },
			"x.jsonl:1: input_length 100 + output_length 1 = 101 exceeds context_length 50 (strict"},
		{func(_ *Config, t *trace.Trace) { t.Requests = nil }, "x.jsonl: no requests to replay"},
		{func(c *Config, t *trace.Trace) { c.ReplayConcurrency, t.Requests[0].TimestampMS = 0, 1<<60 }, "x.jsonl:1: timestamp: 1152921504606846976 ms"},
		{func(c *Config, t *trace.Trace) {
			c.ReplayConcurrency, c.ArrivalSpeedupRatio, t.Requests[0].TimestampMS = 0, 1e-12, 1e9
		},
			"x.jsonl:1: timestamp: 1000000000 ms / arrival_speedup_ratio 1e-12 is beyond the simulation clock"},
	}
	for _, tc := range cases {
		c := good
		c.Router = router.DefaultConfig()
		tt := *tr
		tt.Requests = slices.Clone(tr.Requests)
		tc.mut(&c, &tt)
		_, err := New(c, timer, &tt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v", tc.want, err)
		}
	}
}

// RunUntil in slices gives the same report as Run; a cancelled context stops Run.
func TestRunUntilAndCancel(t *testing.T) {
	tr := syntheticTrace(200, 9)
	cfg, mw := seedConfig(t)
	cfg.SnapshotEveryUS = 100_000
	whole, err := Replay(context.Background(), cfg, mw, tr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, mw, tr)
	if err != nil {
		t.Fatal(err)
	}
	prev := int64(0)
	for tUS := int64(0); !s.RunUntil(tUS); tUS += 37_000 {
		if s.Now() < prev || s.Now() != tUS {
			t.Fatalf("Now %d after RunUntil(%d)", s.Now(), tUS)
		}
		prev = s.Now()
	}
	if a, b := reportJSON(t, whole), reportJSON(t, s.Report()); a != b {
		i := 0
		for i < min(len(a), len(b)) && a[i] == b[i] {
			i++
		}
		t.Fatalf("RunUntil slices differ from Run at byte %d:\n%s\n%s", i, a[max(0, i-300):min(len(a), i+100)], b[max(0, i-300):min(len(b), i+100)])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Replay(ctx, cfg, mw, tr); err == nil {
		t.Fatal("cancelled run returned no error")
	}
}
