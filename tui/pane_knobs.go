package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// knobsChangedMsg tells the root that the knobs moved and a new run is due.
type knobsChangedMsg struct{ knobs Knobs }

// knobsPane lists the knobs and steps the selected one through the space.
type knobsPane struct {
	common        *Common
	space         Space
	knobs         Knobs
	cursor        knob
	loadGroup     bool // the load-and-admission rows are shown (knobgroups.go)
	width, height int
	// note is what the last ←/→ did when that is not plain (a list's end, a layout moved
	// for another model or GPU); the root shows it on the status line.
	note string
	// asked is the deployment as last chosen by hand: a model or GPU change starts from its
	// GPU and layout.
	asked Deployment
}

// rows are the knob rows of the group shown.
func (p *knobsPane) rows() []knob {
	if p.loadGroup {
		return p.space.loadRows(p.knobs)
	}
	return p.space.knobs(p.knobs)
}

// switchGroup shows the other group of knobs, the cursor on its first row.
func (p *knobsPane) switchGroup() {
	p.loadGroup = !p.loadGroup
	p.cursor = knobGroup // the first row of the load group, the last of the other
}

func newKnobsPane(c *Common, space Space, initial Knobs) *knobsPane {
	return &knobsPane{common: c, space: space, knobs: initial, asked: initial.Deployment}
}

func (p *knobsPane) Init() tea.Cmd { return nil }

func (p *knobsPane) SetSize(w, h int) { p.width, p.height = w, h }

// set replaces the knobs (a sweep row loaded) without emitting a change.
func (p *knobsPane) set(k Knobs) { p.knobs, p.asked = k, k.Deployment }

func (p *knobsPane) changed() tea.Cmd {
	k := p.knobs
	return func() tea.Msg { return knobsChangedMsg{k} }
}

// cycleMode is the global `m`: it works whatever pane has focus.
func (p *knobsPane) cycleMode() tea.Cmd {
	p.knobs.Mode = cycle(p.space.Modes, p.knobs.Mode, +1)
	return p.changed()
}

// cycleBackend is the global `e`: the next backend whose tables price the knobs' model, GPU
// and layout and whose rules allow the layout; each backend passed over is named with why.
func (p *knobsPane) cycleBackend() tea.Cmd {
	sp := p.space
	was := cmp.Or(p.knobs.Deployment.Backend, sp.Backends[0]) // "": the experiment's, the first listed
	cur := was
	var skipped []string
	for range len(sp.Backends) - 1 {
		cur = cycle(sp.Backends, cur, +1)
		d := p.knobs.Deployment
		d.Backend = cur
		if why := sp.backendFits(d); why != "" {
			skipped = append(skipped, why)
			continue
		}
		p.knobs.Deployment.Backend = cur
		p.note = strings.Join(skipped, "; ")
		return p.changed()
	}
	p.note = "backend stays " + was + ": " + strings.Join(skipped, "; ")
	return nil
}

func (p *knobsPane) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	keys := p.common.Keys
	rows := p.rows()
	at := max(0, slices.Index(rows, p.cursor))
	switch {
	case p.space.hasGroup() && (key.Matches(km, keys.Group) || p.cursor == knobGroup && (key.Matches(km, keys.Left) || key.Matches(km, keys.Right))):
		p.switchGroup()
	case key.Matches(km, keys.Up):
		p.cursor = rows[(at+len(rows)-1)%len(rows)]
	case key.Matches(km, keys.Down):
		p.cursor = rows[(at+1)%len(rows)]
	case key.Matches(km, keys.Left), key.Matches(km, keys.Right):
		dir := +1
		if key.Matches(km, keys.Left) {
			dir = -1
		}
		next, note := p.space.step(p.knobs, p.cursor, dir)
		switch {
		case next == p.knobs:
		case p.cursor == knobModel || p.cursor == knobGPU:
			if p.cursor == knobGPU {
				p.asked.GPU = next.Deployment.GPU
			}
			next, note = p.space.fit(next, p.cursor, p.asked)
		case p.cursor == knobLayout:
			p.asked.Layout = next.Deployment.Layout
		}
		p.note = note
		if next == p.knobs {
			return nil // at the end of the list: nothing to re-run
		}
		p.knobs = next
		return p.changed()
	}
	return nil
}

// View lists the knobs; when they do not fit, a window of them scrolls with the cursor and
// the last line says which are shown.
func (p *knobsPane) View() string {
	st := p.common.Styles
	rows := p.rows()
	nameW := 0
	for _, k := range rows {
		nameW = max(nameW, len(k.label()))
	}
	if p.width < nameW+14 {
		nameW = max(8, p.width-14)
	}
	first, shown := 0, len(rows)
	if p.height > 0 && len(rows) > p.height {
		shown = max(1, p.height-1)
		first = min(max(0, slices.Index(rows, p.cursor)-shown/2), len(rows)-shown)
	}
	var lines []string
	for _, k := range rows[first : first+shown] {
		// A value never wraps: a long one (a model's name) takes room from its row's name,
		// then, if still too long, is cut with an ellipsis.
		val := k.value(p.knobs)
		if k == knobGroup && p.loadGroup {
			val = "back: g"
		}
		ignored := !p.knobs.KVKnobsApply() && (k.kvOnly() || k >= numKnobs && !k.isIndex() && kvOnlyLoad(k))
		room := p.width - 5 // for name and value: the marker, a space and two spaces take 5
		switch {
		case k == p.cursor:
			room -= 2 // ‹ › instead of the two spaces
		case ignored:
			room -= len(" (ignored)")
		}
		w := min(nameW, max(6, room-ansi.StringWidth(val)))
		val = ansi.Truncate(val, max(1, room-w), "…")
		name := k.label()
		if len(name) > w {
			name = name[:w-1] + "…"
		}
		marker := "  "
		if k == p.cursor {
			marker = "▸ "
		}
		line := fmt.Sprintf("%s%-*s ", marker, w, name)
		switch {
		case k == p.cursor:
			line = st.Selected.Render(line + "‹ " + val + " ›")
		case ignored:
			line = st.Muted.Render(line + "  " + val + " (ignored)")
		default:
			line = st.Text.Render(line + "  " + val)
		}
		lines = append(lines, line)
	}
	if shown < len(rows) {
		lines = append(lines, st.Muted.Render(fmt.Sprintf("  ↑↓ knobs %d–%d of %d", first+1, first+shown, len(rows))))
	}
	return strings.Join(lines, "\n")
}
