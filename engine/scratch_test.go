package engine

import (
	"context"
	"testing"

	"pgregory.net/rapid"
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
