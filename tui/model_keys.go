package tui

import (
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// key handles a key press: the explorer's own keys here, any other in the focused pane.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	keys := m.common.Keys
	m.notice = ""
	defer m.updateKeys()
	switch {
	case key.Matches(msg, keys.Quit):
		if m.cancel != nil {
			m.cancel()
		}
		m.sweep.stop() // with server sweeps: detaches, the sweep goes on
		if m.jobs != nil {
			m.jobs.stop()
		}
		return tea.Quit
	case key.Matches(msg, keys.Focus):
		m.setFocus((m.focus + 1) % paneID(len(m.panes())))
	case key.Matches(msg, keys.FocusBack):
		n := paneID(len(m.panes()))
		m.setFocus((m.focus + n - 1) % n)
	case key.Matches(msg, keys.Help):
		m.help.ShowAll = !m.help.ShowAll
	case key.Matches(msg, keys.Theme):
		m.setTheme((m.theme + 1) % len(m.palettes))
	case key.Matches(msg, keys.Pin):
		m.metrics.Update(pinMsg{})
		m.fleet.Update(pinMsg{})
		m.notice = "pinned " + m.metrics.cur.Knobs.String() + " as the baseline of the % changes and the heat scale"
	case key.Matches(msg, keys.Copy):
		return m.copyCommand()
	case key.Matches(msg, keys.Mode):
		return m.knobs.cycleMode()
	case key.Matches(msg, keys.Backend):
		return m.noted(m.knobs.cycleBackend())
	case key.Matches(msg, keys.Disagg):
		return m.noted(m.knobs.toggleDisagg())
	case key.Matches(msg, keys.FewerPrefill), key.Matches(msg, keys.MorePrefill):
		dir := +1
		if key.Matches(msg, keys.FewerPrefill) {
			dir = -1
		}
		return m.noted(m.knobs.moveSplit(dir))
	case key.Matches(msg, keys.Conditional):
		return m.noted(m.knobs.toggleConditional())
	case key.Matches(msg, keys.StartSweep):
		m.setFocus(paneSweep)
		if m.jobs != nil {
			return m.startServerSweep()
		}
		return m.sweep.start()
	case key.Matches(msg, keys.CancelSweep):
		if m.jobs != nil {
			return m.cancelServerSweep()
		}
		m.sweep.stop()
	case key.Matches(msg, keys.Detach):
		m.detach()
	default:
		m.notice = m.refused(msg)
		m.knobs.note = ""
		cmd := m.panes()[m.focus].Update(msg)
		if m.knobs.note != "" {
			m.notice = m.knobs.note
		}
		return cmd
	}
	return nil
}

// copyCommand puts the command that replays the knobs shown on the clipboard (OSC 52, which
// terminals may refuse or ignore) and on the status line, where it can be selected.
func (m *Model) copyCommand() tea.Cmd {
	cmd, err := m.command(m.knobs.knobs)
	if err != nil {
		m.notice = "y: " + err.Error()
		return nil
	}
	// Broken at flag boundaries to the window's width, so no flag wraps mid-word; the shell
	// reads the continuation lines as one command.
	cmd = breakAtFlags(cmd, m.common.Width)
	m.notice = "copied (if the terminal allows OSC 52):\n" + cmd
	return tea.SetClipboard(cmd)
}

// noted shows the knobs' note of a knob key's change (its refusal, or what it changed) and
// returns the key's command.
func (m *Model) noted(cmd tea.Cmd) tea.Cmd {
	m.notice = m.knobs.note
	return cmd
}

