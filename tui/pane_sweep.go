package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/guptarohit/asciigraph"

	"github.com/routerlab/routerlab/sweep"
)

// loadRowMsg asks the root to load a sweep row into the knobs and re-run: its router knobs,
// and its concurrency and deployment too when the sweep ran on another fleet.
type loadRowMsg struct{ row Knobs }

// sweepRow is one distinct evaluated configuration with n, the simulation runs (trials)
// averaged into its value.
type sweepRow struct {
	knobs Knobs
	value float64 // mean objective over its trials
	n     int
	pools *DisaggMetrics // a disaggregated fleet's, from its latest evaluation
}

type sweepState int

const (
	sweepIdle sweepState = iota
	sweepRunning
	sweepDone
	sweepCancelled
	sweepFailed
)

// sweepPane runs the smart sweep in the background and shows it live: its phase with counts,
// the table of evaluated configurations best first, the best-so-far chart, then the
// validation table.
type sweepPane struct {
	common  *Common
	sweeper Sweeper // nil: no sweep available
	info    SweepInfo

	gen      uint64                  // generation of the running sweep; older events are dropped
	cancel   context.CancelCauseFunc // the cause is what the sweep's progress.json records
	state    sweepState
	progress sweep.Progress
	err      error
	knobs    Knobs  // the explorer's knobs now: what a sweep started now would search at
	at       Knobs  // the knobs the shown sweep started at
	dir      string // the shown sweep's run directory ("" in memory)
	note     string // what its follower last said of it (e.g. the writer is gone)
	followed bool   // the sweep is followed from a run directory (routerlab watch)

	evals      int
	landed     []SweepEval // the evaluations so far, by evaluation index (round, candidate)
	rows       []sweepRow
	bestSoFar  []float64
	validation []ValidationRow
	cursor     int
	// chosen is the configuration the user loaded with enter: the cursor follows it as the
	// table re-sorts. Otherwise the cursor stays on its row index.
	chosen *Knobs

	width, height int
}

func newSweepPane(c *Common, s Sweeper, info SweepInfo, knobs Knobs) *sweepPane {
	return &sweepPane{common: c, sweeper: s, info: info, knobs: knobs}
}

func (p *sweepPane) Init() tea.Cmd    { return nil }
func (p *sweepPane) SetSize(w, h int) { p.width, p.height = w, h }

func (p *sweepPane) running() bool { return p.state == sweepRunning }

func (p *sweepPane) canStart() bool { return p.sweeper != nil && !p.running() }

// start begins a new sweep at the current knobs, forgetting the previous one.
func (p *sweepPane) start() tea.Cmd {
	if !p.canStart() {
		return nil
	}
	p.gen++
	ctx, cancel := context.WithCancelCause(context.Background())
	p.cancel = cancel
	p.state, p.err, p.at, p.dir, p.note = sweepRunning, nil, p.knobs, "", ""
	p.progress = sweep.Progress{Phase: sweep.PhaseSearch, Round: 1, Rounds: p.info.Rounds, Total: p.info.Rounds * p.info.PerRound}
	if p.followed { // followed from a run directory: nothing known until its first record
		p.progress = sweep.Progress{}
	}
	p.evals, p.landed, p.rows, p.bestSoFar, p.validation, p.cursor, p.chosen = 0, nil, nil, nil, nil, 0, nil
	sw, at := p.sweeper, p.at
	return stream(ctx, p.gen, func(ctx context.Context, emit func(SweepEvent, bool)) error {
		return sw.Sweep(ctx, at, func(ev SweepEvent) { emit(ev, false) })
	})
}

// leave stops following a sweep that runs elsewhere; the screen keeps what it showed.
func (p *sweepPane) leave() {
	if p.running() {
		p.gen++ // what the follow still delivers is dropped: it would read as the sweep's end
		p.cancel(errStoppedHere)
	}
}

// errStoppedHere is why a sweep stopped from the explorer stopped (esc, quit, detach).
var errStoppedHere = errors.New("cancelled in the explorer")

// stop cancels a running sweep; what finished stays on screen.
func (p *sweepPane) stop() {
	if p.running() {
		p.cancel(errStoppedHere)
		p.state, p.progress = sweepCancelled, p.progress.Cancelled()
	}
}

