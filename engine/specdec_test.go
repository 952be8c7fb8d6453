package engine

import (
	"context"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/specdec"
	"github.com/routerlab/routerlab/trace"
)

// TensorRT-LLM with MTP on random workloads: the engine's invariants (checkInvariants: every
// request emits exactly its output tokens, never more, one inter-token gap per token after
// the first) and the drafts' KV: after a step a generation request holds at least the blocks
// of its computed tokens (the accepted drafts' included), never more than its whole
// sequence's, and the free blocks cover every running request's remaining sequence.
func TestTRTLLMMTPInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var k int32
		checkInvariants(t, func(t *rapid.T, c *Config, tr *trace.Trace) {
			c.Worker.Backend = model.BackendTRTLLM
			c.Worker.TimingReference = ""
			c.Worker.Speculative = specdec.Config{DraftLen: rapid.IntRange(1, 4).Draw(t, "draft_len"),
				First: rapid.Float64Range(0.01, 1).Draw(t, "first"), Later: rapid.Float64Range(0.01, 1).Draw(t, "later")}
			k = int32(c.Worker.Speculative.DraftLen)
			c.Worker.MaxNumBatchedTokens = max(c.Worker.MaxNumBatchedTokens, c.Worker.BlockSize, 1+int(k))
			for _, r := range tr.Requests {
				c.Worker.MaxNumBatchedTokens = max(c.Worker.MaxNumBatchedTokens, r.InputLength)
			}
		}, func(s *Sim) error {
			for i := range s.workers {
				w := &s.workers[i]
				reserved := 0
				for _, ri := range w.running {
					r := &s.reqs[ri]
					reserved += s.trtRemaining(r)
					held := int32(len(r.fl.blocks))
					if r.fl.generated > 0 && (held < s.blocksFor(r.fl.computed) || held > s.blocksFor(r.isl+r.out)) {
						return fmt.Errorf("worker %d request %d holds %d blocks at %d computed tokens (drafts %d, sequence %d)", i, ri, held, r.fl.computed, k, r.isl+r.out)
					}
				}
				if w.preemptions > 0 || reserved > w.pool.available() {
					return fmt.Errorf("worker %d: %d preemptions, running requests may still need %d blocks, %d free", i, w.preemptions, reserved, w.pool.available())
				}
			}
			return nil
		})
	})
}

// MTP's accepted drafts come from the seed: the same seed replays byte-identically, and a
// request of 64 output tokens alone on the worker takes fewer generation steps than tokens
// (1 + k at most per step), as many as the plain engine's when every draft is rejected.
func TestTRTLLMMTPSteps(t *testing.T) {
	tr := &trace.Trace{Name: "mtp", BlockSize: 64, Requests: []trace.Request{req(0, 64, 64, 1)}}
	run := func(sc specdec.Config, seed uint64) (*Report, int) {
		cfg := Config{Workers: 1, Worker: deployment(100, 1024, 4), Router: router.DefaultConfig(), Seed: seed}
		cfg.Worker.Backend, cfg.Worker.Speculative = model.BackendTRTLLM, sc
		timer := &fakeTimer{base: 100, perToken: 1, record: true}
		s, err := New(cfg, timer, tr)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return rep, len(timer.batches)
	}
	mtp := specdec.Config{DraftLen: 3}
	a, steps := run(mtp, 1)
	b, _ := run(mtp, 1)
	if reportJSON(t, a) != reportJSON(t, b) {
		t.Fatal("the same seed gave two reports")
	}
	// 1 prefill step, then 63 tokens in steps of 1 to 4.
	if steps < 1+16 || steps >= 64 {
		t.Fatalf("%d steps for 64 tokens with 3 drafts", steps)
	}
	if _, rejected := run(specdec.Config{DraftLen: 3, First: 1e-300}, 1); rejected != 64 {
		t.Fatalf("%d steps with every draft rejected, want 64", rejected)
	}
	if _, all := run(specdec.Config{DraftLen: 3, First: 1, Later: 1}, 1); all != 1+16 {
		t.Fatalf("%d steps with every draft accepted, want 17 (63 = 15 × 4 + 3)", all)
	}
}

// Speculative decoding is refused where the engine does not model it.
func TestSpeculativeRefused(t *testing.T) {
	tr := &trace.Trace{Name: "mtp", BlockSize: 64, Requests: []trace.Request{req(0, 64, 4, 1)}}
	for _, c := range []struct {
		backend model.Backend
		sc      specdec.Config
	}{{model.BackendVLLM, specdec.Config{DraftLen: 3}}, {model.BackendSGLang, specdec.Config{DraftLen: 1}}, {model.BackendTRTLLM, specdec.Config{DraftLen: 3, First: 2}}} {
		cfg := Config{Workers: 1, Worker: deployment(100, 1024, 4), Router: router.DefaultConfig()}
		cfg.Worker.Backend, cfg.Worker.Speculative = c.backend, c.sc
		if _, err := New(cfg, &fakeTimer{base: 1}, tr); err == nil {
			t.Errorf("%s with %+v: no error", c.backend, c.sc)
		}
	}
}
