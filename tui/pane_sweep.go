package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/guptarohit/asciigraph"
)

// loadKnobsMsg asks the root to load a sweep row into the knobs and re-run.
type loadKnobsMsg struct{ knobs Knobs }

// sweepRow is one distinct evaluated configuration with n, the simulation runs (trials)
// averaged into its value.
type sweepRow struct {
	knobs Knobs
	value float64 // mean objective over its trials
	n     int
}

type sweepPhase int

const (
	sweepIdle sweepPhase = iota
	sweepSearching
	sweepValidating
	sweepDone
	sweepCancelled
	sweepFailed
)

// sweepPane runs the smart sweep in the background and shows it live: rounds, the table of
// evaluated configurations best first, the best-so-far chart, then the validation table.
type sweepPane struct {
	common  *Common
	sweeper Sweeper // nil: no sweep available
	info    SweepInfo

	gen    uint64 // generation of the running sweep; older events are dropped
	cancel context.CancelFunc
	phase  sweepPhase
	err    error

	round      int
	evals      int
	rows       []sweepRow
	bestSoFar  []float64
	validation []ValidationRow
	cursor     int
	picked     bool // the user moved the cursor: it follows its row as the table re-sorts

	width, height int
}

func newSweepPane(c *Common, s Sweeper, info SweepInfo) *sweepPane {
	return &sweepPane{common: c, sweeper: s, info: info}
}

func (p *sweepPane) Init() tea.Cmd    { return nil }
func (p *sweepPane) SetSize(w, h int) { p.width, p.height = w, h }

func (p *sweepPane) running() bool { return p.phase == sweepSearching || p.phase == sweepValidating }

func (p *sweepPane) canStart() bool { return p.sweeper != nil && !p.running() }

// start begins a new sweep, forgetting the previous one.
func (p *sweepPane) start() tea.Cmd {
	if !p.canStart() {
		return nil
	}
	p.gen++
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.phase, p.err = sweepSearching, nil
	p.round, p.evals, p.rows, p.bestSoFar, p.validation, p.cursor, p.picked = 0, 0, nil, nil, nil, 0, false
	sw := p.sweeper
	return stream(ctx, p.gen, func(ctx context.Context, emit func(SweepEvent, bool)) error {
		return sw.Sweep(ctx, func(ev SweepEvent) { emit(ev, false) })
	})
}

// stop cancels a running sweep; what finished stays on screen.
func (p *sweepPane) stop() {
	if p.running() {
		p.cancel()
		p.phase = sweepCancelled
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
			p.cancel()
			switch {
			case msg.err != nil && !errors.Is(msg.err, context.Canceled):
				p.phase, p.err = sweepFailed, msg.err
			default:
				p.phase = sweepDone
			}
			return nil
		}
		p.apply(msg.item)
		return waitStream(msg.next)
	case tea.KeyPressMsg:
		keys := p.common.Keys
		switch {
		case key.Matches(msg, keys.RowUp):
			p.cursor, p.picked = max(0, p.cursor-1), true
		case key.Matches(msg, keys.RowDown):
			p.cursor, p.picked = max(0, min(len(p.rows)-1, p.cursor+1)), true
		case key.Matches(msg, keys.Load):
			if p.cursor < len(p.rows) {
				k := p.rows[p.cursor].knobs
				return func() tea.Msg { return loadKnobsMsg{k} }
			}
		}
	}
	return nil
}

func (p *sweepPane) apply(ev SweepEvent) {
	switch ev.Kind {
	case SweepEvaluated:
		e := ev.Eval
		runs := max(1, e.Runs)
		p.evals++
		p.round = max(p.round, e.Round)
		found := false
		for i := range p.rows {
			if p.rows[i].knobs == e.Knobs {
				r := &p.rows[i]
				r.value = (r.value*float64(r.n) + e.Value*float64(runs)) / float64(r.n+runs)
				r.n += runs
				found = true
			}
		}
		if !found {
			p.rows = append(p.rows, sweepRow{knobs: e.Knobs, value: e.Value, n: runs})
		}
		var selected Knobs
		if p.cursor < len(p.rows) {
			selected = p.rows[p.cursor].knobs
		}
		sort.SliceStable(p.rows, func(i, j int) bool { return p.better(p.rows[i].value, p.rows[j].value) })
		for i := range p.rows {
			if p.picked && p.rows[i].knobs == selected {
				p.cursor = i
			}
		}
		best := p.rows[0].value
		if len(p.bestSoFar) > 0 && !p.better(best, p.bestSoFar[len(p.bestSoFar)-1]) {
			best = p.bestSoFar[len(p.bestSoFar)-1]
		}
		p.bestSoFar = append(p.bestSoFar, best)
	case SweepValidating:
		p.phase = sweepValidating
	case SweepValidated:
		p.validation = ev.Validation
		p.phase = sweepDone // validation is the sweep's last step
	}
}

