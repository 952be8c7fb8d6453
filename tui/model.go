// Package tui is routerlab's terminal explorer: tune the router knobs, watch the fleet's
// load and prefix hits over simulated time, compare against a pinned baseline, and run the
// smart sweep live. It talks to the simulator only through values (Knobs, Result,
// SweepEvent) and messages; the simulator and the sweep sit behind small interfaces so the
// cli wires the real engine and the tests wire fakes.
package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/routerlab/routerlab/themes"
)

// Options configure an explorer.
type Options struct {
	Title     string // what is being explored, e.g. "embedded defaults · builtin:toolagent · first 2000"
	Space     Space
	Initial   Knobs
	Sim       Simulator
	Sweep     Sweeper // nil: the sweep pane says there is none
	SweepInfo SweepInfo
	// Jobs, when set (routerlab serve), makes sweeps the server's: s starts one there, a
	// Sweeps pane lists them all, and the sweep pane watches the one attached.
	Jobs Jobs
	// Palettes are the themes `t` cycles through, the first one shown first
	// (themes.Cycle honours NO_COLOR and ROUTERLAB_THEME).
	Palettes []themes.Palette
	// Now is the wall clock for the "updated in" figure; nil means time.Now.
	Now func() time.Time
	// Command, when set, is the headless command that replays a point (`y` copies it).
	Command func(Knobs) (string, error)
}

// pane ids, in tab order.
type paneID int

const (
	paneKnobs paneID = iota
	paneMetrics
	paneFleet
	paneSweep
	paneJobs // only with Options.Jobs
)

func (id paneID) title() string {
	return [...]string{"Knobs", "Metrics", "Fleet", "Sweep", "Sweeps on this server"}[id]
}

// Model is the explorer's root model.
type Model struct {
	common   Common
	palettes []themes.Palette
	theme    int
	help     help.Model
	now      func() time.Time
	title    string

	sim     Simulator
	knobs   *knobsPane
	metrics *metricsPane
	fleet   *fleetPane
	sweep   *sweepPane
	jobs    *jobsPane // nil without Options.Jobs
	focus   paneID
	bottom  paneID // which of Fleet, Sweep and Sweeps the lower half shows
	// attached is the server-side sweep the sweep pane watches (0: none).
	attached int

	// The current run: gen tags it, cancel stops it when the knobs move on.
	gen      uint64
	cancel   context.CancelFunc
	running  bool
	progress float64 // simulated ms reached by the latest frame
	started  time.Time
	lastWall time.Duration
	err      error
	results  int // final results received (the e2e test waits on the header's count)
	// notice is the status line's message — what a key did or why it did nothing — shown
	// in place of the key help until the next key.
	notice  string
	command func(Knobs) (string, error) // nil: no `y`
}

// New builds an explorer; Init starts the first run.
func New(o Options) *Model {
	if len(o.Palettes) == 0 {
		o.Palettes = []themes.Palette{themes.NoColor()}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Model{palettes: o.Palettes, now: o.Now, title: o.Title, sim: o.Sim, help: help.New(), bottom: paneFleet, command: o.Command}
	m.common = Common{Keys: DefaultKeyMap()}
	m.setTheme(0)
	m.knobs = newKnobsPane(&m.common, o.Space, o.Initial)
	m.metrics = newMetricsPane(&m.common)
	m.fleet = newFleetPane(&m.common)
	m.sweep = newSweepPane(&m.common, o.Sweep, o.SweepInfo, o.Initial)
	if o.Jobs != nil {
		m.jobs = newJobsPane(&m.common, o.Jobs, o.SweepInfo.Objective)
	}
	m.updateKeys()
	return m
}

func (m *Model) panes() []Component {
	if m.jobs != nil {
		return []Component{m.knobs, m.metrics, m.fleet, m.sweep, m.jobs}
	}
	return []Component{m.knobs, m.metrics, m.fleet, m.sweep}
}

func (m *Model) setTheme(i int) {
	m.theme = i
	m.common.Palette = m.palettes[i]
	m.common.Styles = NewStyles(m.common.Palette)
	m.help.Styles = m.common.Styles.Help
}

// Init starts the first simulation.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.startRun(m.knobs.knobs)}
	for _, p := range m.panes() {
		cmds = append(cmds, p.Init())
	}
	return tea.Batch(cmds...)
}

