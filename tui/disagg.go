package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// A disaggregated fleet in the explorer: `a` splits the knobs' Replicas workers into a
// prefill pool and a decode pool of the same layout (so the GPU budget stays the same) or
// joins them again; `[` and `]` trade workers between the pools at equal GPUs (one for one
// when the pools share a layout). The Fleet pane draws each pool's rows under its own labels
// (p0…, d0…), and the Metrics pane adds where TTFT goes, the KV transfer included, and each
// pool's figures.

// DisaggMetrics are a disaggregated run's figures (engine.DisaggSummary): TTFT's parts
// (means, ms), the transfer's tail and volume, and each pool's.
type DisaggMetrics struct {
	PrefillMS, DecodeWaitMS, TransferMS, FirstDecodeMS float64
	TransferP95MS                                      float64
	TransferGB                                         float64
	PrefillTTFTShare                                   float64 // PrefillMS ÷ mean TTFT
	TPOTMS                                             float64 // mean TPOT: every decode step runs on the decode pool
	Bypassed                                           int     // requests conditional disaggregation prefilled on their decode worker
	Prefill, Decode                                    PoolMetrics
}

// PoolMetrics are one pool's figures: its prefix-hit ratio (the decode pool's at the
// reservation), the peak share of KV blocks a worker held, and the busiest worker's requests
// ÷ the pool's mean.
type PoolMetrics struct {
	Workers                              int
	PrefixHit, PeakBlockShare, Imbalance float64
}

// split is the deployment's pools as --set-like words: "prefill=3+5", with the decode
// pool's own layout and limits when it has them.
func (d Deployment) split() string {
	s := fmt.Sprintf("prefill=%d+%d", d.Prefill, d.Replicas-d.Prefill)
	if d.DecodeLayout != "" {
		s += " decode_layout=" + d.DecodeLayout
	}
	if d.DecodeBatchedTokens > 0 {
		s += fmt.Sprintf(" decode_max_num_batched_tokens=%d", d.DecodeBatchedTokens)
	}
	if d.DecodeSeqs > 0 {
		s += fmt.Sprintf(" decode_max_num_seqs=%d", d.DecodeSeqs)
	}
	if d.Conditional {
		s += " router_conditional_disagg=true"
	}
	return s
}

// keepSplit keeps a disaggregated deployment's split within its Replicas after the
// replicas knob moved: each pool keeps one worker at least, the prefill pool no more
// than it had. It says why not when Replicas leaves no room for two pools.
func keepSplit(d *Deployment) string {
	if d.Replicas < 2 {
		return fmt.Sprintf("replicas: %d cannot hold a prefill and a decode pool; a joins them first", d.Replicas)
	}
	d.Prefill = min(d.Prefill, d.Replicas-1)
	return ""
}

// toggleDisagg is the global `a`: a disaggregated fleet of the same workers (half of them
// prefilling, at least one) or the aggregated one again.
func (p *knobsPane) toggleDisagg() tea.Cmd {
	d := &p.knobs.Deployment
	if d.Prefill > 0 {
		p.note = fmt.Sprintf("aggregated: %d workers each prefill and decode", d.Replicas)
		if d.DecodeLayout != "" {
			p.note += ", all of " + d.Layout + " (the decode pool's " + d.DecodeLayout + " goes)"
		}
		d.Prefill, d.DecodeLayout, d.DecodeBatchedTokens, d.DecodeSeqs, d.Conditional = 0, "", 0, 0, false
		return p.changed()
	}
	want := *d
	want.Prefill = max(1, d.Replicas/2)
	switch why := p.space.DisaggFits(want); {
	case d.Replicas < 2:
		p.note = fmt.Sprintf("a: %d worker cannot be split into a prefill and a decode pool; raise replicas first", d.Replicas)
		return nil
	case why != "":
		p.note = "a: stays aggregated: " + why
		return nil
	}
	*d = want
	p.note = fmt.Sprintf("disaggregated: %d prefill + %d decode workers of %s; [ and ] move the split", d.Prefill, d.Replicas-d.Prefill, d.Layout)
	return p.changed()
}

