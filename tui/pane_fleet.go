package tui

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// fleetPane draws two heatmaps, workers × simulated time: load (active KV blocks or queued
// prefill tokens, `v` switches) and the windowed prefix-hit ratio. A fleet taller than the
// pane is drawn in groups of consecutive workers, one row each; the load heatmap shares its
// colour scale with the pinned baseline's, so two runs compare on one scale.
type fleetPane struct {
	common        *Common
	res           *Result // latest frame, partial or final
	base          *Result // pinned baseline (the first final result until `b` pins another)
	last          *Result // latest final result, what `b` pins
	queued        bool    // load heatmap shows queued prefill tokens instead of active blocks
	width, height int
}

func newFleetPane(c *Common) *fleetPane { return &fleetPane{common: c} }

func (p *fleetPane) Init() tea.Cmd    { return nil }
func (p *fleetPane) SetSize(w, h int) { p.width, p.height = w, h }

func (p *fleetPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case resultMsg:
		r := msg.res
		p.res = &r
		if r.Final {
			p.last = &r
			if p.base == nil {
				p.base = &r
			}
		}
	case pinMsg:
		p.base = p.last
	case tea.KeyPressMsg:
		if key.Matches(msg, p.common.Keys.LoadView) {
			p.queued = !p.queued
		}
	}
	return nil
}

// heatGlyphs shade a cell from cold to hot, so the heatmaps read without colour too.
const heatGlyphs = "·░▒▓█"

const heatLevels = 5 // runes in heatGlyphs

// fleetChrome is the pane's lines besides the worker rows: heatmap title, time axis, legend.
const fleetChrome = 3

// load is the load matrix the pane shows of r, with its name and unit.
func (p *fleetPane) load(r *Result) ([][]float64, string, string) {
	if p.queued {
		return r.Fleet.QueuedPrefill, "load: queued prefill tokens", "tokens"
	}
	return r.Fleet.ActiveBlocks, "load: active KV blocks", "blocks"
}

func (p *fleetPane) View() string {
	st := p.common.Styles
	if p.res == nil || p.res.Fleet.Workers() == 0 {
		return st.Muted.Render("no snapshots yet")
	}
	f := p.res.Fleet
	load, loadName, loadUnit := p.load(p.res)
	loadMax := heatScale(load)
	shared := ""
	if p.base != nil && p.base != p.last {
		baseLoad, _, _ := p.load(p.base)
		loadMax = max(loadMax, heatScale(baseLoad))
		shared = " · same scale as baseline"
	}
	per := p.perRow()
	hitName := "prefix-hit ratio per window"
	if per > 1 {
		loadName += " (row max)"
		hitName += " (row mean)"
	}
	labels := workerLabels(f.Workers(), per)
	half := (p.width - 1) / 2
	left := p.heatmap(loadName, group(load, per, maxOf), labels, loadMax, half,
		fmt.Sprintf("0 %s ≥%s %s%s", p.legend(), formatCount(loadMax), loadUnit, shared))
	hitLegend := fmt.Sprintf("0 %s 1", p.legend())
	if hasNaN(f.HitRatio) {
		hitLegend += "   blank: no admissions"
	}
	right := p.heatmap(hitName, group(f.HitRatio, per, meanOf), labels, 1, p.width-1-half, hitLegend)
	return lipgloss.JoinHorizontal(lipgloss.Top, left, " ", right)
}

// perRow is how many workers a heatmap row shows: 1 when the fleet fits the pane, else
// groups of consecutive workers (their maximum load, their mean prefix-hit ratio).
func (p *fleetPane) perRow() int {
	if p.res == nil {
		return 1
	}
	rows := max(1, p.height-fleetChrome)
	return max(1, (p.res.Fleet.Workers()+rows-1)/rows)
}

// workerLabels names the rows of workers grouped per to a row: w3, or w8–15.
func workerLabels(workers, per int) []string {
	var out []string
	for lo := 0; lo < workers; lo += per {
		hi := min(workers, lo+per) - 1
		if lo == hi {
			out = append(out, fmt.Sprintf("w%d", lo))
		} else {
			out = append(out, fmt.Sprintf("w%d–%d", lo, hi))
		}
	}
	return out
}

