package engine

import (
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// Under the dynosim reference a pass's prompt blocks reach the router when the pass starts
// (the mocker's RouterEventVisibility::PassStart); under silicon when the step computing them
// ends. The batch also tells the timer which prompts the step completes.
func TestDynosimPublishesBlocksAtPassStart(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 256, 3, 1, 2, 3, 4)}}
	for _, ref := range []string{model.ReferenceSilicon, model.ReferenceDynosim} {
		cfg := Config{Workers: 1, Worker: deployment(64, 1024, 8), ReplayConcurrency: 1}
		cfg.Worker.TimingReference = ref
		timer := &fakeTimer{base: 1000, perToken: 10, record: true}
		var storedAt []int64
		rt := &fixedRouter{workers: 1}
		s := newSim(cfg, timer, tr, rt)
		s.onKV = func(ev router.KVEvent) {
			if ev.Kind == router.BlocksStored {
				storedAt = append(storedAt, s.now)
			}
		}
		if _, err := s.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		// The prefill step runs 0 → 1000 + 10×256 = 3560 µs.
		want := int64(3560)
		if ref == model.ReferenceDynosim {
			want = 0
		}
		if len(storedAt) != 1 || storedAt[0] != want {
			t.Fatalf("%s: stored events at %v µs, want one at %d", ref, storedAt, want)
		}
		if rt.events[0].Kind != router.BlocksStored || len(rt.events[0].Hashes) != 4 {
			t.Fatalf("%s: first event %+v, want the 4 prompt blocks stored", ref, rt.events[0])
		}
	}
}

// The engine marks the chunks that complete their prompt, so a timer can price their first
// token's decode; a chunk that leaves part of the prompt for later is not marked.
func TestBatchCountsFirstTokens(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 300, 2, 1, 2, 3, 4, 5)}}
	cfg := Config{Workers: 1, Worker: deployment(64, 200, 8), ReplayConcurrency: 1}
	var seen []model.Batch
	timer := timerFunc(func(b *model.Batch) int64 {
		seen = append(seen, model.Batch{Prefill: append([]model.Chunk(nil), b.Prefill...), Decodes: b.Decodes,
			FirstTokens: b.FirstTokens, FirstTokenContextTokens: b.FirstTokenContextTokens})
		return 100
	})
	s := newSim(cfg, timer, tr, &fixedRouter{workers: 1})
	s.stepwise = true
	if _, err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	// 300 tokens in chunks of 200 and 100, then one decode.
	if len(seen) != 3 || seen[0].FirstTokens != 0 || seen[1].FirstTokens != 1 || seen[1].FirstTokenContextTokens != 300 ||
		seen[2].Decodes != 1 || seen[2].FirstTokens != 0 {
		t.Fatalf("batches %+v", seen)
	}
}

type timerFunc func(b *model.Batch) int64

func (f timerFunc) StepTimeUS(b *model.Batch) int64 { return f(b) }
