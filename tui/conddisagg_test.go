package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// `c` is off while the fleet is aggregated and says why; on a split it turns conditional
// disaggregation on and off, each a run of its own, only under kv_router; the full help
// lists it only on a split, the deployment line and the baseline name it, and `a` joining
// the pools turns it off.
func TestConditionalKey(t *testing.T) {
	m := New(disaggOptions(8))
	m.knobs.space.ConditionalRule = "a decode worker lacking < 2048 tokens and < 0.7 of a prompt prefills it"
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 34})
	drive(t, m, m.Init())
	m.keyAndSettle(t, "?")
	if help := m.render(); strings.Contains(help, "conditional disagg") {
		t.Fatalf("full help of an aggregated fleet lists c:\n%s", help)
	}
	m.keyAndSettle(t, "?")
	runs := m.results
	m.keyAndSettle(t, "c")
	if want := "c: conditional disaggregation lets a decode worker prefill a prompt it mostly holds; a disaggregates first"; m.notice != want || m.results != runs {
		t.Fatalf("c aggregated: notice %q after %d runs; want %q and no run", m.notice, m.results-runs, want)
	}

	m.keyAndSettle(t, "a")
	split := m.knobs.knobs
	m.keyAndSettle(t, "?")
	if help := m.render(); !strings.Contains(help, "conditional disagg") {
		t.Fatalf("full help of a split fleet lacks c:\n%s", help)
	}
	m.keyAndSettle(t, "?")
	runs = m.results
	m.keyAndSettle(t, "c")
	d := m.knobs.knobs.Deployment
	switch {
	case !d.Conditional || m.results != runs+1:
		t.Fatalf("c on a split: %+v after %d runs, want conditional on and one run", d, m.results-runs)
	case m.notice != "conditional disaggregation on (decode prefix caching on): a decode worker lacking < 2048 tokens and < 0.7 of a prompt prefills it":
		t.Fatalf("c on: notice %q", m.notice)
	case d.String() != "4 prefill + 4 decode × tp4·ep4 conditional · 16384 tok · 512 seqs · KV fp8 · sync":
		t.Fatalf("deployment line %q", d.String())
	case m.knobs.knobs.Against(split) != split.String()+" prefill=4+4 router_conditional_disagg=true":
		t.Fatalf("against the plain split: %q", m.knobs.knobs.Against(split))
	}
	m.keyAndSettle(t, "c")
	if d := m.knobs.knobs.Deployment; d.Conditional || m.notice != "conditional disaggregation off: every request is prefilled on the prefill pool" || m.results != runs+2 {
		t.Fatalf("c again: %+v, notice %q, %d runs", d, m.notice, m.results-runs)
	}

	m.keyAndSettle(t, "m") // round_robin
	m.keyAndSettle(t, "c")
	if d := m.knobs.knobs.Deployment; d.Conditional || !strings.HasPrefix(m.notice, "c: conditional disaggregation needs router_mode kv_router") || !strings.HasSuffix(m.notice, "now round_robin") {
		t.Fatalf("c under round_robin: %+v, notice %q", d, m.notice)
	}
	m.keyAndSettle(t, "m")
	m.keyAndSettle(t, "m")
	m.keyAndSettle(t, "m") // kv_router again
	m.keyAndSettle(t, "c")
	m.keyAndSettle(t, "a")
	if d := m.knobs.knobs.Deployment; d.Prefill != 0 || d.Conditional {
		t.Fatalf("a joining a conditional split: %+v, want aggregated and conditional off", d)
	}
}
