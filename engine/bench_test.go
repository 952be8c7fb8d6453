package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/routerlab/routerlab/internal/cputime"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// syntheticTrace is a toolagent-like workload for benchmarks: sessions that share one of a
// few system prompts and grow their own history turn by turn, prompts of ~8.6k tokens on
// average, outputs of ~180 tokens. Deterministic in seed.
func syntheticTrace(n int, seed uint64) *trace.Trace {
	rng := rand.New(rand.NewPCG(seed, 0x73796e7468))
	const bs = trace.DefaultBlockSize
	next := int64(0)
	fresh := func(k int) []int64 {
		ids := make([]int64, k)
		for i := range ids {
			ids[i] = next
			next++
		}
		return ids
	}
	systems := make([][]int64, 12)
	for i := range systems {
		systems[i] = fresh(2 + rng.IntN(8))
	}
	type session struct{ ids []int64 }
	live := make([]session, 0, 64)
	reqs := make([]trace.Request, 0, n)
	ts := int64(0)
	for len(reqs) < n {
		if len(live) < 48 || rng.IntN(8) == 0 {
			sys := systems[rng.IntN(len(systems))]
			live = append(live, session{ids: append(append([]int64(nil), sys...), fresh(1+rng.IntN(6))...)})
		}
		i := rng.IntN(len(live))
		s := &live[i]
		s.ids = append(s.ids, fresh(1+rng.IntN(3))...)
		if len(s.ids) > 40 {
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			continue
		}
		ids := append([]int64(nil), s.ids...)
		in := (len(ids)-1)*bs + 1 + rng.IntN(bs)
		out := 1 + int(rng.ExpFloat64()*181)
		out = min(out, 2000)
		ts += int64(rng.ExpFloat64() * 150)
		reqs = append(reqs, trace.Request{TimestampMS: ts, InputLength: in, OutputLength: out, HashIDs: ids})
	}
	return &trace.Trace{Name: "synthetic", BlockSize: bs, Requests: reqs}
}

// seedConfig is the seed experiment: 8 MiniMax-M2.5 TEP workers on B200, kv_router, c=32.
func seedConfig(tb testing.TB) (Config, *model.Worker) {
	tb.Helper()
	d := model.SeedDeployment()
	mw, err := model.NewWorker(d)
	if err != nil {
		tb.Fatal(err)
	}
	d.NumGPUBlocks = mw.Capacity().NumGPUBlocks
	return Config{Workers: 8, Worker: d, Router: router.DefaultConfig(), ReplayConcurrency: 32, Seed: 1}, mw
}

func benchReplay(b *testing.B, tr *trace.Trace, mode router.Mode) {
	cfg, mw := seedConfig(b)
	cfg.Router.Mode = mode
	b.ReportAllocs()
	var rep *Report
	cpu0 := cputime.Process()
	for b.Loop() {
		var err error
		rep, err = Replay(context.Background(), cfg, mw, tr)
		if err != nil {
			b.Fatal(err)
		}
	}
	// CPU time, not wall: the benchmark machine is shared.
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N*len(tr.Requests)), "cpu-µs/request")
	s := rep.Summary
	b.ReportMetric(float64(s.RequestsCompleted), "requests")
	b.ReportMetric(s.PrefixCacheReusedRatio, "reuse")
	b.ReportMetric(s.MeanTTFTMS, "ttft_ms")
}

// BenchmarkReplayToolagent is the speed target: the built-in 23,608-request toolagent-like
// trace, 8 workers, c = 32.
func BenchmarkReplayToolagent(b *testing.B) {
	tr, err := trace.Load("builtin:toolagent", trace.DefaultBlockSize)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("kv_router", func(b *testing.B) { benchReplay(b, tr, router.ModeKV) })
	b.Run("round_robin", func(b *testing.B) { benchReplay(b, tr, router.ModeRoundRobin) })
	// The engine alone: the kv_router's decisions replayed from a recording, KV events
	// dropped, so the router's indexer costs nothing.
	b.Run("engine_only", func(b *testing.B) {
		cfg, mw := seedConfig(b)
		s, err := New(cfg, mw, tr)
		if err != nil {
			b.Fatal(err)
		}
		rec := &recordingRouter{routerAPI: s.rt, routes: make([]int, len(tr.Requests))}
		s.rt = rec
		if _, err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		cpu0 := cputime.Process()
		for b.Loop() {
			s := newSim(cfg, mw, tr, &replayedRouter{routes: rec.routes})
			if _, err := s.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	})
}

// recordingRouter notes every routing decision of the router it wraps.
type recordingRouter struct {
	routerAPI
	routes []int
}

func (r *recordingRouter) Route(req *router.Request) int {
	w := r.routerAPI.Route(req)
	r.routes[req.ID] = w
	return w
}

// replayedRouter repeats recorded decisions and ignores everything else.
type replayedRouter struct{ routes []int }

func (r *replayedRouter) Route(req *router.Request) int { return r.routes[req.ID] }
func (r *replayedRouter) FirstToken(int64)              {}
func (r *replayedRouter) Finished(int64)                {}
func (r *replayedRouter) Apply(router.KVEvent)          {}

// BenchmarkReplaySynthetic runs the test suite's own toolagent-like generator (independent
// of the trace package's profiles).
func BenchmarkReplaySynthetic(b *testing.B) {
	tr := syntheticTrace(23608, 1)
	b.Run("kv_router", func(b *testing.B) { benchReplay(b, tr, router.ModeKV) })
}

const conversationTrace = "../../shared/traces/conversation_trace.jsonl"

func loadConversation(tb testing.TB) *trace.Trace {
	tb.Helper()
	if _, err := os.Stat(conversationTrace); err != nil {
		tb.Skip("../shared/traces/conversation_trace.jsonl not present: ", err)
	}
	tr, err := trace.Load(conversationTrace, trace.DefaultBlockSize)
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}

func BenchmarkReplayConversation(b *testing.B) {
	tr := loadConversation(b)
	b.Run("kv_router", func(b *testing.B) { benchReplay(b, tr, router.ModeKV) })
	b.Run("round_robin", func(b *testing.B) { benchReplay(b, tr, router.ModeRoundRobin) })
}

// BenchmarkReplayCopies replays the toolagent trace and back-to-back copies of it
// (builtin:toolagent:xN): per-request time (cpu-µs/request) should not grow with the
// trace's length once the caches are warm (the first hour runs cheaper). ×100 (2.4 M
// requests) is measured from the command line instead; see docs/benchmarks.md.
func BenchmarkReplayCopies(b *testing.B) {
	for _, spec := range []string{"builtin:toolagent", "builtin:toolagent:x2", "builtin:toolagent:x10"} {
		tr, err := trace.Load(spec, trace.DefaultBlockSize)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(spec, func(b *testing.B) {
			cfg, mw := seedConfig(b)
			cpu0 := cputime.Process()
			for b.Loop() {
				if _, err := Replay(context.Background(), cfg, mw, tr); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/float64(b.N*len(tr.Requests)), "cpu-µs/request")
		})
	}
}

// BenchmarkBlockHashes is the hash chain of one toolagent-like prompt at arrival (134
// engine blocks of 64 tokens in 17 trace blocks of 512: 17 chained keys, blockKeys): one op
// is one prompt.
func BenchmarkBlockHashes(b *testing.B) {
	ids := make([]int64, 17)
	for i := range ids {
		ids[i] = int64(1000 + i)
	}
	var dst []uint64
	for b.Loop() {
		dst = blockKeys(dst[:0], ids, 0, 134*64+10, 64, 512)
	}
}
