package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Layout: a header line, the Knobs and Metrics panes side by side, the Fleet or Sweep pane
// below, the help at the bottom; each pane has a title line. The upper half gets what the
// figures need and, with room to spare, up to the capped chart's height; the lower half
// gets the rest. Below minWidth×minHeight the explorer shows only how much it needs.
const (
	knobsWidth = 40
	minWidth   = 80
	minHeight  = 24
	// minBottom is the least the lower half keeps: a title, a few rows, axis and legend.
	minBottom = 7
)

func (m *Model) tooSmall() bool { return m.common.Width < minWidth || m.common.Height < minHeight }

// helpView is the full help, or one line of the keys that work now ending, whatever the
// width, with how to get the full help and how to quit.
func (m *Model) helpView() string {
	keys := m.common.Keys
	about := ""
	if m.focus == paneKnobs && !m.help.ShowAll {
		k := m.knobs.cursor
		about = m.common.Styles.Muted.Render(truncate(k.key()+": "+k.about(), m.common.Width)) + "\n"
	}
	if m.err != nil {
		// The whole error, wrapped to the width: it says what to change.
		about += m.common.Styles.Worse.Render(ansi.Wrap("error: "+m.err.Error(), m.common.Width, " ")) + "\n"
	}
	if m.notice != "" && !m.help.ShowAll {
		// The whole message, wrapped: a copied command must be selectable in full.
		m.help.SetWidth(0)
		tail := ansi.Strip(m.help.ShortHelpView([]key.Binding{keys.Help, keys.Quit}))
		text := m.notice + " • " + tail
		if strings.Contains(m.notice, "\n") { // lines of their own (a command): left whole
			text = m.notice + "\n" + tail
		}
		return about + m.common.Styles.Warn.Render(ansi.Wrap(text, m.common.Width, " "))
	}
	if m.help.ShowAll {
		m.help.SetWidth(m.common.Width)
		return m.help.View(keys)
	}
	m.help.SetWidth(0)
	tail := m.help.ShortHelpView([]key.Binding{keys.Help, keys.Quit})
	sep := m.common.Styles.Muted.Render(" • ")
	m.help.SetWidth(m.common.Width - lipgloss.Width(tail) - lipgloss.Width(sep))
	head := m.help.ShortHelpView(keys.ShortHelp())
	if head == "" {
		return about + tail
	}
	return about + head + sep + tail
}

func (m *Model) layout() {
	w, h := m.common.Width, m.common.Height
	if m.tooSmall() {
		return
	}
	avail := h - 1 - lipgloss.Height(m.helpView())
	need := 1 + m.metrics.tableHeight()
	topH := max(need, min(avail/2, 1+chartMaxHeight))
	if workers := m.fleet.workers(); workers > 0 {
		// The fleet drawn one worker a row, if the chart can give up the room; then the lines
		// a small fleet cannot use (its rows grown to their cap) go back to the chart.
		if want := 1 + fleetChrome + workers; avail-topH < want {
			topH = max(need, avail-want)
		}
		if bottom := avail - topH - 1; bottom > 0 && m.bottom == paneFleet {
			topH += bottom - linesFor(workers, m.fleet.res.Fleet.Prefill, bottom)
		}
	}
	topH = max(2, min(topH, avail-minBottom))
	bottomH := avail - topH
	kw := max(24, min(knobsWidth, w-metricsTableWidth-2))
	m.knobs.SetSize(kw, topH-1)
	m.metrics.SetSize(w-kw-1, topH-1)
	m.fleet.SetSize(w, bottomH-1)
	m.sweep.SetSize(w, bottomH-1)
	if m.jobs != nil {
		m.jobs.SetSize(w, bottomH-1)
	}
}

