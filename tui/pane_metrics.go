package tui

import (
	"fmt"
	"math"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/guptarohit/asciigraph"
)

// resultMsg hands the current run's result to the panes that draw it.
type resultMsg struct{ res Result }

// pinMsg pins the current result as the baseline every figure is compared with.
type pinMsg struct{}

// metricsPane shows the summary figures, their change against the pinned baseline and a
// chart of TTFT over simulated time.
type metricsPane struct {
	common *Common
	cur    *Result // last final result
	base   *Result // pinned baseline
	// hide, when set, says why cur is not shown: it is another model's or GPU's, or the
	// run of the knobs failed (the root sets it).
	hide          string
	width, height int
}

func newMetricsPane(c *Common) *metricsPane { return &metricsPane{common: c} }

func (p *metricsPane) Init() tea.Cmd    { return nil }
func (p *metricsPane) SetSize(w, h int) { p.width, p.height = w, h }

func (p *metricsPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case resultMsg:
		if !msg.res.Final {
			return nil
		}
		r := msg.res
		p.cur = &r
		if p.base == nil {
			p.base = &r // the first result is the baseline until `b` pins another
		}
	case pinMsg:
		if p.cur != nil {
			r := *p.cur
			p.base = &r
		}
	}
	return nil
}

const metricsTableWidth = 38

// chartMaxHeight caps the TTFT chart so that spare rows go to the lower pane.
const chartMaxHeight = 18

// table is the figures with their changes against the baseline, and the baseline in full,
// wrapped to the table's width.
func (p *metricsPane) table() []string {
	st := p.common.Styles
	m, b := p.cur.Metrics, p.base.Metrics
	var lines []string
	wrap := func(text string, style lipgloss.Style) {
		wrapped := lipgloss.NewStyle().Width(min(p.width, metricsTableWidth+1)).Render(text)
		for _, l := range strings.Split(wrapped, "\n") {
			lines = append(lines, style.Render(strings.TrimRight(l, " ")))
		}
	}
	if m.Rejected > 0 { // first, where a short pane does not cut it off
		wrap(fmt.Sprintf("%d of %d rejected: %s", m.Rejected, m.Rejected+m.Completed, m.RejectedWhy), st.Warn)
	}
	lines = append(lines, st.Muted.Render(fmt.Sprintf("%-6s %7s %7s %7s %7s", "ms", "mean", "p50", "p90", "p99")))
	row := func(name string, q, bq Quantiles) {
		vals := []float64{q.Mean, q.P50, q.P90, q.P99}
		bases := []float64{bq.Mean, bq.P50, bq.P90, bq.P99}
		var v, d strings.Builder
		fmt.Fprintf(&v, "%-6s", name)
		d.WriteString("      ")
		for i := range vals {
			fmt.Fprintf(&v, " %7s", formatMS(vals[i]))
			d.WriteString(" " + p.delta(vals[i], bases[i], false, 7))
		}
		lines = append(lines, st.Text.Render(v.String()), d.String())
	}
	row("TTFT", m.TTFT, b.TTFT)
	row("TPOT", m.TPOT, b.TPOT)
	row("e2e", m.E2E, b.E2E)
	lines = append(lines,
		st.Text.Render(fmt.Sprintf("%-13s %8.0f", "output tok/s", m.OutputTokS))+" "+p.delta(m.OutputTokS, b.OutputTokS, true, 8),
		st.Text.Render(fmt.Sprintf("%-13s %7.1f%%", "prefix reuse", 100*m.PrefixReuse))+" "+p.delta(m.PrefixReuse, b.PrefixReuse, true, 8),
		st.Text.Render(fmt.Sprintf("%-13s %5.2f ms", "TPOT stall", m.StallMS))+" "+p.delta(m.StallMS, b.StallMS, false, 8)+st.Muted.Render(fmt.Sprintf(" %2.0f%%", 100*m.StallShare)))
	if m.Disagg != nil {
		lines = append(lines, p.disaggLines()...)
		if p.cur.Knobs.Deployment.Conditional {
			lines = append(lines, p.conditionalLine())
		}
	}
	wrap("baseline: "+p.base.Knobs.Against(p.cur.Knobs), st.Muted)
	return lines
}