func (p *sweepPane) better(a, b float64) bool {
	if p.info.HigherIsBetter {
		return a > b
	}
	return a < b
}

func (p *sweepPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case streamMsg[SweepEvent]:
		if msg.gen != p.gen || !p.running() {
			return nil // a cancelled or replaced sweep
		}
		if msg.done {
			p.cancel(nil)
			switch {
			case errors.Is(msg.err, ErrSweepCancelled):
				p.state, p.progress = sweepCancelled, p.progress.Cancelled()
			case msg.err != nil && !errors.Is(msg.err, context.Canceled):
				p.state, p.err = sweepFailed, msg.err
			default:
				p.state = sweepDone
			}
			return nil
		}
		p.apply(msg.item)
		return waitStream(msg.next)
	case tea.KeyPressMsg:
		keys := p.common.Keys
		switch {
		case key.Matches(msg, keys.RowUp):
			p.cursor, p.chosen = max(0, p.cursor-1), nil
		case key.Matches(msg, keys.RowDown):
			p.cursor, p.chosen = max(0, min(len(p.rows)-1, p.cursor+1)), nil
		case key.Matches(msg, keys.Load):
			if p.cursor < len(p.rows) {
				k := p.rows[p.cursor].knobs
				p.chosen = &k
				return func() tea.Msg { return loadRowMsg{k} }
			}
		}
	}
	return nil
}

func (p *sweepPane) apply(ev SweepEvent) {
	p.progress = ev.Progress
	if ev.Dir != "" {
		p.dir = ev.Dir
	}
	p.note = ev.Note
	if ev.Info != nil {
		p.info = *ev.Info
	}
	if ev.Validation != nil {
		p.validation = ev.Validation
	}
	e := ev.Eval
	if e == nil {
		return
	}
	p.evals++
	// Parallel evaluations land in whatever order they finish: the table and the chart are
	// rebuilt in evaluation order, so they do not depend on it.
	at, _ := slices.BinarySearchFunc(p.landed, *e, func(a, b SweepEval) int {
		return cmp.Or(cmp.Compare(a.Round, b.Round), cmp.Compare(a.Candidate, b.Candidate))
	})
	p.landed = slices.Insert(p.landed, at, *e)
	p.rows, p.bestSoFar = p.rows[:0], p.bestSoFar[:0]
	for _, e := range p.landed {
		p.add(e)
	}
	sort.SliceStable(p.rows, func(i, j int) bool { return p.better(p.rows[i].value, p.rows[j].value) })
	for i := range p.rows {
		if p.chosen != nil && p.rows[i].knobs == *p.chosen {
			p.cursor = i
		}
	}
}

// add folds evaluation e into the rows (a configuration evaluated again is averaged over all
// its runs) and extends the best-so-far chart by the best row after it.
func (p *sweepPane) add(e SweepEval) {
	runs := max(1, e.Runs)
	found := false
	for i := range p.rows {
		if p.rows[i].knobs == e.Knobs {
			r := &p.rows[i]
			r.value = (r.value*float64(r.n) + e.Value*float64(runs)) / float64(r.n+runs)
			r.n += runs
			r.pools = cmp.Or(e.Pools, r.pools)
			found = true
		}
	}
	if !found {
		p.rows = append(p.rows, sweepRow{knobs: e.Knobs, value: e.Value, n: runs, pools: e.Pools})
	}
	best := p.rows[0].value
	for _, r := range p.rows[1:] {
		if p.better(r.value, best) {
			best = r.value
		}
	}
	if len(p.bestSoFar) > 0 && !p.better(best, p.bestSoFar[len(p.bestSoFar)-1]) {
		best = p.bestSoFar[len(p.bestSoFar)-1]
	}
	p.bestSoFar = append(p.bestSoFar, best)
}

// winner names the best configuration so far ("" before the first evaluation): "winner"
// once the sweep is done, "best so far" while it runs or after it stopped early.
func (p *sweepPane) winner() string {
	if len(p.rows) == 0 {
		return ""
	}
	r := p.rows[0]
	s := "best so far "
	if p.state == sweepDone {
		s = "winner "
	}
	s += r.knobs.Mode
	if r.knobs.KVKnobsApply() {
		s += fmt.Sprintf(" credit %s scale %s T %s", formatNum(r.knobs.Credit), formatNum(r.knobs.Scale), formatNum(r.knobs.Temperature))
	}
	return s + fmt.Sprintf(" · %s %s", formatMS(r.value), p.info.Objective)
}

