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
	"github.com/charmbracelet/x/ansi"
)

// fleetPane draws two heatmaps, workers × simulated time: load (active KV blocks, queued
// prefill tokens or decoding requests, `v` cycles; a final run's title adds the fleet's
// imbalance, busiest worker ÷ mean) and the windowed prefix-hit ratio. A fleet taller than the
// pane is drawn in groups of consecutive workers, one row each; the load heatmap shares its
// colour scale with the pinned baseline's, so two runs compare on one scale.
type fleetPane struct {
	common        *Common
	res           *Result // latest frame, partial or final
	base          *Result // pinned baseline (the first final result until `b` pins another)
	last          *Result // latest final result, what `b` pins
	view          int     // load heatmap: 0 active blocks, 1 queued prefill tokens, 2 decoding requests
	hide          string  // why res is not shown (another model's or GPU's, or a failed run)
	width, height int
}

func newFleetPane(c *Common) *fleetPane { return &fleetPane{common: c} }

func (p *fleetPane) Init() tea.Cmd { return nil }

// workers is the fleet size of the frame shown (0 before the first).
func (p *fleetPane) workers() int {
	if p.res == nil {
		return 0
	}
	return p.res.Fleet.Workers()
}
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
			p.view = (p.view + 1) % 3
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
	switch p.view {
	case 1:
		return r.Fleet.QueuedPrefill, "load: queued prefill tokens", "tokens"
	case 2:
		return r.Fleet.Decodes, "load: decoding requests", "requests"
	}
	return r.Fleet.ActiveBlocks, "load: active KV blocks", "blocks"
}

// imbalance is the legend's note of a final run's load imbalance over the run (busiest
// worker's mean ÷ the fleet's) for the heatmap shown; ok false when it has none.
func (p *fleetPane) imbalance(r *Result) (note [2]string, ok bool) {
	x := r.Metrics.BlockImbalance
	switch p.view {
	case 1:
		return note, false
	case 2:
		x = r.Metrics.DecodeImbalance
	}
	if !r.Final || x == 0 || r.Fleet.Prefill > 0 { // across two pools of different work it says nothing
		return note, false
	}
	return [2]string{fmt.Sprintf("imbalance %.2f (busiest ÷ mean)", x), fmt.Sprintf("imb %.2f", x)}, true
}

// maxRowLines caps how tall one worker's row grows on a tall screen; lines the fleet cannot
// use go to the upper half (see Model.layout).
const maxRowLines = 4

// minContrast is how many distinct shades the current run's load heatmap must keep on the
// scale it shares with the pinned baseline; with fewer, it draws on its own scale.
const minContrast = 3

func (p *fleetPane) View() string {
	st := p.common.Styles
	if p.hide != "" {
		return st.Muted.Render(ansi.Wrap(p.hide, max(1, p.width), " "))
	}
	if p.res == nil || p.res.Fleet.Workers() == 0 {
		return st.Muted.Render("no snapshots yet")
	}
	f := p.res.Fleet
	per, lines := p.perRow(), p.rowLines()
	half := (p.width - 1) / 2
	labels := poolRows(f.Workers(), f.Prefill, per)
	loadName, loadLegend, load, loadMax := p.loadView(half-labelWidth(labels), half)
	var states [][]byte
	if per == 1 && f.States != nil { // a changing fleet, one worker a row
		states = f.States
		loadLegend = fitLegend(loadLegend, [][2]string{{"s starting · d draining · x failed · blank off", "s d x: start drain fail"}}, half)
	}
	hitName := "prefix-hit ratio per window"
	notes := poolNote(f)
	if per > 1 {
		hitName += " (row mean)"
		notes = append(notes, [2]string{fmt.Sprintf("cell: mean of %d workers", per), fmt.Sprintf("mean of %d", per)})
	}
	if hasNaN(f.HitRatio) {
		notes = append(notes, [2]string{"blank: no admissions", "blank: none"})
	}
	if f.TierHit != nil {
		notes = append(notes, [2]string{tierLabel + ": fleet's share onboarded from KV tiers", tierLabel + ": tiers"})
	}
	hitLegend := fitLegend(fmt.Sprintf("0 %s 1", p.legend()), notes, p.width-1-half)
	left := p.heatmap(loadName, load, states, labels, loadMax, half, lines, loadLegend, nil)
	right := p.heatmap(hitName, groupPools(f.HitRatio, f.Prefill, per, meanOf), nil, labels, 1, p.width-1-half, lines, hitLegend, f.TierHit)
	return lipgloss.JoinHorizontal(lipgloss.Top, left, " ", right)
}

