package tui

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// No two bindings that can be on at once share a key: the global ones with each other and
// with every pane's, and the keys `a`, `[`, `]` and `c` with nothing at all.
func TestKeyMapHasNoCollisions(t *testing.T) {
	km := DefaultKeyMap()
	v := reflect.ValueOf(km)
	owner := map[string][]string{}
	for i := range v.NumField() {
		for _, k := range v.Field(i).Interface().(key.Binding).Keys() {
			owner[k] = append(owner[k], v.Type().Field(i).Name)
		}
	}
	for _, k := range []string{"a", "[", "]", "c"} {
		if len(owner[k]) != 1 {
			t.Errorf("key %q is bound by %v, want one binding", k, owner[k])
		}
	}
	global := map[string]bool{}
	for _, b := range append(km.global(), km.Backend, km.Disagg, km.FewerPrefill, km.MorePrefill, km.Conditional) {
		for _, k := range b.Keys() {
			if global[k] {
				t.Errorf("global key %q bound twice", k)
			}
			global[k] = true
		}
	}
	for _, b := range km.pane() {
		for _, k := range b.Keys() {
			if global[k] {
				t.Errorf("pane key %q is also a global key", k)
			}
		}
	}
}

// disaggOptions are the test explorer with an agg/disagg key: every deployment can be split
// but one on sglang.
func disaggOptions(workers int) Options {
	o := testOptions(fakeSim{workers: workers, windows: 30}, nil)
	o.Space.DisaggFits = func(d Deployment) string {
		if d.Backend == "sglang" {
			return "backend sglang: disaggregated fleets are modelled for vLLM workers only"
		}
		return ""
	}
	return o
}

// The full help lists `a` once the explorer can split its fleet, and `[`/`]` only while it
// is split; each key refused says why on the status line.
func TestDisaggKeysHelpAndRefusals(t *testing.T) {
	m := New(testOptions(fakeSim{workers: 8, windows: 30}, nil))
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 34})
	drive(t, m, m.Init())
	m.keyAndSettle(t, "a")
	if m.knobs.knobs.Deployment.Prefill != 0 || m.notice != "a: this explorer cannot disaggregate its fleet" {
		t.Fatalf("a without DisaggFits: prefill %d, notice %q", m.knobs.knobs.Deployment.Prefill, m.notice)
	}

	m = New(disaggOptions(8))
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 34})
	drive(t, m, m.Init())
	m.keyAndSettle(t, "?")
	help := m.render()
	if !strings.Contains(help, "agg/disagg") || strings.Contains(help, "more prefill workers") {
		t.Fatalf("full help of an aggregated fleet: want a listed, [ and ] not:\n%s", help)
	}
	m.keyAndSettle(t, "?")
	m.keyAndSettle(t, "]")
	if want := "]: moves the prefill/decode split of a disaggregated fleet; a disaggregates first"; m.notice != want {
		t.Fatalf("] aggregated: notice %q, want %q", m.notice, want)
	}
	runs := m.results
	m.keyAndSettle(t, "a")
	if d := m.knobs.knobs.Deployment; d.Prefill != 4 || d.Replicas != 8 || m.results != runs+1 {
		t.Fatalf("a: %+v after %d runs, want 4 of 8 workers prefilling and one more run", d, m.results-runs)
	}
	m.keyAndSettle(t, "?")
	if help := m.render(); !strings.Contains(help, "fewer prefill workers") || !strings.Contains(help, "more prefill workers") {
		t.Fatalf("full help of a split fleet lacks [ and ]:\n%s", help)
	}
	m.keyAndSettle(t, "?")
	for _, step := range []struct {
		key     string
		prefill int
		notice  string
	}{
		{"]", 5, "5 prefill + 3 decode workers"}, {"]", 6, ""}, {"]", 7, ""},
		{"]", 7, "]: 7 prefill + 1 decode: the decode pool keeps one worker at least (replicas adds workers)"},
		{"[", 6, "6 prefill + 2 decode workers"},
	} {
		m.keyAndSettle(t, step.key)
		if got := m.knobs.knobs.Deployment.Prefill; got != step.prefill || step.notice != "" && m.notice != step.notice {
			t.Fatalf("%s: prefill %d, notice %q; want %d, %q", step.key, got, m.notice, step.prefill, step.notice)
		}
	}
	if got := m.knobs.knobs.Deployment.String(); got != "6 prefill + 2 decode × tp4·ep4 · 16384 tok · 512 seqs · KV fp8 · sync" {
		t.Fatalf("deployment line %q", got)
	}

	// The replicas knob keeps the split inside the fleet, and will not leave one worker.
	m.knobs.cursor = knobReplicas
	for _, want := range [][2]int{{4, 3}, {2, 1}} {
		m.keyAndSettle(t, "left")
		if d := m.knobs.knobs.Deployment; d.Replicas != want[0] || d.Prefill != want[1] {
			t.Fatalf("replicas ←: %d workers, %d prefilling; want %v", d.Replicas, d.Prefill, want)
		}
	}
	m.keyAndSettle(t, "left")
	if d := m.knobs.knobs.Deployment; d.Replicas != 2 || !strings.Contains(m.notice, "replicas: 1 cannot hold a prefill and a decode pool") {
		t.Fatalf("replicas ← at 1 + 1: %+v, notice %q", d, m.notice)
	}
	m.keyAndSettle(t, "a")
	if d := m.knobs.knobs.Deployment; d.Prefill != 0 || d.Replicas != 2 {
		t.Fatalf("a again: %+v, want the 2 workers aggregated", d)
	}
	m.knobs.knobs.Deployment.Backend = "sglang"
	m.keyAndSettle(t, "a")
	if m.knobs.knobs.Deployment.Prefill != 0 || !strings.Contains(m.notice, "a: stays aggregated: backend sglang") {
		t.Fatalf("a on sglang: prefill %d, notice %q", m.knobs.knobs.Deployment.Prefill, m.notice)
	}
}

