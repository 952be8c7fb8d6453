package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func press(s string) tea.KeyPressMsg {
	switch s {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
}

// started returns an explorer at 100×30 whose first run has finished.
func started(t *testing.T, sim Simulator, sw Sweeper) *Model {
	t.Helper()
	m := New(testOptions(sim, sw))
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	drive(t, m, m.Init())
	if m.results != 1 || m.metrics.cur == nil {
		t.Fatalf("first run did not finish: %d results", m.results)
	}
	return m
}

// key presses k and runs what it leads to.
func (m *Model) keyAndSettle(t *testing.T, k string) {
	t.Helper()
	_, cmd := m.Update(press(k))
	drive(t, m, cmd)
}

func TestKeyPressMsgStrings(t *testing.T) {
	// The key bindings match on these strings; pin them so a bubbletea change shows here.
	for in, want := range map[string]string{"up": "up", "shift+tab": "shift+tab", "ctrl+c": "ctrl+c", "esc": "esc", "enter": "enter", "m": "m", "?": "?"} {
		if got := press(in).String(); got != want {
			t.Errorf("press(%q).String() = %q", in, got)
		}
	}
}

func TestKnobCursorKeys(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, nil)
	for _, step := range []struct {
		key  string
		want knob
	}{{"down", knobCredit}, {"j", knobScale}, {"up", knobCredit}, {"k", knobMode}, {"k", knobAsync}, {"j", knobMode}} {
		m.keyAndSettle(t, step.key)
		if m.knobs.cursor != step.want {
			t.Fatalf("after %q cursor = %v, want %v", step.key, m.knobs.cursor, step.want)
		}
	}
	if m.results != 1 {
		t.Fatalf("moving the cursor re-ran the simulation (%d results)", m.results)
	}
}

func TestKnobValueKeysRerun(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, nil)
	m.keyAndSettle(t, "j")
	m.keyAndSettle(t, "j") // prefill_load_scale
	m.keyAndSettle(t, "right")
	if m.knobs.knobs.Scale != 2 || m.results != 2 || m.metrics.cur.Knobs.Scale != 2 {
		t.Fatalf("→ on scale 1: scale %v, results %d, shown %+v", m.knobs.knobs.Scale, m.results, m.metrics.cur.Knobs)
	}
	m.keyAndSettle(t, "l")
	m.keyAndSettle(t, "h")
	m.keyAndSettle(t, "left")
	if m.knobs.knobs.Scale != 1 || m.results != 5 {
		t.Fatalf("l h ←: scale %v, results %d", m.knobs.knobs.Scale, m.results)
	}
	for range 10 {
		m.keyAndSettle(t, "h")
	}
	if m.knobs.knobs.Scale != 0 || m.results != 8 {
		t.Fatalf("h at the bottom of the list: scale %v, results %d (want 0 and no re-run past it)", m.knobs.knobs.Scale, m.results)
	}
	if !strings.Contains(ansi.Strip(m.render()), "prefill_load_scale: 0.0 is the first value; → steps back") {
		t.Fatalf("h at the bottom of the list does not say so:\n%s", ansi.Strip(m.render()))
	}
	// ←/→ on router_mode steps through the modes and stops at the ends, as every knob does.
	m.keyAndSettle(t, "k")
	m.keyAndSettle(t, "k")
	m.keyAndSettle(t, "left")
	if m.knobs.knobs.Mode != "kv_router" || m.results != 8 {
		t.Fatalf("← on kv_router gave %q (%d results)", m.knobs.knobs.Mode, m.results)
	}
	m.keyAndSettle(t, "right")
	if m.knobs.knobs.Mode != "round_robin" || m.results != 9 {
		t.Fatalf("→ on kv_router gave %q (%d results)", m.knobs.knobs.Mode, m.results)
	}
}