// refused says why a key of the explorer's does nothing now ("" for keys it does not know or
// that work in the focused pane): its binding is off in this state.
func (m *Model) refused(msg tea.KeyPressMsg) string {
	k := m.common.Keys
	is := func(b key.Binding) bool { return !b.Enabled() && slices.Contains(b.Keys(), msg.String()) }
	viewer := m.jobs != nil && !m.jobs.jobs.CanControl()
	switch {
	case is(k.Pin) && m.metrics.cur != nil:
		return "b: nothing to pin until the run of these knobs has finished"
	case is(k.Pin):
		return "b: nothing to pin until the first run has finished"
	case is(k.StartSweep) && viewer:
		return "s: viewers watch sweeps; only operators start them (tab to the Sweeps pane, enter watches one)"
	case is(k.StartSweep) && m.sweep.running():
		return "s: a sweep is already running (esc cancels it)"
	case is(k.StartSweep):
		return "s: no sweep is available for this experiment"
	case is(k.CancelSweep) && viewer:
		return "esc: only the sweep's starter or an operator can cancel it"
	case is(k.CancelSweep):
		return "esc: no sweep is running"
	case is(k.Copy):
		return "y: no replay command for this explorer"
	case is(k.Disagg):
		return "a: this explorer cannot disaggregate its fleet"
	case is(k.FewerPrefill) || is(k.MorePrefill):
		return msg.String() + ": moves the prefill/decode split of a disaggregated fleet; a disaggregates first"
	case is(k.Conditional):
		return "c: conditional disaggregation lets a decode worker prefill a prompt it mostly holds; a disaggregates first"
	case is(k.Detach):
		return "d: not watching a server sweep"
	case is(k.LoadView):
		return "v: cycles the Fleet pane's load heatmap; tab to Fleet first"
	case is(k.Load) && m.focus == paneSweep:
		return "enter: no sweep row to load yet"
	case (is(k.RowUp) || is(k.RowDown)) && m.focus == paneSweep:
		return msg.String() + ": no sweep rows yet"
	case is(k.Left) || is(k.Right):
		return msg.String() + ": steps a knob; tab to the Knobs pane first"
	case is(k.Group) && !m.knobs.space.hasGroup():
		return "g: this explorer has no router index & load knobs"
	case is(k.Group):
		return "g: shows the router index & load knobs; tab to the Knobs pane first"
	}
	return ""
}

func (m *Model) setFocus(id paneID) {
	m.focus = id
	if id == paneFleet || id == paneSweep || id == paneJobs {
		m.bottom = id
	}
	if m.common.Width > 0 {
		m.layout() // the lower half's pane decides how the height is split
	}
}

// updateKeys enables exactly the bindings that do something in the current focus and state.
func (m *Model) updateKeys() {
	k := &m.common.Keys
	f := m.focus
	k.Up.SetEnabled(f == paneKnobs)
	k.Down.SetEnabled(f == paneKnobs)
	k.Left.SetEnabled(f == paneKnobs)
	k.Right.SetEnabled(f == paneKnobs)
	k.Group.SetEnabled(f == paneKnobs && m.knobs.space.hasGroup())
	k.LoadView.SetEnabled(f == paneFleet)
	rows := len(m.sweep.rows) > 0
	listed := m.jobs != nil && len(m.jobs.list) > 0
	k.RowUp.SetEnabled((f == paneSweep && rows) || (f == paneJobs && listed))
	k.RowDown.SetEnabled((f == paneSweep && rows) || (f == paneJobs && listed))
	k.Load.SetEnabled(f == paneSweep && rows)
	k.Attach.SetEnabled(f == paneJobs && listed)
	k.Detach.SetEnabled(m.attached != 0)
	m.hideStale() // hidden figures cannot be pinned as the baseline
	k.Pin.SetEnabled(m.metrics.cur != nil && m.metrics.hide == "")
	control := m.jobs == nil || m.jobs.jobs.CanControl()
	k.StartSweep.SetEnabled(m.sweep.canStart() && control)
	k.CancelSweep.SetEnabled(m.sweep.running() && control)
	k.Theme.SetEnabled(len(m.palettes) > 1)
	k.Copy.SetEnabled(m.command != nil)
	k.Backend.SetEnabled(len(m.knobs.space.Backends) > 1)
	k.Disagg.SetEnabled(m.knobs.space.DisaggFits != nil)
	split := m.knobs.knobs.Deployment.Prefill > 0
	k.FewerPrefill.SetEnabled(split)
	k.MorePrefill.SetEnabled(split)
	k.Conditional.SetEnabled(split)
	if m.common.Width > 0 {
		m.layout() // the full help's height follows the keys it lists
	}
}