func (m *Model) paneView(id paneID, w, h int, extra string) string {
	st := m.common.Styles
	title := " " + id.title() + " " + extra
	if m.focus == id {
		title = st.TitleFocused.Render(truncate("▶"+title, w))
	} else {
		title = st.Title.Render(truncate(" "+title, w))
	}
	body := m.panes()[id].View()
	return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).MaxWidth(w).Render(title + "\n" + body)
}
func (m *Model) render() string {
	w, h := m.common.Width, m.common.Height
	if w == 0 || h == 0 {
		return ""
	}
	if m.tooSmall() {
		msg := fmt.Sprintf("terminal too small\nneed %d×%d, have %d×%d\n\n? help · q quit", minWidth, minHeight, w, h)
		return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center,
			m.common.Styles.Warn.Width(min(w, 30)).Align(lipgloss.Center).Render(msg))
	}
	helpV := m.helpView()
	header := m.header()
	kw, kh := m.knobs.width, m.knobs.height+1
	top := lipgloss.JoinHorizontal(lipgloss.Top,
		m.paneView(paneKnobs, kw, kh, ""),
		" ",
		m.paneView(paneMetrics, m.metrics.width, kh, m.metricsExtra()))
	var bottom string
	switch {
	case m.focus == paneMetrics && !m.metrics.chartInline() && m.metrics.cur != nil:
		// A small window has no room for the chart beside the figures: it borrows the
		// lower half while Metrics has focus.
		st := m.common.Styles
		title := st.Title.Render(truncate("  TTFT over simulated time · "+m.metrics.cur.Knobs.Mode, w))
		bottom = lipgloss.NewStyle().Width(w).Height(m.fleet.height + 1).MaxHeight(m.fleet.height + 1).
			Render(title + "\n" + m.metrics.chart(min(w, 100), m.fleet.height))
	case m.bottom == paneSweep:
		bottom = m.paneView(paneSweep, w, m.sweep.height+1, m.sweepExtra()+"│ Fleet")
	case m.bottom == paneJobs:
		bottom = m.paneView(paneJobs, w, m.jobs.height+1, "")
	default:
		bottom = m.paneView(paneFleet, w, m.fleet.height+1, m.fleetExtra()+" │ Sweep")
	}
	return lipgloss.NewStyle().MaxHeight(h).MaxWidth(w).Render(strings.Join([]string{header, top, bottom, helpV}, "\n"))
}

func (m *Model) header() string {
	st := m.common.Styles
	left := st.Accent.Render("routerlab") + st.Muted.Render(" · "+m.title)
	var status string
	switch {
	case m.err != nil:
		status = st.Worse.Render("✗ run failed (see below)")
	case m.running:
		status = st.Warn.Render(fmt.Sprintf("● simulating %s… t=%.0fs", m.knobs.knobs.Mode, m.progress/1000))
	case m.results > 0:
		status = st.Better.Render(fmt.Sprintf("✓ run %d in %d ms", m.results, m.lastWall.Milliseconds()))
	}
	themeName := st.Muted.Render(" · " + m.common.Palette.Name)
	gap := m.common.Width - lipgloss.Width(left) - lipgloss.Width(status) - lipgloss.Width(themeName)
	if gap < 1 {
		return truncate(left, max(1, m.common.Width-lipgloss.Width(status)-1)) + " " + status
	}
	return left + strings.Repeat(" ", gap) + status + themeName
}

func (m *Model) metricsExtra() string {
	if m.metrics.cur == nil || m.metrics.hide != "" {
		return ""
	}
	cur := m.metrics.cur
	s := fmt.Sprintf("· %s · %d requests", cur.Knobs.Mode, cur.Metrics.Completed)
	if cur.Metrics.Rejected > 0 {
		s += fmt.Sprintf(" · %d rejected", cur.Metrics.Rejected)
	}
	return s
}

func (m *Model) fleetExtra() string {
	if m.fleet.res == nil || m.fleet.hide != "" {
		return ""
	}
	workers := poolTitle(m.fleet.res.Fleet)
	if per := m.fleet.perRow(); per > 1 {
		workers += fmt.Sprintf(", %d a row", per)
	}
	return fmt.Sprintf("· %s · %s · %.0f s simulated", m.fleet.res.Knobs.Mode, workers, m.fleet.res.SimMS/1000)
}