// status is the sweep's phase with its counts: search round r/R and evaluations k/N,
// saturation k/n, validation k/3, then done with the stop reason.
func (p *sweepPane) status() string {
	st := p.common.Styles
	pr := p.progress
	switch p.state {
	case sweepIdle:
		if p.sweeper == nil {
			return st.Muted.Render("no sweep available for this experiment")
		}
		if !p.common.Keys.StartSweep.Enabled() { // a viewer of routerlab serve
			return st.Muted.Render("operators start sweeps; tab to the Sweeps pane and press enter to watch one")
		}
		return st.Muted.Render(fmt.Sprintf("press s to search (%d rounds × %d, objective %s): %s",
			p.info.Rounds, p.info.PerRound, p.info.Objective, strings.Join(p.info.Dims, ", ")))
	case sweepFailed:
		return st.Worse.Render("sweep failed: " + p.err.Error())
	case sweepCancelled:
		return st.Warn.Render(fmt.Sprintf("cancelled · %d evaluations", p.evals))
	case sweepDone:
		return st.Better.Render(fmt.Sprintf("done · %d evaluations · %s", p.evals, pr.Stop))
	}
	var s string
	switch pr.Phase {
	case "":
		s = "waiting for the sweep's first progress record"
	case sweep.PhaseInterrupted, sweep.PhaseFailed:
		s = pr.String() + " · its ledger keeps the finished evaluations for --resume"
	case sweep.PhaseSaturation:
		s = pr.String() + " · prefill_load_scale at the winner's other knobs"
	case sweep.PhaseValidation:
		s = fmt.Sprintf("%s · round_robin, default_kv, best on %d requests", pr, p.info.ValidationRequests)
	default:
		s = pr.String()
	}
	if p.note != "" {
		s += " · " + p.note
	}
	if p.common.Keys.CancelSweep.Enabled() { // not for viewers and watchers
		s += " · esc cancels"
	}
	return st.Warn.Render(s)
}

// scope says what the sweep searches at: the concurrency, requests and deployment of the
// knobs it started at (idle: the knobs now).
func (p *sweepPane) scope() string {
	k := p.at
	if p.state == sweepIdle {
		k = p.knobs
	}
	s := fmt.Sprintf("at c=%d · %d requests · %s", k.Concurrency, p.info.Requests, k.Deployment)
	if k == (Knobs{}) { // followed from a run directory: the writer's settings, as its ledger states them
		s = p.info.Scope
	}
	if p.dir != "" && p.state != sweepIdle {
		s += " → " + p.dir
	}
	return p.common.Styles.Muted.Render(s)
}

const sweepTableWidth = 43

// tableLine is one line of the sweep table: a row (index, best first), or a marker of
// more rows scrolled away above or below.
type tableLine struct {
	row   int // -1: a marker
	more  int
	above bool
}

// tableWindow is which rows of an n-row table, best first, fit in room lines with the
// cursor on screen. The winner (row 0) is always shown; rows scrolled away are counted by
// a marker line: those between the winner and the window after the winner, those below at
// the end.
func tableWindow(n, cursor, room int) []tableLine {
	var out []tableLine
	rows := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out = append(out, tableLine{row: i})
		}
	}
	switch {
	case n <= room:
		rows(0, n)
	case room < 4: // no room for markers: the cursor's row alone
		rows(cursor, cursor+1)
	case cursor < room-1: // the top of the table, then a marker of the rest
		rows(0, room-1)
		out = append(out, tableLine{row: -1, more: n - (room - 1)})
	default:
		// The winner, a marker, then a window ending on the cursor or, near the end, the last
		// row (no marker below: one more row).
		w := room - 3
		first := cursor - w + 1
		if first+w >= n-1 {
			w = room - 2
			first = n - w
		}
		rows(0, 1)
		out = append(out, tableLine{row: -1, more: first - 1, above: true})
		rows(first, first+w)
		if below := n - (first + w); below > 0 {
			out = append(out, tableLine{row: -1, more: below})
		}
	}
	return out
}