// group folds each run of per consecutive rows into one, window by window, with agg over
// the values that are not NaN (NaN when none is).
func group(m [][]float64, per int, agg func([]float64) float64) [][]float64 {
	if per <= 1 {
		return m
	}
	var out [][]float64
	for lo := 0; lo < len(m); lo += per {
		rows := m[lo:min(len(m), lo+per)]
		g := make([]float64, len(rows[0]))
		vals := make([]float64, 0, len(rows))
		for c := range g {
			vals = vals[:0]
			for _, r := range rows {
				if c < len(r) && !math.IsNaN(r[c]) {
					vals = append(vals, r[c])
				}
			}
			g[c] = math.NaN()
			if len(vals) > 0 {
				g[c] = agg(vals)
			}
		}
		out = append(out, g)
	}
	return out
}

func maxOf(v []float64) float64 { return slices.Max(v) }

func meanOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func (p *fleetPane) legend() string {
	var b strings.Builder
	for i := range heatLevels {
		b.WriteString(p.cell(float64(i) / float64(heatLevels-1)))
	}
	return b.String()
}

// cell renders one value in [0,1] (NaN: blank).
func (p *fleetPane) cell(v float64) string {
	if math.IsNaN(v) {
		return " "
	}
	g := string([]rune(heatGlyphs)[min(heatLevels-1, int(v*float64(heatLevels-1)+0.5))])
	if heat := p.common.Styles.Heat; len(heat) > 0 {
		return heat[min(len(heat)-1, int(v*float64(len(heat)-1)+0.5))].Render(g)
	}
	return g
}

// heatmap renders one matrix [row][window] into width columns: a title, one labelled line
// per row, the time axis and the legend.
func (p *fleetPane) heatmap(title string, m [][]float64, labels []string, scale float64, width int, legend string) string {
	st := p.common.Styles
	label := 0
	for _, l := range labels {
		label = max(label, lipgloss.Width(l)+1)
	}
	cols := max(1, width-label)
	windows := 0
	if len(m) > 0 {
		windows = len(m[0])
	}
	lines := []string{st.Bold.Render(truncate(title, width))}
	for i, row := range m {
		var b strings.Builder
		b.WriteString(st.Muted.Render(labels[i] + strings.Repeat(" ", label-lipgloss.Width(labels[i]))))
		for _, v := range resample(row, cols) {
			if scale > 0 && !math.IsNaN(v) {
				v = math.Min(1, v/scale)
			} else if !math.IsNaN(v) {
				v = 0
			}
			b.WriteString(p.cell(v))
		}
		lines = append(lines, b.String())
	}
	simS := float64(windows) * p.res.Fleet.WindowMS / 1000
	end := fmt.Sprintf("%.0fs", simS)
	axis := strings.Repeat(" ", label) + "0s" + strings.Repeat(" ", max(1, min(cols, windows)-2-len(end))) + end
	lines = append(lines, st.Muted.Render(truncate(axis, width)), st.Muted.Render(truncate(legend, width)))
	return lipgloss.NewStyle().Width(width).Render(strings.Join(lines, "\n"))
}

// resample maps a row of windows onto cols columns: each column averages the windows it
// covers (NaNs skipped); with fewer windows than columns, the row is drawn at its own length.
func resample(row []float64, cols int) []float64 {
	if len(row) <= cols {
		return row
	}
	out := make([]float64, cols)
	for c := range out {
		lo, hi := c*len(row)/cols, (c+1)*len(row)/cols
		sum, n := 0.0, 0
		for _, v := range row[lo:hi] {
			if !math.IsNaN(v) {
				sum += v
				n++
			}
		}
		out[c] = math.NaN()
		if n > 0 {
			out[c] = sum / float64(n)
		}
	}
	return out
}

// heatScale is the value drawn hottest: the 98th percentile of the matrix, so one burst does
// not wash out every other cell (cells above it are drawn hottest too).
func heatScale(m [][]float64) float64 {
	var vals []float64
	for _, row := range m {
		for _, v := range row {
			if !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
	}
	if len(vals) == 0 {
		return 0
	}
	sort.Float64s(vals)
	return vals[int(0.98*float64(len(vals)-1))]
}

func hasNaN(m [][]float64) bool {
	for _, row := range m {
		for _, v := range row {
			if math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

func formatCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

func truncate(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && lipgloss.Width(string(r)) > w-1 {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}
