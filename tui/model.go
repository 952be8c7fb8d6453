// Package tui is routerlab's terminal explorer: tune the router knobs, watch the fleet's
// load and prefix hits over simulated time, compare against a pinned baseline, and run the
// smart sweep live. It talks to the simulator only through values (Knobs, Result,
// SweepEvent) and messages; the simulator and the sweep sit behind small interfaces so the
// cli wires the real engine and the tests wire fakes.
package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

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

// View renders the explorer.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "routerlab explorer"
	return v
}
