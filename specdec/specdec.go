// Package specdec models speculative decoding with DeepSeek's multi-token prediction (MTP) as
// TensorRT-LLM's PyTorch backend runs it (tensorrt_llm/_torch/speculative/mtp.py,
// MTPEagleWorker, at the releases 1.1.0rc2.post2 and 1.2.0rc6.post3; docs/speculative-decoding.md).
//
// Each generation step verifies a request's k draft tokens: the target model runs on 1 + k
// tokens, the longest prefix of drafts that match its greedy tokens is accepted, and the
// request gains 1 + a tokens (a accepted drafts, 0 ≤ a ≤ k). The drafts' acceptance is a
// chain: draft 1 is accepted with probability First, each later one, given the one before it
// was, with probability Later. The package draws a from its own seeded random stream, so a
// replay is deterministic.
package specdec

import (
	"fmt"
	"math/rand/v2"
)

// Default acceptance (docs/speculative-decoding.md, "Acceptance"):
//   - DefaultFirst: DeepSeek-V3 Technical Report (arXiv 2412.19437, §5.4.3): the second
//     token's (the first draft's) acceptance rate "ranges between 85% and 90%"; the low end.
//   - DefaultLater: the original DeepSeek-V3 MTP module reused autoregressively for K = 7
//     drafts accepts 3.20 tokens a step on average at temperature 0 (nebius/MTP-DeepSeek-V3-0324
//     model card, "Original MTP", over MT-bench, HumanEval and GSM8K). With the first draft at
//     0.85, 1 + 0.85·(1 + q + … + q⁶) = 3.20 gives the later drafts' conditional rate q ≈ 0.63.
const (
	DefaultFirst = 0.85
	DefaultLater = 0.63
)

// Config is a deployment's speculative decoding; the zero value is none.
type Config struct {
	// DraftLen is the draft tokens a step verifies per request (TensorRT-LLM's
	// speculative_config num_nextn_predict_layers, k); 0: no speculative decoding.
	DraftLen int `json:"draft_len,omitempty"`
	// First is the probability the first draft is accepted; Later the probability a later
	// draft is, given the one before it was. 0 means the defaults above.
	First float64 `json:"first_acceptance,omitempty"`
	Later float64 `json:"later_acceptance,omitempty"`
}

// MaxDraftLen bounds DraftLen (TensorRT-LLM's MTP kernels take up to a handful of drafts).
const MaxDraftLen = 16

// On reports whether c drafts tokens.
func (c Config) On() bool { return c.DraftLen > 0 }

// Validate checks c's fields.
func (c Config) Validate() error {
	switch {
	case c.DraftLen < 0 || c.DraftLen > MaxDraftLen:
		return fmt.Errorf("speculative draft_len: %d must be in [0, %d]", c.DraftLen, MaxDraftLen)
	case !(c.First >= 0 && c.First <= 1):
		return fmt.Errorf("speculative first_acceptance: %v must be in [0, 1] (0: %v)", c.First, DefaultFirst)
	case !(c.Later >= 0 && c.Later <= 1):
		return fmt.Errorf("speculative later_acceptance: %v must be in [0, 1] (0: %v)", c.Later, DefaultLater)
	}
	return nil
}

// rates are c's acceptance probabilities with the defaults filled in.
func (c Config) rates() (first, later float64) {
	first, later = c.First, c.Later
	if first == 0 {
		first = DefaultFirst
	}
	if later == 0 {
		later = DefaultLater
	}
	return first, later
}

// MeanAccepted is the expected accepted drafts per step: Σ_{i=1..k} first·later^(i−1).
func (c Config) MeanAccepted() float64 {
	first, later := c.rates()
	sum, p := 0.0, first
	for range c.DraftLen {
		sum += p
		p *= later
	}
	return sum
}

// Sampler draws accepted draft counts from its own random stream.
type Sampler struct {
	k            int
	first, later float64
	rng          *rand.Rand
}

// specdecStream keys the sampler's stream apart from the other subsystems' ("specdec").
const specdecStream = 0x7370656364656300

// NewSampler is a sampler of c's acceptance seeded by seed.
func NewSampler(c Config, seed uint64) *Sampler {
	first, later := c.rates()
	return &Sampler{k: c.DraftLen, first: first, later: later, rng: rand.New(rand.NewPCG(seed, specdecStream))}
}

// Accepted draws one step's accepted drafts of one request, in [0, DraftLen]: the drafts
// are verified in order and the first rejected one ends the run.
func (s *Sampler) Accepted() int {
	p := s.first
	for a := range s.k {
		if s.rng.Float64() >= p {
			return a
		}
		p = s.later
	}
	return s.k
}
