package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// g shows the load-and-admission knobs in place of the others; stepping one re-runs with its
// value, and g goes back. Without load knobs in the space g does nothing.
func TestLoadKnobGroup(t *testing.T) {
	opts := testOptions(fakeSim{workers: 8, windows: 30}, nil)
	for range loadKeys {
		opts.Space.Load = append(opts.Space.Load, LoadKnob{Values: []string{"none", "0.5", "1"}})
	}
	opts.Initial.Load = LoadKnobs{}
	for i := range opts.Initial.Load {
		opts.Initial.Load[i] = "none"
	}
	m := New(opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 40})
	drive(t, m, m.Init())
	if strings.Contains(m.render(), "queue_threshold") {
		t.Fatal("the load knobs show before g")
	}
	m.keyAndSettle(t, "g")
	screen := m.render()
	for _, k := range loadLabels {
		if !strings.Contains(screen, k) {
			t.Errorf("after g the pane lacks %s:\n%s", k, screen)
		}
	}
	if strings.Contains(screen, "prefill_load_scale") {
		t.Error("the router knobs still show in the load group")
	}
	for range 7 { // from the group's header row down to router_queue_threshold
		m.keyAndSettle(t, "j")
	}
	if got := m.knobs.cursor.key(); got != "router_queue_threshold" {
		t.Fatalf("cursor on %s, want router_queue_threshold", got)
	}
	before := m.results
	m.keyAndSettle(t, "l")
	if m.knobs.knobs.Load[6] != "0.5" || m.results != before+1 {
		t.Fatalf("l: load knobs %v after %d runs, want router_queue_threshold 0.5 and a new run", m.knobs.knobs.Load, m.results-before)
	}
	if help := m.helpView(); !strings.Contains(help, "router_queue_threshold: Dynamo --router-queue-threshold") {
		t.Errorf("the knob's help line does not name Dynamo's flag: %q", help)
	}
	m.keyAndSettle(t, "g")
	if !strings.Contains(m.render(), "prefill_load_scale") {
		t.Fatal("g did not go back to the router knobs")
	}

	plain := started(t, fakeSim{workers: 8, windows: 30}, nil)
	plain.keyAndSettle(t, "g")
	if plain.knobs.loadGroup || strings.Contains(plain.render(), "queue_threshold") {
		t.Fatal("g opened a group the space does not have")
	}
	if help := plain.helpView(); !strings.Contains(help, "g: this explorer has no router index & load knobs") {
		t.Errorf("g without load knobs: %q", help)
	}
}

func TestLoadKnobsSets(t *testing.T) {
	var l LoadKnobs
	l[6], l[7] = "1", "wspt"
	if got := strings.Join(l.Sets(), " "); got != "router_queue_threshold=1 router_queue_policy=wspt" {
		t.Fatalf("sets %q", got)
	}
}

func TestAgainstNamesChangedLoadKnobs(t *testing.T) {
	var a, b Knobs
	a.Mode, b.Mode = "kv_router", "kv_router"
	a.Load[7], b.Load[7] = "wspt", "fcfs"
	if got := a.Against(b); !strings.HasSuffix(got, " queue_policy=wspt") {
		t.Fatalf("against: %q", got)
	}
}

func TestSweepRowCarriesItsLoadKnobs(t *testing.T) {
	var at, row Knobs
	at.Load[0], at.Load[6] = "true", "none"
	row.Mode, row.Load[6] = "kv_router", "1"
	if got := at.WithRouter(row).Load; got[0] != "true" || got[6] != "1" {
		t.Fatalf("load knobs %v: want the row's queue threshold, the rest kept", got)
	}
}
