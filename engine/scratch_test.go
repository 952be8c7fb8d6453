package engine

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/internal/cputime"
	"github.com/routerlab/routerlab/trace"
)

// TestScratchReplaysAreNewOnes: replays run one after another on one Scratch — different
// traces, fleets, block sizes, pools, routers and scheduling, some abandoned part-way —
// report byte-identically to the same replays in fresh memory.
func TestScratchReplaysAreNewOnes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var sc Scratch
		for i := range rapid.IntRange(2, 4).Draw(t, "replays") {
			tr := genTrace(t, rapid.SampledFrom([]int{64, 128, 512}).Draw(t, "trace_block"))
			cfg := genConfig(t, tr)
			timer := &fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "base")), perToken: 1}
			if rapid.Bool().Draw(t, "abandon") {
				s, err := build(&sc, cfg, timer, tr)
				if err != nil {
					t.Fatal(err)
				}
				s.RunUntil(int64(rapid.IntRange(0, 20000).Draw(t, "until")))
				s.giveBack(&sc)
				continue
			}
			want, err := Replay(context.Background(), cfg, timer, tr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sc.Replay(context.Background(), cfg, timer, tr)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := reportJSON(t, got), reportJSON(t, want); g != w {
				t.Fatalf("replay %d on the scratch:\n%s\nin fresh memory:\n%s", i, g, w)
			}
		}
	})
}

// BenchmarkScratchReplay is a sweep slot's run of replays: the seed configuration on the
// first 2,000 requests of the toolagent-like trace (a search evaluation) and on all of it (a
// validation run), each in fresh memory (Replay) and on a Scratch kept across the loop
// (Scratch.Replay). It reports the CPU and the minor page faults per replay: what reuse
// saves is the growing of the tables and the first touch of their memory, which on a
// paravirtualised VM is a trap per page.
func BenchmarkScratchReplay(b *testing.B) {
	tr, err := trace.Load("builtin:toolagent", trace.DefaultBlockSize)
	if err != nil {
		b.Fatal(err)
	}
	cfg, mw := seedConfig(b)
	for _, n := range []int{2000, len(tr.Requests)} {
		part := tr.First(n)
		for _, reuse := range []bool{false, true} {
			b.Run(fmt.Sprintf("requests=%d/reuse=%v", n, reuse), func(b *testing.B) {
				var sc Scratch
				replay := func() error {
					if reuse {
						_, err := sc.Replay(context.Background(), cfg, mw, part)
						return err
					}
					_, err := Replay(context.Background(), cfg, mw, part)
					return err
				}
				if err := replay(); err != nil { // the scratch grown once, as in a sweep
					b.Fatal(err)
				}
				runtime.GC()
				b.ReportAllocs()
				cpu0, faults0 := cputime.Process(), cputime.MinorFaults()
				for b.Loop() {
					if err := replay(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(cputime.MinorFaults()-faults0)/float64(b.N), "faults/op")
			})
		}
	}
}
