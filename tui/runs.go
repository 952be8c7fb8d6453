package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/routerlab/routerlab/themes"
)

// RunEntry is one run directory under a parent, as the run picker lists it.
type RunEntry struct {
	Dir         string
	State       string // the phase of its progress record, e.g. "done · converged at round 3 of 6", "interrupted · …"
	Evaluations int
	Best        string // the best configuration so far, in words ("" before any)
}

// RunsOptions configure the run picker (routerlab watch on a directory of runs).
type RunsOptions struct {
	Title    string // the parent directory
	Runs     []RunEntry
	Open     func(dir string) *Watch // the watch view of the run picked
	Palettes []themes.Palette
}

// Runs lists the run directories under a parent; enter opens the watch view of one.
type Runs struct {
	common   Common
	palettes []themes.Palette
	help     help.Model
	o        RunsOptions
	cursor   int
}

// NewRuns builds the run picker.
func NewRuns(o RunsOptions) *Runs {
	if len(o.Palettes) == 0 {
		o.Palettes = []themes.Palette{themes.NoColor()}
	}
	r := &Runs{palettes: o.Palettes, o: o, help: help.New()}
	r.common = Common{Keys: DefaultKeyMap(), Palette: o.Palettes[0], Styles: NewStyles(o.Palettes[0])}
	r.help.Styles = r.common.Styles.Help
	r.common.Keys.Attach.SetHelp("enter", "watch this run")
	return r
}

// Init does nothing: the list is read before the picker opens.
func (r *Runs) Init() tea.Cmd { return nil }

// Update moves in the list, opens the run picked (the watch view replaces the picker) or quits.
func (r *Runs) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		r.common.Width, r.common.Height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		k := r.common.Keys
		switch {
		case key.Matches(msg, k.Quit):
			return r, tea.Quit
		case key.Matches(msg, k.RowUp):
			r.cursor = max(0, r.cursor-1)
		case key.Matches(msg, k.RowDown):
			r.cursor = max(0, min(len(r.o.Runs)-1, r.cursor+1))
		case key.Matches(msg, k.Attach):
			if r.cursor < len(r.o.Runs) {
				w := r.o.Open(r.o.Runs[r.cursor].Dir)
				size := tea.WindowSizeMsg{Width: r.common.Width, Height: r.common.Height}
				w.Update(size)
				return w, w.Init()
			}
		}
	}
	return r, nil
}

// View renders the list.
func (r *Runs) View() tea.View {
	v := tea.NewView(r.render())
	v.AltScreen = true
	v.WindowTitle = "routerlab watch"
	return v
}

func (r *Runs) render() string {
	if r.common.Width == 0 {
		return ""
	}
	st := r.common.Styles
	w := r.common.Width
	lines := []string{truncate(st.Accent.Render("routerlab watch")+st.Muted.Render(" · "+r.o.Title+" · runs to pick from"), w)}
	if len(r.o.Runs) == 0 {
		lines = append(lines, st.Muted.Render(truncate("no run directories here: none has a ledger, progress.json or summary.json", w)))
	}
	room := max(1, r.common.Height-3)
	first := max(0, r.cursor-room+1)
	for i := first; i < len(r.o.Runs) && i < first+room; i++ {
		e := r.o.Runs[i]
		line := fmt.Sprintf("%-40s %-44s %5d evals  %s", truncate(e.Dir, 40), truncate(e.State, 44), e.Evaluations, e.Best)
		if i == r.cursor {
			lines = append(lines, st.Selected.Render(truncate("▸ "+line, w)))
		} else {
			lines = append(lines, st.Text.Render(truncate("  "+line, w)))
		}
	}
	for len(lines) < r.common.Height-1 {
		lines = append(lines, "")
	}
	r.help.SetWidth(w)
	k := r.common.Keys
	return strings.Join(append(lines, r.help.ShortHelpView([]key.Binding{k.RowUp, k.RowDown, k.Attach, k.Quit})), "\n")
}
