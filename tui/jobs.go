package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// JobState is where a server-side sweep stands.
type JobState string

// States of a server-side sweep.
const (
	JobQueued    JobState = "queued" // waiting for a free sweep slot
	JobRunning   JobState = "running"
	JobDone      JobState = "done"
	JobCancelled JobState = "cancelled"
	JobFailed    JobState = "failed"
)

// Finished reports whether the sweep has ended, one way or another.
func (s JobState) Finished() bool { return s == JobDone || s == JobCancelled || s == JobFailed }

// Job is one server-side sweep as the jobs list shows it.
type Job struct {
	ID          int
	Experiment  string
	Starter     string // who started it: SSH user and key fingerprint
	State       JobState
	At          Knobs  // the starter's knobs: the deployment and load the sweep searches at
	Phase       string // where it stands: "search round 2/6 · evaluations 14/60", "validation 1/3", …
	Evaluations int
	Best        *SweepEval // best configuration so far; nil before the first evaluation
	Dir         string     // run directory (ledger, report)
	Err         string     // failed: why
	Mine        bool       // started by the session that lists it (same user and key)
}

// ErrSweepCancelled ends the watch of a sweep that someone cancelled.
var ErrSweepCancelled = errors.New("sweep cancelled")

// Jobs is the server's registry of sweeps as one session sees it (routerlab serve): sweeps
// run on the server and outlive the session that started them, and every session lists them
// and watches any one. The session's identity and role are bound in: the registry itself
// refuses what the role may not do.
type Jobs interface {
	// CanControl reports whether this session may start and cancel sweeps.
	CanControl() bool
	// Start queues a sweep of the server's experiment at knobs at and returns its id.
	Start(at Knobs) (int, error)
	// Cancel stops a queued or running sweep (its starter's or an operator's session only).
	Cancel(id int) error
	// Watch emits the sweep's events from its first, then live as they land, all in the
	// order every watcher sees; it returns when the sweep ends (nil, ErrSweepCancelled or its
	// failure) or ctx.Err() once ctx ends, leaving the sweep running.
	Watch(ctx context.Context, id int, emit func(SweepEvent)) error
	// List emits the list of sweeps, oldest first, now and after every change until ctx ends.
	List(ctx context.Context, emit func([]Job)) error
}

// watchSweeper watches one server-side sweep through the sweep pane's Sweeper interface:
// cancelling its context detaches, the sweep goes on.
type watchSweeper struct {
	jobs Jobs
	id   int
}

func (w watchSweeper) Sweep(ctx context.Context, _ Knobs, emit func(SweepEvent)) error {
	return w.jobs.Watch(ctx, w.id, emit)
}

// Messages of the jobs pane and the registry's replies.
type (
	attachMsg     struct{ id int } // the user picked a sweep to watch
	jobStartedMsg struct {
		id  int
		err error
	}
	jobCancelMsg struct{ err error }
)

// jobsPane lists the server's sweeps (running, queued and finished) live; enter attaches the
// sweep pane to the selected one.
type jobsPane struct {
	common    *Common
	jobs      Jobs
	objective string // the best-so-far column's unit, e.g. "e2e ms"
	list      []Job
	announced bool // the session's own running sweeps were announced (on the first list)
	cursor    int
	err       error
	cancel    context.CancelFunc

	width, height int
}

func newJobsPane(c *Common, jobs Jobs, objective string) *jobsPane {
	return &jobsPane{common: c, jobs: jobs, objective: objective}
}

// Init subscribes to the registry's list for the life of the session.
func (p *jobsPane) Init() tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	jobs := p.jobs
	return stream(ctx, 0, func(ctx context.Context, emit func([]Job, bool)) error {
		return jobs.List(ctx, func(l []Job) { emit(l, false) })
	})
}

func (p *jobsPane) stop() {
	if p.cancel != nil {
		p.cancel()
	}
}

func (p *jobsPane) SetSize(w, h int) { p.width, p.height = w, h }

func (p *jobsPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case streamMsg[[]Job]:
		if msg.done {
			if msg.err != nil && !errors.Is(msg.err, context.Canceled) {
				p.err = msg.err
			}
			return nil
		}
		p.list = msg.item
		p.cursor = max(0, min(p.cursor, len(p.list)-1))
		return waitStream(msg.next)
	case tea.KeyPressMsg:
		keys := p.common.Keys
		switch {
		case key.Matches(msg, keys.RowUp):
			p.cursor = max(0, p.cursor-1)
		case key.Matches(msg, keys.RowDown):
			p.cursor = max(0, min(len(p.list)-1, p.cursor+1))
		case key.Matches(msg, keys.Attach):
			if p.cursor < len(p.list) {
				id := p.list[p.cursor].ID
				return func() tea.Msg { return attachMsg{id} }
			}
		}
	}
	return nil
}

// job returns the listed sweep with id, if any.
func (p *jobsPane) job(id int) (Job, bool) {
	for _, j := range p.list {
		if j.ID == id {
			return j, true
		}
	}
	return Job{}, false
}