func TestModeKeyCyclesFromAnyPane(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, nil)
	m.keyAndSettle(t, "tab") // Metrics has focus: m is global
	for _, want := range []string{"round_robin", "random", "least_loaded", "kv_router"} {
		m.keyAndSettle(t, "m")
		if m.knobs.knobs.Mode != want || m.metrics.cur.Knobs.Mode != want {
			t.Fatalf("m: knobs %q shown %q, want %q", m.knobs.knobs.Mode, m.metrics.cur.Knobs.Mode, want)
		}
	}
	if !strings.Contains(m.render(), "prefix reuse     62.0%") {
		t.Fatalf("back on kv_router the reuse figure is not the first run's:\n%s", m.render())
	}
}

func TestFocusKeys(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, nil)
	for _, want := range []paneID{paneMetrics, paneFleet, paneSweep, paneKnobs} {
		m.keyAndSettle(t, "tab")
		if m.focus != want {
			t.Fatalf("tab: focus %v, want %v", m.focus, want)
		}
	}
	m.keyAndSettle(t, "shift+tab")
	if m.focus != paneSweep || m.bottom != paneSweep {
		t.Fatalf("shift+tab: focus %v bottom %v", m.focus, m.bottom)
	}
	m.keyAndSettle(t, "shift+tab")
	if m.focus != paneFleet || m.bottom != paneFleet {
		t.Fatalf("shift+tab: focus %v bottom %v", m.focus, m.bottom)
	}
	// Keys of an unfocused pane do nothing: ↓ in Fleet does not move the knob cursor.
	m.keyAndSettle(t, "down")
	if m.knobs.cursor != knobMode {
		t.Fatal("↓ reached the Knobs pane without focus")
	}
}

func TestHelpThemeQuitKeys(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, nil)
	short := m.render()
	m.keyAndSettle(t, "?")
	if !m.help.ShowAll || !strings.Contains(m.render(), "cycle router_mode") || m.render() == short {
		t.Fatal("? did not show the full help")
	}
	m.keyAndSettle(t, "?")
	if m.help.ShowAll {
		t.Fatal("? did not hide the full help")
	}
	if m.common.Palette.Name != "no-colour" {
		t.Fatalf("first theme %q", m.common.Palette.Name)
	}
	m.keyAndSettle(t, "t")
	if m.common.Palette.Name != "dark" || !strings.Contains(m.render(), "· dark") {
		t.Fatalf("t: theme %q", m.common.Palette.Name)
	}
	m.keyAndSettle(t, "t")
	if m.common.Palette.Name != "no-colour" {
		t.Fatalf("t wraps to %q", m.common.Palette.Name)
	}
	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd := m.Update(press(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s does not quit", k)
		}
	}
}

func TestPinBaseline(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, nil)
	// b works as the very first key: the first result enabled it.
	m.help.ShowAll = true
	if !strings.Contains(m.helpView(), "pin baseline") {
		t.Fatalf("help after the first result:\n%s", m.helpView())
	}
	m.keyAndSettle(t, "b")
	if m.metrics.base == m.metrics.cur || m.metrics.base.Metrics != m.metrics.cur.Metrics {
		t.Fatal("b as the first key did not pin a copy of the current result")
	}
	m.help.ShowAll = false
	m.keyAndSettle(t, "m") // round_robin, compared with the first run
	if !strings.Contains(m.render(), "-66.1%") {
		t.Fatalf("no reuse delta against the first run:\n%s", m.render())
	}
	m.keyAndSettle(t, "b")
	if m.metrics.base.Knobs.Mode != "round_robin" {
		t.Fatalf("b pinned %+v", m.metrics.base.Knobs)
	}
	m.keyAndSettle(t, "m") // random, compared with round_robin
	if !strings.Contains(m.render(), "baseline: round_robin") || !strings.Contains(m.render(), "-9.5%") {
		t.Fatalf("delta not against the pinned round_robin run:\n%s", m.render())
	}
}

