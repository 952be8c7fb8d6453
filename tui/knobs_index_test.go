package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func indexTestSpace() Space {
	sp := testSpace()
	sp.Index = IndexSpace{TTLs: []float64{1, 10, 120}, EventDelays: []float64{0, 10}, PredictedTTLs: []float64{0, 10}, Decays: []float64{0, 0.5},
		Routers: []int{1, 2, 4}, SyncDelays: []float64{0, 10}}
	return sp
}

// The index knobs take rows only where they count: a TTL with events off, an event delay
// with them on, sync with several routers and its delay with sync; stepping them reaches the
// run; they open the router's second group (g), so that at 80×24 the first group fits without
// scrolling and the second shows them first, under names short enough to show whole.
func TestIndexKnobRows(t *testing.T) {
	sp := indexTestSpace()
	k := testKnobs(8)
	k.Index = IndexKnobs{TTLSecs: 120, Routers: 1}
	keys := func(k Knobs) []string {
		var out []string
		for _, r := range sp.loadRows(k) {
			if r.isIndex() {
				out = append(out, r.label())
			}
		}
		return out
	}
	if got := keys(k); !slices.Equal(got, []string{"use_kv_events", "kv_event_delay_ms", "predicted_ttl_secs", "credit_decay", "router_replicas"}) {
		t.Errorf("default rows %v", got)
	}
	for _, kn := range []knob{knobKVEvents, knobRouters, knobRouters, knobSync} {
		if k, _ = sp.step(k, kn, +1); kn == knobKVEvents && !k.Index.NoKVEvents {
			t.Fatal("use_kv_events → did not turn the events off")
		}
	}
	if _, note := sp.step(k, knobSync, +1); !strings.Contains(note, "last value") {
		t.Errorf("replica_sync past true: note %q, want the end of its list", note)
	}
	if got := keys(k); !slices.Equal(got, []string{"use_kv_events", "router_ttl_secs", "credit_decay", "router_replicas", "replica_sync", "replica_sync_delay_ms"}) {
		t.Errorf("rows with events off, 4 synced routers: %v", got)
	}
	if !k.Index.NoKVEvents || k.Index.Routers != 4 || !k.Index.Sync {
		t.Errorf("stepped to %+v", k.Index)
	}
	if r := k.Router(); !strings.Contains(r, "events=off ttl=120.0") || !strings.Contains(r, "routers=4 sync=0.0ms") {
		t.Errorf("Router() = %q does not name the changed index knobs", r)
	}
	if testKnobs(8).Router() != "kv_router credit=1.0 scale=1.0 T=0.0" {
		t.Errorf("default Router() = %q changed", testKnobs(8).Router())
	}

	o := testOptions(fakeSim{workers: 8}, fakeSweeper{})
	o.Space, o.Initial = sp, testKnobs(8)
	o.Initial.Index = IndexKnobs{TTLSecs: 120, Routers: 1}
	m := New(o)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, m, m.Init())
	view := ansi.Strip(m.render())
	if strings.Contains(view, "↑↓ knobs") || !strings.Contains(view, "‹ kv_router ›") || !strings.Contains(view, "router index & load") {
		t.Errorf("at 80×24 the first group should show whole, the selected knob whole, and the row that opens the second:\n%s", view)
	}
	if strings.Contains(view, "use_kv_events") {
		t.Errorf("the index knobs show before g:\n%s", view)
	}
	m.keyAndSettle(t, "g")
	view = ansi.Strip(m.render())
	for _, name := range []string{"use_kv_events ", "kv_event_delay_ms ", "predicted_ttl_secs ", "credit_decay ", "router_replicas "} {
		if !strings.Contains(view, name) {
			t.Errorf("after g the 80×24 view lacks %s:\n%s", name, view)
		}
	}
}

// Session affinity is a row of the second group with one router (its ladder given), steps
// through its ladder and names itself in the point's description.
func TestAffinityKnob(t *testing.T) {
	sp := indexTestSpace()
	k := testKnobs(8)
	k.Index = IndexKnobs{TTLSecs: 120, Routers: 1}
	if slices.Contains(sp.loadRows(k), knobAffinityTTL) {
		t.Fatal("an affinity row without a ladder")
	}
	sp.Index.AffinityTTLs = []float64{0, 60, 600}
	if !slices.Contains(sp.loadRows(k), knobAffinityTTL) || knobAffinityTTL.label() != "affinity_ttl_secs" {
		t.Fatalf("rows %v lack affinity_ttl_secs", sp.loadRows(k))
	}
	k, _ = sp.step(k, knobAffinityTTL, +1)
	if k.Index.AffinityTTL != 60 || !strings.Contains(k.Router(), "affinity_ttl=60.0") {
		t.Fatalf("stepped to %v, Router() %q", k.Index.AffinityTTL, k.Router())
	}
	k.Index.Routers = 2
	if slices.Contains(sp.loadRows(k), knobAffinityTTL) {
		t.Error("an affinity row with two routers")
	}
}

// The KV tiers' knobs close the index rows of the second group: G2's size always, the hit
// weights once G2 is on; they reach the run's knobs and its one-line description, and at
// 80×24 the G2 row shows after g.
func TestTierKnobRows(t *testing.T) {
	sp := indexTestSpace()
	sp.Index.G2Blocks, sp.Index.HitWeights = []int{0, 8192, 32768}, []float64{0, 0.25, 0.5, 0.75, 1}
	k := testKnobs(8)
	k.Index = IndexKnobs{TTLSecs: 120, Routers: 1, HostWeight: 0.75, DiskWeight: 0.25}
	rows := func(k Knobs) []string {
		var out []string
		for _, r := range sp.loadRows(k) {
			if r >= knobG2Blocks && r.isIndex() {
				out = append(out, r.label())
			}
		}
		return out
	}
	if got := rows(k); !slices.Equal(got, []string{"g2_blocks"}) {
		t.Errorf("rows with G2 off: %v", got)
	}
	k, _ = sp.step(k, knobG2Blocks, +1)
	k, _ = sp.step(k, knobHostWeight, +1)
	if got := rows(k); !slices.Equal(got, []string{"g2_blocks", "host_hit_weight", "disk_hit_weight"}) {
		t.Errorf("rows with G2 on: %v", got)
	}
	if k.Index.G2Blocks != 8192 || k.Index.HostWeight != 1 {
		t.Errorf("stepped to %+v", k.Index)
	}
	if _, note := sp.step(k, knobHostWeight, +1); !strings.Contains(note, "last value") {
		t.Errorf("host weight past 1: note %q", note)
	}
	if r := k.Router(); !strings.Contains(r, "g2=8192 host_w=1.0 disk_w=0.25") {
		t.Errorf("Router() = %q does not name the tiers", r)
	}

	o := testOptions(fakeSim{workers: 8}, fakeSweeper{})
	o.Space, o.Initial = sp, testKnobs(8)
	o.Initial.Index = IndexKnobs{TTLSecs: 120, Routers: 1, HostWeight: 0.75, DiskWeight: 0.25}
	m := New(o)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, m, m.Init())
	m.keyAndSettle(t, "g")
	if view := ansi.Strip(m.render()); !strings.Contains(view, "g2_blocks ") {
		t.Errorf("after g the 80×24 view lacks g2_blocks:\n%s", view)
	}
}
