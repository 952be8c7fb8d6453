package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

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