func TestLoadViewKey(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, nil)
	m.keyAndSettle(t, "v") // Knobs focused: v does nothing
	if m.fleet.view != 0 {
		t.Fatal("v toggled the heatmap without Fleet focus")
	}
	m.keyAndSettle(t, "tab")
	m.keyAndSettle(t, "tab")
	m.keyAndSettle(t, "v")
	if m.fleet.view != 1 || !strings.Contains(m.render(), "load: queued prefill tokens") {
		t.Fatal("v did not switch to queued prefill tokens")
	}
	m.keyAndSettle(t, "v")
	if m.fleet.view != 2 || !strings.Contains(m.render(), "load: decoding requests") {
		t.Fatal("v did not switch to decoding requests")
	}
	m.keyAndSettle(t, "v")
	if m.fleet.view != 0 || !strings.Contains(m.render(), "load: active KV blocks") {
		t.Fatal("v did not switch back")
	}
}

func TestSweepKeys(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, fakeSweeper{})
	if !m.common.Keys.StartSweep.Enabled() || m.common.Keys.CancelSweep.Enabled() {
		t.Fatal("before a sweep: s should be offered, esc not")
	}
	m.keyAndSettle(t, "s")
	if m.focus != paneSweep || m.sweep.state != sweepDone || len(m.sweep.rows) != 5 || len(m.sweep.validation) != 3 {
		t.Fatalf("s: focus %v phase %v rows %d validation %d", m.focus, m.sweep.state, len(m.sweep.rows), len(m.sweep.validation))
	}
	best := m.sweep.rows[0]
	if best.knobs.Scale != 16 || best.n != 2 || best.value != 2122 {
		t.Fatalf("best row %+v, want scale 16 with n=2 and mean 2122", best)
	}
	m.keyAndSettle(t, "j")
	m.keyAndSettle(t, "down")
	m.keyAndSettle(t, "k")
	if m.sweep.cursor != 1 {
		t.Fatalf("row cursor %d", m.sweep.cursor)
	}
	m.keyAndSettle(t, "enter")
	want := m.sweep.rows[1].knobs
	if m.knobs.knobs != want || m.metrics.cur.Knobs != want || m.focus != paneKnobs {
		t.Fatalf("enter loaded %+v (shown %+v), want %+v", m.knobs.knobs, m.metrics.cur.Knobs, want)
	}
}

// focusKnob moves the Knobs pane's cursor to k.
func (m *Model) focusKnob(t *testing.T, k knob) {
	t.Helper()
	for range numKnobs {
		if m.knobs.cursor == k {
			return
		}
		m.keyAndSettle(t, "j")
	}
	t.Fatalf("knob %s not reachable", k.key())
}

// A sweep started after concurrency and replicas changed runs at them (the pane says so),
// and `enter` on a row loads the row's point: with the knobs moved to another concurrency
// and deployment since, the sweep's come back too, and the status line says so.
func TestSweepRunsAtTheKnobsAndEnterKeepsTheRest(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, fakeSweeper{})
	m.focusKnob(t, knobConcurrency)
	m.keyAndSettle(t, "l") // 32 → 64
	m.focusKnob(t, knobReplicas)
	m.keyAndSettle(t, "l") // 8 → 16
	m.setFocus(paneSweep)
	if idle := ansi.Strip(m.render()); !strings.Contains(idle, "press s to search (2 rounds × 3, objective e2e ms): router_mode") ||
		!strings.Contains(idle, "at c=64 · 200 requests · 16× tp4·ep4") {
		t.Fatalf("the idle sweep pane does not say what s would search at:\n%s", idle)
	}
	m.keyAndSettle(t, "s")
	view := ansi.Strip(m.render())
	if !strings.Contains(view, "at c=64 · 200 requests · 16× tp4·ep4") {
		t.Fatalf("the sweep pane does not say what it searched at:\n%s", view)
	}
	for _, r := range m.sweep.rows {
		if r.knobs.Concurrency != 64 || r.knobs.Deployment.Replicas != 16 {
			t.Fatalf("row %+v not evaluated at c=64 on 16 replicas", r.knobs)
		}
	}
	m.keyAndSettle(t, "tab") // Knobs
	m.focusKnob(t, knobConcurrency)
	m.keyAndSettle(t, "h") // 64 → 32
	m.focusKnob(t, knobAsync)
	m.keyAndSettle(t, "l")
	now := m.knobs.knobs
	m.setFocus(paneSweep)
	m.updateKeys()
	m.keyAndSettle(t, "j")
	m.keyAndSettle(t, "enter")
	row := m.sweep.rows[1].knobs
	got := m.knobs.knobs
	if got != row || got.Concurrency != 64 || got.Deployment.Async || got.Deployment.Replicas != 16 || got == now.WithRouter(row) {
		t.Fatalf("enter loaded %+v; want the row's whole point %+v (the knobs were %+v)", got, row, now)
	}
	if m.metrics.cur.Knobs != got {
		t.Fatalf("the re-run shows %+v, want %+v", m.metrics.cur.Knobs, got)
	}
	status := ansi.Strip(m.helpView())
	if !strings.Contains(status, "loaded kv_router credit=0.5 scale=8.0 T=0.0 c=64 async_scheduling=false: the swe") {
		t.Fatalf("the status line does not say the sweep's deployment was loaded: %q", status)
	}
	// On the sweep's own deployment, enter loads the router knobs and says so.
	m.setFocus(paneSweep)
	m.updateKeys()
	m.keyAndSettle(t, "enter")
	if got := m.knobs.knobs; got != row {
		t.Fatalf("second enter loaded %+v", got)
	}
	if status := ansi.Strip(m.helpView()); !strings.Contains(status, "loaded kv_router credit=0.5 scale=8.0 T=0.0 at c=64") {
		t.Fatalf("status after loading on the same deployment: %q", status)
	}
}

