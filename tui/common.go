package tui

import (
	"image/color"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/routerlab/routerlab/themes"
)

// Component is a pane of the explorer. The root model owns every pane: it gives each its
// size, sends keys only to the focused one, and routes results to the pane that owns them.
type Component interface {
	Init() tea.Cmd
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(width, height int)
}

// Common is what every pane shares: the window, the styles of the current theme and the key
// map. The root model holds the only copy; panes keep a pointer and never write to it.
type Common struct {
	Width, Height int
	Palette       themes.Palette
	Styles        Styles
	Keys          KeyMap
}

// Styles are built from a palette each time the theme changes, never kept in package state.
type Styles struct {
	Text, Muted, Bold, Accent lipgloss.Style
	Better, Worse, Warn       lipgloss.Style
	Title, TitleFocused       lipgloss.Style
	Selected                  lipgloss.Style
	Heat                      []lipgloss.Style // cold → hot
	Help                      help.Styles
	ChartColor                color.Color // nil: plain chart
}

func fg(s lipgloss.Style, c color.Color) lipgloss.Style {
	if c == nil {
		return s
	}
	return s.Foreground(c)
}

// NewStyles builds the explorer's styles from a palette.
func NewStyles(p themes.Palette) Styles {
	base := lipgloss.NewStyle()
	s := Styles{
		Text:   fg(base, p.Text),
		Muted:  fg(base, p.Muted),
		Bold:   fg(base, p.Text).Bold(true),
		Accent: fg(base, p.Accent).Bold(true),
		Better: fg(base, p.Better),
		Worse:  fg(base, p.Worse),
		Warn:   fg(base, p.Warn),
		Title:  fg(base, p.Accent).Bold(true),
	}
	if p.HasColor() {
		s.TitleFocused = base.Bold(true).Foreground(p.OnAccent).Background(p.Accent)
		s.Selected = base.Bold(true).Foreground(p.Accent)
	} else {
		// Reverse video is emphasis, not colour: NO_COLOR still gets a visible focus.
		s.TitleFocused = base.Bold(true).Reverse(true)
		s.Selected = base.Bold(true)
	}
	for _, c := range p.Heat {
		s.Heat = append(s.Heat, base.Foreground(c))
	}
	s.Help = help.Styles{
		ShortKey: s.Accent, ShortDesc: s.Muted, ShortSeparator: s.Muted, Ellipsis: s.Muted,
		FullKey: s.Accent, FullDesc: s.Muted, FullSeparator: s.Muted,
	}
	s.ChartColor = p.Accent
	return s
}

// KeyMap holds every binding. The root enables exactly those that work in the current focus
// and state, so help lists only keys that do something now.
type KeyMap struct {
	// global
	Quit, Focus, FocusBack, Help, Theme, Pin, Mode, Backend, StartSweep, CancelSweep, Copy key.Binding
	// agg/disagg, the prefill/decode split of a disaggregated fleet (disagg.go) and its
	// conditional disaggregation (conddisagg.go)
	Disagg, FewerPrefill, MorePrefill, Conditional key.Binding
	// Knobs pane
	Up, Down, Left, Right, Group key.Binding
	// Fleet pane
	LoadView key.Binding
	// Sweep pane
	RowUp, RowDown, Load key.Binding
	// server sweeps (routerlab serve): attach in the Sweeps pane, detach anywhere
	Attach, Detach key.Binding
}

// DefaultKeyMap is the explorer's key table.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:         key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Focus:        key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		FocusBack:    key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Help:         key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Theme:        key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "theme")),
		Pin:          key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "pin baseline")),
		Mode:         key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "cycle router_mode")),
		Backend:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "cycle backend")),
		StartSweep:   key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "start sweep")),
		CancelSweep:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel sweep")),
		Copy:         key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy as replay command")),
		Disagg:       key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "agg/disagg")),
		FewerPrefill: key.NewBinding(key.WithKeys("["), key.WithHelp("[", "fewer prefill workers")),
		MorePrefill:  key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "more prefill workers")),
		Conditional:  key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "conditional disagg")),
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "previous knob")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "next knob")),
		Left:         key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "lower value")),
		Right:        key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "higher value")),
		Group:        key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "more router knobs")),
		LoadView:     key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "blocks/queued prefill/decodes")),
		RowUp:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "previous row")),
		RowDown:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "next row")),
		Load:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "load into knobs")),
		Attach:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "watch this sweep")),
		Detach:       key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "stop watching")),
	}
}

func (k KeyMap) global() []key.Binding {
	return []key.Binding{k.Mode, k.Pin, k.StartSweep, k.CancelSweep, k.Detach, k.Copy, k.Focus, k.FocusBack, k.Theme, k.Help, k.Quit}
}

func (k KeyMap) pane() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Left, k.Right, k.Group, k.LoadView, k.RowUp, k.RowDown, k.Load, k.Attach}
}

// ShortHelp implements help.KeyMap: the focused pane's keys, then the global ones; the
// explorer's footer adds help and quit at its end, where they are never cut.
func (k KeyMap) ShortHelp() []key.Binding {
	return append(k.pane(), k.Mode, k.FewerPrefill, k.MorePrefill, k.Pin, k.StartSweep, k.CancelSweep, k.Detach, k.Focus)
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.pane(), k.global()[:6], append(k.global()[6:], k.Backend), {k.Disagg, k.FewerPrefill, k.MorePrefill, k.Conditional}}
}