// A split fleet's rows are labelled by pool and grouped within it: no row mixes a prefill
// and a decode worker, and the rows fit the height given.
func TestPoolRows(t *testing.T) {
	if got, want := poolRows(8, 3, 1), []string{"p0", "p1", "p2", "d0", "d1", "d2", "d3", "d4"}; !slices.Equal(got, want) {
		t.Fatalf("poolRows(8, 3, 1) = %v", got)
	}
	if got, want := poolRows(10, 3, 2), []string{"p0–1", "p2", "d0–1", "d2–3", "d4–5", "d6"}; !slices.Equal(got, want) {
		t.Fatalf("poolRows(10, 3, 2) = %v", got)
	}
	for _, c := range [][4]int{{10, 3, 4, 3}, {10, 3, 6, 2}, {1024, 1, 20, 54}, {8, 4, 8, 1}} {
		if got := poolGroupSize(c[0], c[1], c[2]); got != c[3] || len(poolRows(c[0], c[1], got)) > c[2] {
			t.Errorf("poolGroupSize(%d, %d, %d) = %d (%d rows), want %d", c[0], c[1], c[2], got, len(poolRows(c[0], c[1], got)), c[3])
		}
	}
	m := [][]float64{{1}, {3}, {5}, {7}}
	if got := groupPools(m, 1, 2, meanOf); !reflect.DeepEqual(got, [][]float64{{1}, {4}, {7}}) {
		t.Fatalf("groupPools = %v, want the prefill worker alone and the decode pool in pairs", got)
	}
}

// A baseline is described against the point shown: an aggregated baseline of a split says
// so, a split baseline of an aggregated point names its pools.
func TestAgainstNamesTheSplit(t *testing.T) {
	agg, split := testKnobs(8), testKnobs(8)
	split.Deployment.Prefill = 3
	if got := agg.Against(split); got != "kv_router credit=1.0 scale=1.0 T=0.0 c=32 aggregated" {
		t.Errorf("aggregated against a split: %q", got)
	}
	if got := split.Against(agg); got != "kv_router credit=1.0 scale=1.0 T=0.0 c=32 prefill=3+5" {
		t.Errorf("split against aggregated: %q", got)
	}
}