// The sweep's status line walks search → saturation → validation → done with its counts
// and ends on the stop reason; a cancelled sweep says so.
func TestSweepStatusWalksThePhases(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, fakeSweeper{})
	_, cmd := m.Update(press("s"))
	var statuses []string
	for cmd != nil {
		msg := cmd()
		if msg == nil {
			break
		}
		_, cmd = m.Update(msg)
		if st := ansi.Strip(m.sweep.status()); len(statuses) == 0 || statuses[len(statuses)-1] != st {
			statuses = append(statuses, st)
		}
	}
	want := []string{
		"search round 1/2 · evaluations 1/6 · esc cancels",
		"search round 2/2 · evaluations 6/6 · esc cancels",
		"saturation 0/2 · prefill_load_scale at the winner's other knobs · esc cancels",
		"saturation 2/2 · prefill_load_scale at the winner's other knobs · esc cancels",
		"validation 1/3 · round_robin, default_kv, best on 1000 requests · esc cancels",
		"validation 3/3 · round_robin, default_kv, best on 1000 requests · esc cancels",
		"done · 6 evaluations · converged at round 2 of 2",
	}
	at := 0
	for _, st := range statuses {
		if at < len(want) && st == want[at] {
			at++
		}
	}
	if at != len(want) || statuses[len(statuses)-1] != want[len(want)-1] {
		t.Fatalf("statuses:\n%s\nwant in order:\n%s", strings.Join(statuses, "\n"), strings.Join(want, "\n"))
	}

	block := make(chan struct{})
	defer close(block)
	m = started(t, fakeSim{workers: 8, windows: 30}, fakeSweeper{block: block})
	_, cmd = m.Update(press("s"))
	for range 3 {
		_, cmd = m.Update(cmd())
	}
	m.keyAndSettle(t, "esc")
	if st := ansi.Strip(m.sweep.status()); st != "cancelled · 3 evaluations" {
		t.Fatalf("cancelled status %q", st)
	}
}

func TestSweepEscCancels(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	m := started(t, fakeSim{workers: 8, windows: 30}, fakeSweeper{block: block})
	_, cmd := m.Update(press("s"))
	// Take the first three evaluations; the fourth waits on block.
	for range 3 {
		msg := cmd()
		_, cmd = m.Update(msg)
	}
	if m.sweep.evals != 3 || !m.sweep.running() || !m.common.Keys.CancelSweep.Enabled() {
		t.Fatalf("mid-sweep: %d evals, running %v", m.sweep.evals, m.sweep.running())
	}
	m.keyAndSettle(t, "esc")
	if m.sweep.state != sweepCancelled || m.common.Keys.CancelSweep.Enabled() || !m.common.Keys.StartSweep.Enabled() {
		t.Fatalf("esc: phase %v", m.sweep.state)
	}
	// The cancelled producer's last message, if any, is dropped.
	if msg := cmd(); msg != nil {
		m.Update(msg)
	}
	if m.sweep.evals != 3 || m.sweep.state != sweepCancelled {
		t.Fatalf("after cancel: %d evals, phase %v", m.sweep.evals, m.sweep.state)
	}
}