// loadView is the load heatmap of the current frame as drawn into cols columns (width
// cells with its labels): its title, legend, matrix (grouped rows: the group's maximum)
// and the value drawn hottest. The scale comes from the same grouped matrix; it is shared
// with a pinned baseline of other knobs (grouped the same way) only while the current map
// keeps minContrast shades on it.
func (p *fleetPane) loadView(cols, width int) (name, legend string, m [][]float64, scale float64) {
	per := p.perRow()
	raw, name, unit := p.load(p.res)
	m = groupPools(raw, p.res.Fleet.Prefill, per, maxOf)
	scale = heatScale(m)
	var notes [][2]string // long and short wording; the legend takes the longest that fits
	if per > 1 {
		name += " (row max)"
		notes = append(notes, [2]string{fmt.Sprintf("cell: max of %d workers", per), fmt.Sprintf("max of %d", per)})
	}
	if p.base != nil && p.base.Knobs != p.res.Knobs && p.base.Fleet.Workers() > 0 {
		baseRaw, _, _ := p.load(p.base)
		baseScale := heatScale(groupPools(baseRaw, p.base.Fleet.Prefill, p.groupSize(p.base.Fleet), maxOf))
		same := [2]string{"same scale as baseline", "baseline's scale"}
		switch shared := max(scale, baseScale); {
		case shared == scale:
			notes = append(notes, same)
		case shades(m, cols, shared) >= min(minContrast, shades(m, cols, scale)):
			scale = shared
			notes = append(notes, same)
		default:
			notes = append(notes, [2]string{fmt.Sprintf("own scale (baseline's ≥%s would flatten it)", formatCount(baseScale)), "own scale"})
		}
	}
	if n, ok := p.imbalance(p.res); ok { // last: a narrow legend cuts it first
		notes = append(notes, n)
	}
	return name, fitLegend(fmt.Sprintf("0 %s ≥%s %s", p.legend(), formatCount(scale), unit), notes, width), m, scale
}

// fitLegend is head followed by each note, in its long wording where the width allows.
func fitLegend(head string, notes [][2]string, width int) string {
	for long := len(notes); long >= 0; long-- {
		s := head
		for i, n := range notes {
			if i < long {
				s += " · " + n[0]
			} else {
				s += " · " + n[1]
			}
		}
		if lipgloss.Width(s) <= width || long == 0 {
			return s
		}
	}
	return head
}

// level is the shade (0…heatLevels-1) of value v on scale; -1 for NaN (blank).
func level(v, scale float64) int {
	if math.IsNaN(v) {
		return -1
	}
	if scale <= 0 {
		return 0
	}
	return min(heatLevels-1, int(math.Min(1, v/scale)*float64(heatLevels-1)+0.5))
}

// shades counts the distinct shades of m drawn into cols columns on scale.
func shades(m [][]float64, cols int, scale float64) int {
	seen := map[int]bool{}
	for _, row := range m {
		for _, v := range resample(row, cols) {
			if l := level(v, scale); l >= 0 {
				seen[l] = true
			}
		}
	}
	return len(seen)
}

// perRow is how many workers a heatmap row shows: 1 when the fleet fits the pane, else
// groups of consecutive workers (their maximum load, their mean prefix-hit ratio).
func (p *fleetPane) perRow() int {
	if p.res == nil {
		return 1
	}
	return p.groupSize(p.res.Fleet)
}

// chrome is the pane's lines besides the worker rows: fleetChrome, and the KV-tier row
// when the run has one.
func (p *fleetPane) chrome() int {
	if p.res != nil && p.res.Fleet.TierHit != nil {
		return fleetChrome + 1
	}
	return fleetChrome
}

// groupSize is how many of a fleet's workers share a row at the pane's height (a
// disaggregated fleet's pools grouped apart).
func (p *fleetPane) groupSize(f Fleet) int {
	rows := max(1, p.height-p.chrome())
	if f.Prefill > 0 {
		return poolGroupSize(f.Workers(), f.Prefill, rows)
	}
	return max(1, (f.Workers()+rows-1)/rows)
}