// moveSplit is `[` (dir −1) and `]` (+1): prefill workers traded for decode workers of the
// same GPUs — one for one when the pools share a layout, else the fewest whole workers of
// each whose GPUs match (one tp4 prefill worker for four tp1 decode workers) — refused
// where a pool would be left empty.
func (p *knobsPane) moveSplit(dir int) tea.Cmd {
	d := &p.knobs.Deployment
	key, pool := "]", "decode"
	if dir < 0 {
		key, pool = "[", "prefill"
	}
	give, take := 1, 1 // prefill workers gained (lost) for decode workers lost (gained)
	if dl := d.DecodeLayout; dl != "" && p.space.LayoutGPUs != nil {
		if pg, dg := p.space.LayoutGPUs(*d, d.Layout), p.space.LayoutGPUs(*d, dl); pg > 0 && dg > 0 {
			g := gcd(pg, dg)
			give, take = dg/g, pg/g
		}
	}
	prefill, decode := d.Prefill+dir*give, d.Replicas-d.Prefill-dir*take
	if prefill < 1 || decode < 1 {
		p.note = fmt.Sprintf("%s: %d prefill + %d decode: the %s pool keeps one worker at least (replicas adds workers)", key, d.Prefill, d.Replicas-d.Prefill, pool)
		return nil
	}
	d.Prefill, d.Replicas = prefill, prefill+decode
	p.note = fmt.Sprintf("%d prefill + %d decode workers", prefill, decode)
	if give != 1 || take != 1 {
		p.note += fmt.Sprintf(" (%d %s for %d %s: the same GPUs)", give, d.Layout, take, d.DecodeLayout)
	}
	return p.changed()
}

// gcd is the greatest common divisor of two positive numbers.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// poolRows are the labels of a fleet's rows with per workers to a row: w0… aggregated,
// else p0… for the prefill pool's first prefill workers and d0… for the decode pool's,
// never a row of both pools.
func poolRows(workers, prefill, per int) []string {
	if prefill <= 0 {
		return workerLabels(workers, per)
	}
	var out []string
	for _, pool := range []struct {
		letter string
		n      int
	}{{"p", prefill}, {"d", workers - prefill}} {
		for _, l := range workerLabels(pool.n, per) {
			out = append(out, pool.letter+l[1:])
		}
	}
	return out
}

// groupPools is group within each pool: a row never mixes prefill and decode workers.
func groupPools(m [][]float64, prefill, per int, agg func([]float64) float64) [][]float64 {
	if prefill <= 0 || prefill >= len(m) {
		return group(m, per, agg)
	}
	return append(group(m[:prefill], per, agg), group(m[prefill:], per, agg)...)
}

// poolGroupSize is how many workers share a row when rows rows are available: the fewest
// that fit both pools' rows.
func poolGroupSize(workers, prefill, rows int) int {
	rows = max(rows, 2)
	for per := 1; ; per++ {
		if (prefill+per-1)/per+(workers-prefill+per-1)/per <= rows {
			return per
		}
	}
}

// disaggLines are the Metrics pane's lines of a disaggregated run: where mean TTFT goes, the
// transfer, and each pool.
func (p *metricsPane) disaggLines() []string {
	st := p.common.Styles
	d := p.cur.Metrics.Disagg
	return []string{
		st.Muted.Render("TTFT = prefill + wait + transfer + 1st"),
		st.Text.Render(fmt.Sprintf("  %s + %s + %s + %s", formatMS(d.PrefillMS), formatMS(d.DecodeWaitMS), formatMS(d.TransferMS), formatMS(d.FirstDecodeMS))),
		st.Text.Render(fmt.Sprintf("KV transfer p95 %s ms · %.2f GB", formatMS(d.TransferP95MS), d.TransferGB)),
		st.Text.Render(fmt.Sprintf("prefill pool %2dw hit %3.0f%% TTFT %3.0f%%", d.Prefill.Workers, 100*d.Prefill.PrefixHit, 100*d.PrefillTTFTShare)),
		st.Text.Render(fmt.Sprintf("decode pool  %2dw TPOT %s ms imb %.2f", d.Decode.Workers, formatMS(d.TPOTMS), d.Decode.Imbalance)),
	}
}

// poolNote is the Fleet pane's legend note of a disaggregated fleet.
func poolNote(f Fleet) [][2]string {
	if f.Prefill <= 0 {
		return nil
	}
	return [][2]string{{fmt.Sprintf("p: prefill pool (%d) · d: decode pool (%d)", f.Prefill, f.Workers()-f.Prefill), "p prefill · d decode"}}
}

// poolTitle is the Fleet pane title's fleet of a run: "8 workers", or "3 prefill + 5 decode".
func poolTitle(f Fleet) string {
	if f.Prefill <= 0 {
		return fmt.Sprintf("%d workers", f.Workers())
	}
	return fmt.Sprintf("%d prefill + %d decode", f.Prefill, f.Workers()-f.Prefill)
}

// poolsLine is the sweep table's line on the selected row of a disaggregated fleet: its
// split, where its TTFT goes and its decode pool's TPOT.
func poolsLine(d *DisaggMetrics) string {
	return fmt.Sprintf("p%d+d%d: prefill %s ms (%.0f%% of TTFT, hit %.0f%%) · KV %s ms, p95 %s · decode TPOT %s ms",
		d.Prefill.Workers, d.Decode.Workers, formatMS(d.PrefillMS), 100*d.PrefillTTFTShare, 100*d.Prefill.PrefixHit,
		formatMS(d.TransferMS), formatMS(d.TransferP95MS), formatMS(d.TPOTMS))
}