func TestStaleRunIsCancelledAndDropped(t *testing.T) {
	block := make(chan struct{})
	m := New(testOptions(fakeSim{workers: 8, windows: 30, block: block}, nil))
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	first := m.Init()
	firstMsg := first() // the first run's progress frame
	if b, ok := firstMsg.(tea.BatchMsg); ok {
		firstMsg = b[0]()
	}
	frame, ok := firstMsg.(streamMsg[Result])
	if !ok || frame.gen != 1 || frame.item.Final {
		t.Fatalf("first message %#v", firstMsg)
	}
	m.Update(frame)
	// The knobs move while run 1 is blocked: run 2 starts and run 1's context is cancelled.
	_, cmd := m.Update(press("m"))
	_, start2 := m.Update(cmd())
	if m.gen != 2 {
		t.Fatalf("gen %d after the knob change", m.gen)
	}
	// Run 1 unwinds: its producer returns ctx.Err(), which arrives (if at all) tagged gen 1.
	if msg := waitStream(frame.next)(); msg != nil {
		if sm := msg.(streamMsg[Result]); sm.gen != 1 || !sm.done || sm.err != context.Canceled {
			t.Fatalf("run 1 ended with %#v", sm)
		}
		m.Update(msg)
	}
	// A late final result of run 1 must not replace anything.
	m.Update(streamMsg[Result]{gen: 1, item: Result{Knobs: Knobs{Mode: "stale"}, Final: true}})
	if m.metrics.cur != nil || m.fleet.res.Knobs.Mode == "stale" || m.results != 0 || !m.running {
		t.Fatalf("stale result applied: metrics %v, fleet %v, results %d", m.metrics.cur, m.fleet.res.Knobs, m.results)
	}
	close(block)
	drive(t, m, start2)
	if m.results != 1 || m.metrics.cur.Knobs.Mode != "round_robin" || m.running {
		t.Fatalf("run 2: results %d, shown %+v", m.results, m.metrics.cur)
	}
}

func TestHelpListsOnlyWorkingKeys(t *testing.T) {
	m := started(t, fakeSim{workers: 8, windows: 30}, fakeSweeper{})
	has := func(s string) bool { return strings.Contains(m.helpView(), s) }
	m.help.ShowAll = true
	if !has("lower value") || has("load into knobs") || has("blocks/queued") || has("cancel sweep") {
		t.Fatalf("Knobs focus help:\n%s", m.helpView())
	}
	m.keyAndSettle(t, "tab")
	m.keyAndSettle(t, "tab")
	if has("lower value") || !has("blocks/queued") {
		t.Fatalf("Fleet focus help:\n%s", m.helpView())
	}
	m.keyAndSettle(t, "tab")
	if has("load into knobs") {
		t.Fatal("enter offered with an empty sweep table")
	}
	m.keyAndSettle(t, "s")
	if !has("load into knobs") || has("start sweep") == false {
		t.Fatalf("Sweep focus help after a sweep:\n%s", m.helpView())
	}
	noSweep := started(t, fakeSim{workers: 8, windows: 30}, nil)
	noSweep.help.ShowAll = true
	if strings.Contains(noSweep.helpView(), "start sweep") {
		t.Fatal("s offered without a sweeper")
	}
}