// rowLines is how many lines each heatmap row takes: rows grow to fill the pane's height
// (up to maxRowLines) before any workers are grouped.
func (p *fleetPane) rowLines() int {
	if p.res == nil || p.res.Fleet.Workers() == 0 {
		return 1
	}
	rows := len(poolRows(p.res.Fleet.Workers(), p.res.Fleet.Prefill, p.perRow()))
	return max(1, min(maxRowLines, (p.height-p.chrome())/rows))
}

// linesFor is how many lines the pane draws for a fleet of workers at height h: what the
// layout hands back to the upper half when a small fleet cannot use a tall pane.
func linesFor(workers, prefill, h int) int {
	rows := max(1, h-fleetChrome)
	per := max(1, (workers+rows-1)/rows)
	if prefill > 0 {
		per = poolGroupSize(workers, prefill, rows)
	}
	groups := len(poolRows(workers, prefill, per))
	return fleetChrome + groups*max(1, min(maxRowLines, rows/groups))
}

func labelWidth(labels []string) int {
	w := 0
	for _, l := range labels {
		w = max(w, lipgloss.Width(l)+1)
	}
	return w
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
	for l := range heatLevels {
		b.WriteString(p.cell(l))
	}
	return b.String()
}

// cell renders shade l (-1: blank).
func (p *fleetPane) cell(l int) string {
	if l < 0 {
		return " "
	}
	g := string([]rune(heatGlyphs)[l])
	if heat := p.common.Styles.Heat; len(heat) > 0 {
		return heat[min(len(heat)-1, l*(len(heat)-1)/(heatLevels-1))].Render(g)
	}
	return g
}

// tierLabel labels the prefix-hit heatmap's last row with KV tiers on: the fleet's share of
// prompt tokens onboarded from G2 and G3.
const tierLabel = "G2/3"

// heatmap renders one matrix [row][window] into width columns: a title, each row labelled
// and lines tall, a row one line tall of tier (the fleet's KV-tier hit ratio, when not nil),
// the time axis (0 to the simulated time the pane's title names) and the legend. Where
// states (nil: none) says a worker is not serving, its state's letter replaces the shade.
func (p *fleetPane) heatmap(title string, m [][]float64, states [][]byte, labels []string, scale float64, width, lines int, legend string, tier []float64) string {
	st := p.common.Styles
	label := labelWidth(labels)
	if tier != nil {
		label = max(label, lipgloss.Width(tierLabel)+1)
	}
	cols := max(1, width-label)
	windows := 0
	if len(m) > 0 {
		windows = len(m[0])
	}
	out := []string{st.Bold.Render(truncate(title, width))}
	for i, row := range m {
		var b strings.Builder
		var rs []byte
		if states != nil {
			rs = resampleStates(states[i], cols)
		}
		for c, v := range resample(row, cols) {
			if rs != nil && rs[c] != StateServing {
				b.WriteString(p.common.Styles.Muted.Render(string(" dsx"[rs[c]-1])))
				continue
			}
			b.WriteString(p.cell(level(v, scale)))
		}
		for j := range lines {
			name := ""
			if j == 0 {
				name = labels[i]
			}
			out = append(out, st.Muted.Render(name+strings.Repeat(" ", label-lipgloss.Width(name)))+b.String())
		}
	}
	if tier != nil {
		var b strings.Builder
		for _, v := range resample(tier, cols) {
			b.WriteString(p.cell(level(v, scale)))
		}
		out = append(out, st.Muted.Render(tierLabel+strings.Repeat(" ", label-lipgloss.Width(tierLabel)))+b.String())
	}
	end := fmt.Sprintf("%.0fs", p.res.SimMS/1000)
	axis := strings.Repeat(" ", label) + "0s" + strings.Repeat(" ", max(1, min(cols, windows)-2-len(end))) + end
	out = append(out, st.Muted.Render(truncate(axis, width)), st.Muted.Render(truncate(legend, width)))
	return lipgloss.NewStyle().Width(width).Render(strings.Join(out, "\n"))
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

// resampleStates maps a row of window states onto cols columns as resample does, each
// column the most telling state of its windows.
func resampleStates(row []byte, cols int) []byte {
	if len(row) <= cols {
		return row
	}
	out := make([]byte, cols)
	for c := range out {
		for _, s := range row[c*len(row)/cols : (c+1)*len(row)/cols] {
			out[c] = max(out[c], s)
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
