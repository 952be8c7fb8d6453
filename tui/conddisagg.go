package tui

import (
	"cmp"
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// Conditional disaggregation in the explorer: on a split fleet `c` turns the frontend's
// --router-conditional-disagg on or off (engine/conddisagg.go), with the decode workers'
// prefix caching on as vLLM's --enable-conditional-disagg has them publish their KV. With it
// on, the decode router picks each request's decode worker first and a prompt that worker
// mostly holds is prefilled there, skipping the prefill pool; the Metrics pane says how many.

// toggleConditional is `c`. Dynamo's frontend refuses the flag outside --router-mode kv, so
// it is turned on only under kv_router; off always works.
func (p *knobsPane) toggleConditional() tea.Cmd {
	d := &p.knobs.Deployment
	if d.Conditional {
		d.Conditional = false
		p.note = "conditional disaggregation off: every request is prefilled on the prefill pool"
		return p.changed()
	}
	if !p.knobs.KVKnobsApply() {
		p.note = fmt.Sprintf("c: conditional disaggregation needs router_mode kv_router (Dynamo's frontend refuses --router-conditional-disagg outside --router-mode kv); m cycles the mode, now %s", p.knobs.Mode)
		return nil
	}
	d.Conditional = true
	rule := cmp.Or(p.space.ConditionalRule, "a decode worker holding most of a prompt prefills it")
	p.note = "conditional disaggregation on (decode prefix caching on): " + rule
	return p.changed()
}

// conditionalLine is the Metrics pane's line of a run with conditional disaggregation on:
// how many requests skipped the prefill pool.
func (p *metricsPane) conditionalLine() string {
	d := p.cur.Metrics.Disagg
	return p.common.Styles.Text.Render(fmt.Sprintf("prefilled on decode: %d of %d", d.Bypassed, p.cur.Metrics.Completed))
}
