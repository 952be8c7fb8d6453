package tui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/routerlab/routerlab/themes"
)

// WatchOptions configure the watch view (routerlab watch DIR).
type WatchOptions struct {
	Title     string  // what is watched, e.g. the run directory
	Sweep     Sweeper // follows the sweep; started at once
	SweepInfo SweepInfo
	Palettes  []themes.Palette
}

// Watch is the explorer's sweep pane on its own, following a sweep that runs elsewhere: it
// starts and cancels nothing, so only moving in the table, the theme and quitting work.
type Watch struct {
	common   Common
	palettes []themes.Palette
	theme    int
	help     help.Model
	title    string
	sweep    *sweepPane
}

// NewWatch builds the watch view; Init starts following.
func NewWatch(o WatchOptions) *Watch {
	if len(o.Palettes) == 0 {
		o.Palettes = []themes.Palette{themes.NoColor()}
	}
	w := &Watch{palettes: o.Palettes, title: o.Title, help: help.New()}
	w.common = Common{Keys: DefaultKeyMap()}
	w.setTheme(0)
	w.sweep = newSweepPane(&w.common, o.Sweep, o.SweepInfo, Knobs{})
	w.sweep.followed = true
	k := &w.common.Keys
	for _, b := range []*key.Binding{&k.Focus, &k.FocusBack, &k.Pin, &k.Mode, &k.StartSweep, &k.CancelSweep, &k.Detach,
		&k.Up, &k.Down, &k.Left, &k.Right, &k.LoadView, &k.Load, &k.Attach, &k.Help} {
		b.SetEnabled(false)
	}
	return w
}

func (w *Watch) setTheme(i int) {
	w.theme = i
	w.common.Palette = w.palettes[i]
	w.common.Styles = NewStyles(w.common.Palette)
	w.help.Styles = w.common.Styles.Help
}

// Init starts following the sweep.
func (w *Watch) Init() tea.Cmd { return w.sweep.start() }

// Update handles one message.
func (w *Watch) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	keys := w.common.Keys
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		w.common.Width, w.common.Height = msg.Width, msg.Height
		w.sweep.SetSize(msg.Width, max(3, msg.Height-3))
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, keys.Quit):
			w.sweep.leave() // the sweep itself is not ours to stop
			return w, tea.Quit
		case key.Matches(msg, keys.Theme):
			w.setTheme((w.theme + 1) % len(w.palettes))
		default:
			return w, w.sweep.Update(msg)
		}
	case streamMsg[SweepEvent]:
		return w, w.sweep.Update(msg)
	}
	k := &w.common.Keys
	rows := len(w.sweep.rows) > 0
	k.RowUp.SetEnabled(rows)
	k.RowDown.SetEnabled(rows)
	k.Theme.SetEnabled(len(w.palettes) > 1)
	return w, nil
}

// best is the best configuration so far, in words.
func (w *Watch) best() string {
	if len(w.sweep.rows) == 0 {
		return "no evaluation yet: waiting for the sweep to write its ledger"
	}
	return w.sweep.winner()
}

// View renders the header (what is watched, the best so far), the sweep pane and the keys.
func (w *Watch) View() tea.View {
	v := tea.NewView(w.render())
	v.AltScreen = true
	v.WindowTitle = "routerlab watch"
	return v
}

func (w *Watch) render() string {
	if w.common.Width == 0 {
		return ""
	}
	st := w.common.Styles
	width := w.common.Width
	header := truncate(st.Accent.Render("routerlab watch")+st.Muted.Render(" · "+w.title+" · read-only"), width)
	best := st.Bold.Render(truncate(w.best(), width))
	body := lipgloss.NewStyle().Width(width).Height(w.sweep.height).MaxHeight(w.sweep.height).Render(w.sweep.View())
	w.help.SetWidth(width)
	k := w.common.Keys
	return strings.Join([]string{header, best, body, w.help.ShortHelpView([]key.Binding{k.RowUp, k.RowDown, k.Theme, k.Quit})}, "\n")
}