func (p *sweepPane) status() string {
	st := p.common.Styles
	rounds := fmt.Sprintf("round %d/%d · %d evaluated", max(1, p.round), p.info.Rounds, p.evals)
	switch p.phase {
	case sweepIdle:
		if p.sweeper == nil {
			return st.Muted.Render("no sweep available for this experiment")
		}
		return st.Muted.Render(fmt.Sprintf("press s to search the router knobs (%d rounds × %d, objective %s)",
			p.info.Rounds, p.info.PerRound, p.info.Objective))
	case sweepSearching:
		return st.Warn.Render("searching: " + rounds + " · esc cancels")
	case sweepValidating:
		return st.Warn.Render(fmt.Sprintf("validating on the full trace · %d evaluated · esc cancels", p.evals))
	case sweepCancelled:
		return st.Warn.Render("cancelled · " + rounds)
	case sweepFailed:
		return st.Worse.Render("sweep failed: " + p.err.Error())
	default:
		return st.Better.Render(fmt.Sprintf("done · %d evaluations · enter loads a row", p.evals))
	}
}

const sweepTableWidth = 45

func (p *sweepPane) View() string {
	st := p.common.Styles
	lines := []string{truncate(p.status(), p.width)}
	rowsShown := max(1, p.height-2)
	first := 0
	if p.cursor >= rowsShown {
		first = p.cursor - rowsShown + 1
	}
	var table []string
	if len(p.rows) > 0 {
		table = append(table, st.Muted.Render(fmt.Sprintf("  %-12s %5s %5s %4s %9s %3s", "router_mode", "cred", "scale", "T", p.info.Objective, "n")))
	}
	for i := first; i < len(p.rows) && i < first+rowsShown; i++ {
		r := p.rows[i]
		cred, scale, temp := "–", "–", "–"
		if r.knobs.KVKnobsApply() {
			cred, scale, temp = formatNum(r.knobs.Credit), formatNum(r.knobs.Scale), formatNum(r.knobs.Temperature)
		}
		line := fmt.Sprintf("%-12s %5s %5s %4s %9s %3d", r.knobs.Mode, cred, scale, temp, formatMS(r.value), r.n)
		if i == p.cursor {
			line = st.Selected.Render("▸ " + line)
		} else {
			line = st.Text.Render("  " + line)
		}
		table = append(table, line)
	}
	left := strings.Join(table, "\n")
	rightW := p.width - sweepTableWidth - 1
	var right string
	switch {
	case rightW < 20:
	case len(p.validation) > 0:
		right = p.validationView(rightW)
	case len(p.bestSoFar) >= 2:
		right = asciigraph.Plot(p.bestSoFar, asciigraph.Height(max(2, p.height-4)), asciigraph.Width(max(4, rightW-10)),
			asciigraph.Precision(0), asciigraph.Caption("best "+p.info.Objective+" by evaluation"))
	}
	body := left
	if right != "" {
		body = lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.NewStyle().Width(sweepTableWidth+1).Render(left), right)
	}
	return strings.Join(append(lines, body), "\n")
}

// validationView is the full-trace table, compact enough for the pane's right column: the
// TTFT column goes first when the column is narrow.
func (p *sweepPane) validationView(w int) string {
	st := p.common.Styles
	withTTFT := w >= 44
	head := fmt.Sprintf("%-11s %8s %6s", "", "e2e ms", "reuse")
	if withTTFT {
		head = fmt.Sprintf("%-11s %8s %8s %6s", "", "e2e ms", "TTFT ms", "reuse")
	}
	lines := []string{st.Bold.Render(truncate("full-trace validation", w)), st.Muted.Render(truncate(head, w))}
	var ref *Metrics
	for i := range p.validation {
		if p.validation[i].Name == "default_kv" {
			ref = &p.validation[i].Metrics
		}
	}
	for _, v := range p.validation {
		line := fmt.Sprintf("%-11s %8s", truncate(v.Name, 11), formatMS(v.Metrics.E2E.Mean))
		if withTTFT {
			line += fmt.Sprintf(" %8s", formatMS(v.Metrics.TTFT.Mean))
		}
		line += fmt.Sprintf(" %5.1f%%", 100*v.Metrics.PrefixReuse)
		if ref != nil && v.Name == "best" {
			if c := relChange(v.Metrics.E2E.Mean, ref.E2E.Mean); !math.IsNaN(c) {
				line += fmt.Sprintf(" %+.1f%%", 100*c)
			}
		}
		lines = append(lines, truncate(line, w))
	}
	return strings.Join(lines, "\n")
}
