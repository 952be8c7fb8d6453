package engine

import (
	"fmt"

	"github.com/routerlab/routerlab/router"
)

// Conditional disaggregation, as Dynamo's frontend runs it with --router-conditional-disagg
// (ai-dynamo/dynamo docs/components/router/router-disaggregated-serving.md at 8f295b38,
// experimental there; lib/kv-router/src/conditional_disagg.rs at 088ca50b, its default
// policy isl_bounding). On arrival the decode router — which then scores the decode
// workers' cached prefixes, as it does for no plain decode pool — picks the request's decode
// worker. When the prompt tokens that worker's cache lacks (the effective ISL) are fewer
// than EffISLThreshold and less than EffISLRatioThreshold of the prompt, the request skips
// the prefill pool and runs prefill and decode on that worker; otherwise it is prefilled on
// a prefill worker and handed to the same decode worker (pinned at the decision, as the
// coordinator of later revisions commits the previewed decode worker).

// ConditionalDisagg is the isl_bounding policy's thresholds.
type ConditionalDisagg struct {
	EffISLThreshold      int     // tokens; default 2048
	EffISLRatioThreshold float64 // of the prompt; default 0.7
}

// DefaultConditionalDisagg is Dynamo's default policy (DEFAULT_CONDITIONAL_DISAGG_EFF_ISL_*).
func DefaultConditionalDisagg() ConditionalDisagg {
	return ConditionalDisagg{EffISLThreshold: 2048, EffISLRatioThreshold: 0.7}
}

func (c *ConditionalDisagg) check() error {
	switch {
	case c.EffISLThreshold < 0:
		return fmt.Errorf("router_conditional_disagg_eff_isl_threshold: %d must be >= 0", c.EffISLThreshold)
	case !(c.EffISLRatioThreshold >= 0 && c.EffISLRatioThreshold <= 1):
		return fmt.Errorf("router_conditional_disagg_eff_isl_ratio_threshold: %v must be in [0, 1]", c.EffISLRatioThreshold)
	}
	return nil
}

// Bypass is isl_bounding's verdict for a prompt of which cachedTokens are on the chosen
// decode worker: prefill it there.
func (c *ConditionalDisagg) Bypass(prompt, cachedTokens int) bool {
	eff := max(prompt-cachedTokens, 0)
	return eff < c.EffISLThreshold && float64(eff)/float64(max(prompt, 1)) < c.EffISLRatioThreshold
}

// conditional routes request i at t on the decode router first and reports whether it
// bypassed the prefill pool (then it is on its way to the decode worker).
func (s *Sim) conditional(i int, t int64) bool {
	d := s.dis
	r := &s.reqs[i]
	req := router.Request{ID: int64(i), InputLength: int(r.fl.tokens), BlockHashes: r.fl.hashes}
	dw := d.rt.Route(&req)
	d.pinned[i] = int32(dw) + 1
	d.rt.Overlaps(r.fl.hashes, d.overlaps)
	if !d.cfg.Conditional.Bypass(int(r.isl), d.overlaps[dw]*int(s.blockSize)) {
		return false
	}
	d.local[i] = true
	d.bypassed++
	s.dispatch(i, d.first+dw, t)
	return true
}