// In a small window the TTFT chart has no room beside the figures; with Metrics focused it
// takes the lower half. A larger window draws it inline and keeps the Fleet pane below.
func TestMetricsChartPlacement(t *testing.T) {
	small := New(testOptions(fakeSim{workers: 8, windows: 90}, nil))
	small.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, small, small.Init())
	if strings.Contains(small.render(), "TTFT ms over") {
		t.Fatal("80×24 with Knobs focused should show the Fleet pane, not the chart")
	}
	small.keyAndSettle(t, "tab")
	if v := small.render(); !strings.Contains(v, "TTFT over simulated time") || !strings.Contains(v, "TTFT ms over 90 s simulated") {
		t.Fatalf("80×24 with Metrics focused should show the chart below:\n%s", v)
	}
	big := New(testOptions(fakeSim{workers: 8, windows: 90}, nil))
	big.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	drive(t, big, big.Init())
	big.keyAndSettle(t, "tab")
	if v := big.render(); strings.Contains(v, "TTFT over simulated time") || !strings.Contains(v, "TTFT ms over 90 s simulated") || !strings.Contains(v, "prefix-hit ratio") {
		t.Fatalf("120×40 should draw the chart inline and keep the Fleet pane:\n%s", v)
	}
}

// Every key the explorer knows says why when it does nothing now, on the status line, and
// the next key clears it; `b` says what it pinned.
func TestRefusedKeysSayWhy(t *testing.T) {
	block := make(chan struct{})
	m := New(testOptions(fakeSim{workers: 8, windows: 30, block: block}, fakeSweeper{}))
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	cmd := m.Init()
	m.Update(press("b")) // the first run has not finished
	if got := ansi.Strip(m.helpView()); !strings.Contains(got, "b: nothing to pin until the first run has finished") {
		t.Fatalf("b before any result: %q", got)
	}
	close(block)
	drive(t, m, cmd)
	m.keyAndSettle(t, "b")
	if got := ansi.Strip(m.helpView()); !strings.Contains(got, "pinned kv_router credit=1.0 scale=1.0 T=0.0 c=32 as the baseline") {
		t.Fatalf("b: %q", got)
	}
	m.keyAndSettle(t, "esc")
	if got := ansi.Strip(m.helpView()); !strings.Contains(got, "esc: no sweep is running") {
		t.Fatalf("esc without a sweep: %q", got)
	}
	m.keyAndSettle(t, "v")
	if got := ansi.Strip(m.helpView()); !strings.Contains(got, "v: cycles the Fleet pane's load heatmap; tab to Fleet first") {
		t.Fatalf("v in the Knobs pane: %q", got)
	}
	m.keyAndSettle(t, "j")
	if got := ansi.Strip(m.helpView()); strings.Contains(got, "v:") || !strings.Contains(got, "overlap_score_credit: Dynamo KV router (unitless, 0–1)") {
		t.Fatalf("after j: the notice stays or the knob's help line is missing: %q", got)
	}

	viewer, _ := serverExplorer(t, false)
	for k, want := range map[string]string{"s": "s: viewers watch sweeps; only operators start them", "esc": "esc: only the sweep's starter or an operator can cancel it"} {
		viewer.keyAndSettle(t, k)
		if got := ansi.Strip(viewer.helpView()); !strings.Contains(got, want) {
			t.Errorf("viewer's %s: %q", k, got)
		}
	}
}

// `y` copies the knobs shown as a replay command: on the clipboard (OSC 52) and, whole, on
// the status line.
func TestCopyReplayCommand(t *testing.T) {
	o := testOptions(fakeSim{workers: 8, windows: 30}, fakeSweeper{})
	o.Command = func(k Knobs) (string, error) { return "routerlab replay --set router_mode=[" + k.Mode + "]", nil }
	m := New(o)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, m, m.Init())
	m.keyAndSettle(t, "m")
	_, cmd := m.Update(press("y"))
	if cmd == nil {
		t.Fatal("y set no clipboard")
	}
	if got := strings.Join(strings.Fields(ansi.Strip(m.helpView())), " "); !strings.Contains(got, "routerlab replay --set router_mode=[round_robin]") {
		t.Fatalf("status line after y: %q", got)
	}
	plain := New(testOptions(fakeSim{workers: 8, windows: 30}, fakeSweeper{}))
	plain.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, plain, plain.Init())
	plain.keyAndSettle(t, "y")
	if got := ansi.Strip(plain.helpView()); !strings.Contains(got, "y: no replay command") {
		t.Fatalf("y without a command: %q", got)
	}
}
