package engine

import "fmt"

// MTP speculative decoding on TensorRT-LLM (package specdec, docs/speculative-decoding.md):
// a generation step verifies each request's drafts. The scheduler counts a generation request
// as 1 + k tokens of max_num_tokens (the micro-batch scheduler adds a request's draft tokens
// to its step's) and gives it the KV blocks of its k draft tokens too, never past its whole
// sequence: cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp's getNeededBlocksOneStep adds
// draft tokens + 1 a step, capped at the tokens the request may still generate, and
// getRemainingBlocksToCompletion reserves prompt + max new tokens, drafts not counted. The
// step is priced as model.Worker prices an MTP step; at its end each generation request gains
// its accepted drafts as well as its own token, never past its output length
// (MTPSampler.update_requests stops at the stop criteria). Rejected drafts' slots are rewound
// but their blocks stay the request's: its reservation covers them.

// drafts is the draft tokens each generation step of a request verifies (k; 0 without MTP).
func (s *Sim) drafts() int32 { return int32(s.cfg.Worker.Speculative.DraftLen) }

// acceptDrafts adds the drafts that r's generation step accepted to its tokens (their KV is
// computed) and returns how many.
func (s *Sim) acceptDrafts(r *request) int32 {
	a := min(int32(s.spec.Accepted()), r.out-r.fl.generated)
	r.fl.generated += a
	r.fl.tokens += a
	r.fl.computed += a
	return a
}

// checkSpeculative refuses speculative decoding where the engine does not model it: only
// TensorRT-LLM's scheduler verifies drafts, on workers without attention ranks, fleets that
// neither disaggregate nor change size.
func (c *Config) checkSpeculative() error {
	sc := c.Worker.Speculative
	if err := sc.Validate(); err != nil || !sc.On() {
		return err
	}
	if kind, _ := kindOf(c.Worker.Backend); kind != schedTRTLLM || c.Worker.AttentionDP > 1 || c.Disagg != nil || c.Fleet != nil {
		return fmt.Errorf("speculative draft_len %d: MTP is modelled for one TensorRT-LLM worker kind without attention data parallelism, in aggregated static fleets", sc.DraftLen)
	}
	return nil
}
