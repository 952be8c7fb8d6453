package model

import (
	"math"
	"strings"
	"testing"
)

// depSeed is the seed's MiniMax-M2.5 FP8 on four B200s as DEP: two attention ranks of tp 2,
// the experts over all four GPUs (moe_ep 4).
func depSeed() Deployment {
	d := SeedDeployment()
	d.TP, d.AttentionDP, d.MoETP, d.MoEEP = 2, 2, 1, 4
	return d
}

// A lockstep step by hand: two ranks decoding 32 requests each at 1,024 tokens of context.
// Each rank's own part is the tp 2 table's step without its routed experts; the experts run
// once on the 64 summed tokens from the 4-GPU table (moe_ep 4), and the dispatch costs one
// of that table's two all-reduces per layer. 64 tokens is a node of the axis, so every grid
// is read at a node.
func TestRanksStepByHand(t *testing.T) {
	w, err := NewWorker(depSeed())
	if err != nil {
		t.Fatal(err)
	}
	if w.Ranks() != 2 || w.ExpertsTableDigest() == "" {
		t.Fatalf("ranks %d, experts table %q", w.Ranks(), w.ExpertsTableDigest())
	}
	rankD := SeedDeployment()
	rankD.TP, rankD.MoETP, rankD.MoEEP = 2, 1, 2
	rank, err := NewWorker(rankD)
	if err != nil {
		t.Fatal(err)
	}
	wholeD := SeedDeployment() // tp 4, moe_ep 4
	whole, err := loadTable(wholeD)
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{Decodes: 32, DecodeContextTokens: 32 * 1024}
	bd := rank.Breakdown(&b)
	own := bd.NonAttentionUS - bd.Operators.ExpertsUS + bd.LogitsUS + bd.DecodeAttnUS
	node := int(math.Round(axisPos(64)))
	experts, dispatch := whole.MoE.Values[node], whole.Collective.Values[node]/2 // MiniMax: every layer is MoE
	want := math.Ceil(own) + math.Ceil(experts+dispatch)
	got := w.RanksStepUS([]Batch{b, b})
	if math.Abs(float64(got)-want) > 1 {
		t.Fatalf("step %d µs; by hand %.0f (rank %.1f + experts %.1f + dispatch %.1f)", got, want, own, experts, dispatch)
	}
	t.Logf("rank %.1f µs + experts %.1f µs + dispatch %.1f µs = %d µs", own, experts, dispatch, got)
	// A rank's dummy batch adds one token to the experts and nothing to the slowest rank.
	half := w.RanksStepUS([]Batch{b, {}})
	if x := float64(half) - math.Ceil(own); x <= 0 || x >= experts+dispatch {
		t.Fatalf("with one rank idle: %d µs, leaves %.1f µs for experts and dispatch on 33 tokens (64 tokens: %.1f)", half, x, experts+dispatch)
	}
	// The TEP worker of the same GPUs runs all 64 requests through every layer itself.
	tep, err := NewWorker(SeedDeployment())
	if err != nil {
		t.Fatal(err)
	}
	if tepUS := tep.StepTimeUS(&Batch{Decodes: 64, DecodeContextTokens: 64 * 1024}); tepUS == got {
		t.Fatalf("DEP and TEP price the same step alike (%d µs)", got)
	}
}

// A DEP rank holds the attention weights of its tp GPUs and a share of the experts over all
// of them: more KV per rank than a TEP worker's per-GPU share would give at tp 2 alone.
func TestRanksCapacity(t *testing.T) {
	w, err := NewWorker(depSeed())
	if err != nil {
		t.Fatal(err)
	}
	rankD := SeedDeployment()
	rankD.TP, rankD.MoETP, rankD.MoEEP = 2, 1, 2
	rank, err := NewWorker(rankD)
	if err != nil {
		t.Fatal(err)
	}
	c, r := w.Capacity(), rank.Capacity()
	if c.NumGPUBlocks <= r.NumGPUBlocks || c.WeightBytes >= r.WeightBytes {
		t.Fatalf("DEP rank: %d blocks, %d weight bytes; a tp 2 worker with experts over 2 GPUs: %d, %d",
			c.NumGPUBlocks, c.WeightBytes, r.NumGPUBlocks, r.WeightBytes)
	}
}

// What cannot be priced says why.
func TestRanksErrors(t *testing.T) {
	noRank := SeedDeployment()
	noRank.TP, noRank.AttentionDP, noRank.MoETP, noRank.MoEEP = 1, 4, 1, 4 // FP8 has no tp 1 table
	dyn := depSeed()
	dyn.TimingReference = ReferenceDynosim
	for _, c := range []struct {
		d    Deployment
		want string
	}{
		{noRank, "prices each rank from a table of tp 1"},
		{dyn, "dynosim timing reference prices attention_dp 1 only"},
	} {
		if _, err := NewWorker(c.d); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.d.Layout(), err, c.want)
		}
	}
}