func (p *metricsPane) View() string {
	st := p.common.Styles
	if p.hide != "" {
		return st.Muted.Render(ansi.Wrap(p.hide, max(1, p.width), " "))
	}
	if p.cur == nil {
		return st.Muted.Render("waiting for the first run…")
	}
	lines := p.table()
	table := strings.Join(lines, "\n")
	// The chart goes right of the table when there is room, else below it, else the root
	// shows it in the lower half while this pane has focus.
	if w := p.width - metricsTableWidth - 2; w >= 24 && p.height >= 8 {
		// The layout caps the pane near chartMaxHeight unless the lower half has no use for
		// more: the chart takes the whole height it is given.
		return lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.NewStyle().Width(metricsTableWidth+2).Render(table), p.chart(w, p.height))
	}
	if h := p.height - len(lines); h >= 5 && p.width >= 24 {
		return table + "\n" + p.chart(min(p.width, 80), min(h, chartMaxHeight))
	}
	return table
}

// tableHeight is the height of the figures table at the pane's width (a baseline that
// differs in more ways wraps onto more lines).
func (p *metricsPane) tableHeight() int {
	if p.cur == nil || p.hide != "" {
		return 10
	}
	return len(p.table())
}

// chartInline reports whether View has room for the chart.
func (p *metricsPane) chartInline() bool {
	return (p.width-metricsTableWidth-2 >= 24 && p.height >= 8) || (p.height-p.tableHeight() >= 5 && p.width >= 24)
}

// delta formats the relative change of v against base, coloured by whether it is better.
func (p *metricsPane) delta(v, base float64, higherIsBetter bool, width int) string {
	st := p.common.Styles
	c := relChange(v, base)
	// The same knobs are the same run (the simulator is deterministic): no change to show,
	// whether the baseline is the first run or a pinned copy of this one.
	if p.cur.Knobs == p.base.Knobs || math.IsNaN(c) {
		return st.Muted.Render(fmt.Sprintf("%*s", width, "·"))
	}
	s := formatPct(c, width)
	switch better := (c < 0) != higherIsBetter; {
	case math.Abs(c) < 0.0005:
		return st.Muted.Render(s)
	case better:
		return st.Better.Render(s)
	default:
		return st.Worse.Render(s)
	}
}

// formatPct is the relative change c right-aligned in width cells, in at most six: one
// decimal below 100 %, whole percents below 10,000 %, then a factor (×123).
func formatPct(c float64, width int) string {
	var s string
	switch pct := 100 * c; {
	case math.IsNaN(c):
		s = "·"
	case math.Abs(pct) < 99.95:
		s = fmt.Sprintf("%+.1f%%", pct)
	case math.Abs(pct) < 9999.5:
		s = fmt.Sprintf("%+.0f%%", pct)
	case 1+c < 99999.5:
		s = fmt.Sprintf("×%.0f", 1+c)
	default:
		s = "≥×1e5"
	}
	return fmt.Sprintf("%*s", width, s)
}

// chart plots mean TTFT per window over simulated time, in a box w×h.
func (p *metricsPane) chart(w, h int) string {
	series := fillGaps(p.cur.TTFTOverTime)
	if len(series) < 2 {
		return ""
	}
	opts := []asciigraph.Option{
		asciigraph.Height(h - 2), asciigraph.Width(w - 9), asciigraph.Precision(0),
		asciigraph.Caption(fmt.Sprintf("TTFT ms over %.0f s simulated", p.cur.SimMS/1000)),
	}
	if p.common.Styles.ChartColor != nil {
		opts = append(opts, asciigraph.SeriesColors(asciigraph.Blue))
	}
	return asciigraph.Plot(series, opts...)
}

// fillGaps carries the last value over NaN windows (no first token in them) so the chart
// draws a continuous line; leading NaNs take the first value.
func fillGaps(s []float64) []float64 {
	out := make([]float64, 0, len(s))
	first := math.NaN()
	for _, v := range s {
		if !math.IsNaN(v) {
			first = v
			break
		}
	}
	if math.IsNaN(first) {
		return nil
	}
	last := first
	for _, v := range s {
		if !math.IsNaN(v) {
			last = v
		}
		out = append(out, last)
	}
	return out
}

func formatMS(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 10000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