// startRun cancels the run in flight, if any, and starts one at k with a new generation.
func (m *Model) startRun(k Knobs) tea.Cmd {
	if m.cancel != nil {
		m.cancel()
	}
	m.gen++
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.running, m.progress, m.err = cancel, true, 0, nil
	m.started = m.now()
	sim, run := m.sim, Run{Knobs: k}
	return stream(ctx, m.gen, func(ctx context.Context, emit func(Result, bool)) error {
		res, err := sim.Simulate(ctx, run, func(r Result) { emit(r, true) })
		if err == nil {
			res.Final = true
			emit(res, false)
		}
		return err
	})
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer m.hideStale()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.common.Width, m.common.Height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case knobsChangedMsg:
		m.sweep.knobs = msg.knobs
		return m, m.startRun(msg.knobs)
	case loadRowMsg:
		k := m.loadRow(msg.row)
		m.knobs.set(k)
		m.sweep.knobs = k
		m.focus = paneKnobs
		m.updateKeys()
		return m, m.startRun(k)
	case streamMsg[Result]:
		return m, m.simulated(msg)
	case streamMsg[SweepEvent]:
		cmd := m.sweep.Update(msg)
		m.updateKeys()
		return m, cmd
	case streamMsg[[]Job], attachMsg, jobStartedMsg, jobCancelMsg:
		cmd := m.serverSweeps(msg)
		m.updateKeys()
		return m, cmd
	}
	return m, nil
}

// simulated takes one message of the current run; messages of an older generation are
// dropped (their run was cancelled when the knobs moved).
func (m *Model) simulated(msg streamMsg[Result]) tea.Cmd {
	if msg.gen != m.gen {
		return nil
	}
	if msg.done {
		m.running = false // normally already off: the final result came first
		m.cancel()
		if msg.err != nil && !errors.Is(msg.err, context.Canceled) {
			m.err = msg.err
			m.updateKeys() // the layout makes room for the error below
		}
		return nil
	}
	r := msg.item
	m.progress = r.SimMS
	if r.Final {
		m.running = false
		m.lastWall = m.now().Sub(m.started)
		m.results++
	}
	m.metrics.Update(resultMsg{r})
	m.fleet.Update(resultMsg{r})
	m.updateKeys() // `b` works once there is a result; the layout follows the baseline's height
	return waitStream(msg.next)
}

// hideStale keeps the Metrics and Fleet panes from showing figures under a name they are not
// of: a result of another model or GPU than the knobs' (while the knobs' run is under way),
// or any result once the knobs' run has failed. Figures of other router knobs stay while
// the next run goes: they are the same deployment, and the header says a run is going.
func (m *Model) hideStale() {
	want := m.knobs.knobs.Deployment
	why := func(r *Result) string {
		switch {
		case m.err != nil:
			return "no figures: the run of these knobs failed (the error is at the bottom)"
		case r == nil || (r.Knobs.Deployment.Model == want.Model && r.Knobs.Deployment.GPU == want.GPU):
			return ""
		}
		had := r.Knobs.Deployment
		return fmt.Sprintf("running %s on %s… (the last figures, of %s on %s, are hidden)",
			shortModel(want.Model), want.GPU, shortModel(had.Model), had.GPU)
	}
	m.metrics.hide, m.fleet.hide = why(m.metrics.cur), why(m.fleet.res)
}

// shortModel is a model's name without its organisation, as the Knobs pane shows it.
func shortModel(id string) string { return id[strings.LastIndex(id, "/")+1:] }

// loadRow is the point a sweep row loads: its router knobs at the explorer's concurrency and
// deployment, or, for a row of a sweep run at another concurrency or deployment (a server
// sweep started elsewhere), the row's whole point; the status line says which.
func (m *Model) loadRow(row Knobs) Knobs {
	cur := m.knobs.knobs
	k := cur.WithRouter(row)
	if row.Deployment.Replicas > 0 && (row.Deployment != cur.Deployment || row.Concurrency != cur.Concurrency) {
		k = row
		m.notice = fmt.Sprintf("loaded %s: the sweep's deployment, not the knobs' (%s)", k.Against(cur), cur.Deployment)
		return k
	}
	m.notice = fmt.Sprintf("loaded %s at c=%d · %s", k.Router(), k.Concurrency, k.Deployment)
	return k
}

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

// View renders the explorer.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "routerlab explorer"
	return v
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