func (p *jobsPane) View() string {
	st := p.common.Styles
	if p.err != nil {
		return st.Worse.Render("sweeps: " + p.err.Error())
	}
	if len(p.list) == 0 {
		hint := "no sweeps on this server yet"
		if p.jobs.CanControl() {
			hint += " · s starts one"
		}
		return st.Muted.Render(hint)
	}
	const row = "%-3s %-9s %5s %-30s %-38s %s"
	lines := []string{st.Muted.Render(truncate(fmt.Sprintf("  "+row, "#", "state", "evals", "best so far ("+p.objective+")", "phase", "started by"), p.width))}
	shown := max(1, p.height-4) // the header above, a blank line and the selected sweep's details below
	first := max(0, p.cursor-shown+1)
	for i := first; i < len(p.list) && i < first+shown; i++ {
		j := p.list[i]
		best := "–"
		if j.Best != nil {
			b := j.Best.Knobs
			best = fmt.Sprintf("%s %s", formatMS(j.Best.Value), b.Mode)
			if b.KVKnobsApply() {
				best += fmt.Sprintf(" %s/%s/%s", formatNum(b.Credit), formatNum(b.Scale), formatNum(b.Temperature))
			}
		}
		phase := j.Phase
		if j.State == JobFailed {
			phase = j.Err
		}
		line := fmt.Sprintf(row, fmt.Sprint(j.ID), j.State, fmt.Sprint(j.Evaluations), truncate(best, 30), truncate(phase, 38), shortKey(j.Starter))
		if i == p.cursor {
			line = st.Selected.Render(truncate("▸ "+line, p.width))
		} else {
			line = st.Text.Render(truncate("  "+line, p.width))
		}
		lines = append(lines, line)
	}
	if p.cursor < len(p.list) {
		j := p.list[p.cursor]
		lines = append(lines, "",
			st.Muted.Render(truncate(fmt.Sprintf("#%d · %s at c=%d · %s", j.ID, j.Experiment, j.At.Concurrency, j.At.Deployment), p.width)),
			st.Muted.Render(truncate(fmt.Sprintf("run directory %s · started by %s", j.Dir, j.Starter), p.width)))
	}
	return strings.Join(lines, "\n")
}

// serverSweeps handles the Sweeps pane's list and the registry's replies.
func (m *Model) serverSweeps(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case streamMsg[[]Job]:
		cmd := m.jobs.Update(msg)
		if !m.jobs.announced && !msg.done {
			m.jobs.announced = true
			m.announceMine()
		}
		return cmd
	case attachMsg:
		return m.attach(msg.id)
	case jobStartedMsg:
		if msg.err != nil {
			m.err = msg.err
			return nil
		}
		return m.attach(msg.id)
	case jobCancelMsg:
		if msg.err != nil {
			m.err = msg.err
		}
	}
	return nil
}

// announceMine tells a session that reconnects which of its own sweeps still run on the
// server, and how to watch them.
func (m *Model) announceMine() {
	var mine []string
	for _, j := range m.jobs.list {
		if j.Mine && !j.State.Finished() {
			mine = append(mine, fmt.Sprintf("#%d (%s)", j.ID, j.Phase))
		}
	}
	switch len(mine) {
	case 0:
	case 1:
		m.notice = "your sweep " + mine[0] + " is still running on the server: tab to Sweeps on this server, enter watches it"
	default:
		m.notice = "your sweeps " + strings.Join(mine, ", ") + " are still running on the server: tab to Sweeps on this server, enter watches one"
	}
}

// startServerSweep asks the registry for a new sweep; the reply attaches to it.
func (m *Model) startServerSweep() tea.Cmd {
	jobs, at := m.jobs.jobs, m.knobs.knobs
	return func() tea.Msg {
		id, err := jobs.Start(at)
		return jobStartedMsg{id, err}
	}
}

// cancelServerSweep asks the registry to cancel the attached sweep; the watch then ends
// with ErrSweepCancelled.
func (m *Model) cancelServerSweep() tea.Cmd {
	jobs, id := m.jobs.jobs, m.attached
	if id == 0 {
		return nil
	}
	return func() tea.Msg { return jobCancelMsg{jobs.Cancel(id)} }
}

// attach points the sweep pane at server sweep id, replacing what it watched.
func (m *Model) attach(id int) tea.Cmd {
	m.detach()
	m.attached = id
	m.sweep.sweeper = watchSweeper{m.jobs.jobs, id}
	m.setFocus(paneSweep)
	cmd := m.sweep.start()
	if j, ok := m.jobs.job(id); ok {
		m.sweep.at = j.At // the sweep runs at its starter's knobs, not this session's
	}
	return cmd
}

// detach stops watching the attached sweep; the sweep itself goes on, on the server.
func (m *Model) detach() {
	if m.attached == 0 {
		return
	}
	p := m.sweep
	p.stop()
	p.state, p.evals, p.rows, p.bestSoFar, p.validation, p.cursor = sweepIdle, 0, nil, nil, nil, 0
	m.attached = 0
}

// sweepExtra names the watched server sweep in the sweep pane's title.
// It names the winner (or the best so far) first, so a narrow title never cuts it.
func (m *Model) sweepExtra() string {
	s := ""
	if w := m.sweep.winner(); w != "" {
		s = "· " + w + " "
	}
	if m.jobs == nil || m.attached == 0 {
		return s
	}
	j, ok := m.jobs.job(m.attached)
	if !ok {
		return s + fmt.Sprintf("· server sweep #%d ", m.attached)
	}
	return s + fmt.Sprintf("· server sweep #%d · %s · started by %s · d stops watching ", j.ID, j.State, shortKey(j.Starter))
}

// shortKey shortens the key fingerprint in "user SHA256:…" to its first 8 characters, so a
// title is not cut by 43 characters of base64.
func shortKey(starter string) string {
	user, fp, ok := strings.Cut(starter, " SHA256:")
	if !ok || len(fp) <= 8 {
		return starter
	}
	return user + " SHA256:" + fp[:8] + "…"
}