func (p *sweepPane) View() string {
	st := p.common.Styles
	lines := []string{truncate(p.status(), p.width), truncate(p.scope(), p.width)}
	if p.cursor < len(p.rows) && p.rows[p.cursor].pools != nil {
		lines = append(lines, st.Text.Render(truncate(poolsLine(p.rows[p.cursor].pools), p.width)))
	}
	var table []string
	if len(p.rows) > 0 {
		table = append(table, st.Muted.Render(fmt.Sprintf("  %-12s %4s %5s %3s %8s %4s", "router_mode", "cred", "scale", "T", p.info.Objective, "runs")))
	}
	for _, tl := range tableWindow(len(p.rows), p.cursor, max(1, p.height-len(lines)-1)) {
		if tl.row < 0 {
			arrow := "↓"
			if tl.above {
				arrow = "↑"
			}
			table = append(table, st.Muted.Render(fmt.Sprintf("  %s %d more", arrow, tl.more)))
			continue
		}
		i := tl.row
		r := p.rows[i]
		cred, scale, temp := "–", "–", "–"
		if r.knobs.KVKnobsApply() {
			cred, scale, temp = formatNum(r.knobs.Credit), formatNum(r.knobs.Scale), formatNum(r.knobs.Temperature)
		}
		line := fmt.Sprintf("%-12s %4s %5s %3s %8s %4d", r.knobs.Mode, cred, scale, temp, formatMS(r.value), r.n)
		if i == p.cursor {
			line = st.Selected.Render("▸ " + line)
		} else {
			line = st.Text.Render("  " + line)
		}
		table = append(table, line)
	}
	left := strings.Join(table, "\n")
	rightW := p.width - sweepTableWidth - 1
	bodyH := p.height - len(lines)
	var right []string
	if rightW >= 20 {
		if len(p.validation) > 0 {
			right = append(right, p.validationView(rightW)...)
		}
		// The convergence chart stays under the validation when there is room for it.
		if h := min(bodyH-len(right), chartMaxHeight); len(p.bestSoFar) >= 2 && h >= 5 {
			if len(right) > 0 {
				right = append(right, "")
				h--
			}
			right = append(right, asciigraph.Plot(p.bestSoFar, asciigraph.Height(h-2), asciigraph.Width(max(4, rightW-10)),
				asciigraph.Precision(0), asciigraph.Caption("best "+p.info.Objective+" by evaluation")))
		}
	}
	body := left
	if len(right) > 0 {
		body = lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.NewStyle().Width(sweepTableWidth+1).Render(left), strings.Join(right, "\n"))
	}
	return strings.Join(append(lines, body), "\n")
}

// validationView is the full-trace table, compact enough for the pane's right column: the
// TTFT column is left out when the column is narrow. The last column is the e2e change
// against default_kv.
func (p *sweepPane) validationView(w int) []string {
	st := p.common.Styles
	withTTFT := w >= 44
	head := fmt.Sprintf("%-11s %7s %6s %7s", "", "e2e ms", "reuse", "Δ e2e")
	if withTTFT {
		head = fmt.Sprintf("%-11s %7s %7s %6s %7s", "", "e2e ms", "TTFT ms", "reuse", "Δ e2e")
	}
	lines := []string{st.Bold.Render(truncate(fmt.Sprintf("validation on %d requests", p.info.ValidationRequests), w)),
		st.Muted.Render(truncate(head, w))}
	var ref *Metrics
	for i := range p.validation {
		if p.validation[i].Name == "default_kv" {
			ref = &p.validation[i].Metrics
		}
	}
	for _, v := range p.validation {
		line := fmt.Sprintf("%-11s %7s", truncate(v.Name, 11), formatMS(v.Metrics.E2E.Mean))
		if withTTFT {
			line += fmt.Sprintf(" %7s", formatMS(v.Metrics.TTFT.Mean))
		}
		line += fmt.Sprintf(" %5.1f%%", 100*v.Metrics.PrefixReuse)
		if ref != nil && v.Name != "default_kv" {
			line += " " + formatPct(relChange(v.Metrics.E2E.Mean, ref.E2E.Mean), 7)
		}
		lines = append(lines, truncate(line, w))
	}
	return append(lines, st.Muted.Render(truncate("Δ e2e: mean e2e against default_kv", w)))
}
