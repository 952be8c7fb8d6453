package tui

import (
	"fmt"
	"math"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/guptarohit/asciigraph"
)

// resultMsg hands the current run's result to the panes that draw it.
type resultMsg struct{ res Result }

// pinMsg pins the current result as the baseline every figure is compared with.
type pinMsg struct{}

// metricsPane shows the summary figures, their change against the pinned baseline and a
// chart of TTFT over simulated time.
type metricsPane struct {
	common        *Common
	cur           *Result // last final result
	base          *Result // pinned baseline
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

func (p *metricsPane) View() string {
	st := p.common.Styles
	if p.cur == nil {
		return st.Muted.Render("waiting for the first run…")
	}
	m, b := p.cur.Metrics, p.base.Metrics
	var lines []string
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
		st.Muted.Render(truncate("baseline: "+p.base.Knobs.String(), metricsTableWidth+1)),
	)
	table := strings.Join(lines, "\n")

	// The chart goes right of the table when there is room, else below it, else the root
	// shows it in the lower half while this pane has focus.
	if w := p.width - metricsTableWidth - 2; w >= 24 && p.height >= 8 {
		return lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.NewStyle().Width(metricsTableWidth+2).Render(table), p.chart(w, p.height))
	}
	if h := p.height - len(lines); h >= 5 && p.width >= 24 {
		return table + "\n" + p.chart(min(p.width, 80), h)
	}
	return table
}

// tableLines is the height of the figures table.
const tableLines = 10

// chartInline reports whether View has room for the chart.
func (p *metricsPane) chartInline() bool {
	return (p.width-metricsTableWidth-2 >= 24 && p.height >= 8) || (p.height-tableLines >= 5 && p.width >= 24)
}

// delta formats the relative change of v against base, coloured by whether it is better.
func (p *metricsPane) delta(v, base float64, higherIsBetter bool, width int) string {
	st := p.common.Styles
	c := relChange(v, base)
	if p.cur == p.base || math.IsNaN(c) {
		return st.Muted.Render(fmt.Sprintf("%*s", width, "·"))
	}
	s := fmt.Sprintf("%*s", width, fmt.Sprintf("%+.1f%%", 100*c))
	switch better := (c < 0) != higherIsBetter; {
	case math.Abs(c) < 0.0005:
		return st.Muted.Render(s)
	case better:
		return st.Better.Render(s)
	default:
		return st.Worse.Render(s)
	}
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
