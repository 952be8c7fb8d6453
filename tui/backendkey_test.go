package tui

import (
	"strings"
	"testing"
)

// `e` moves to the next backend that can run the knobs' deployment, naming each one it
// passes over and why; with none, the backend stays and the note says why.
func TestCycleBackendExplainsInvalidLayouts(t *testing.T) {
	sp := Space{Backends: []string{"vllm", "sglang", "trtllm"}, BackendFits: func(d Deployment) string {
		if d.Backend == "sglang" {
			return "backend sglang: no table for tp4·moe_tp4"
		}
		return ""
	}}
	p := &knobsPane{space: sp, knobs: Knobs{Deployment: Deployment{Layout: "tp4·moe_tp4"}}}
	if cmd := p.cycleBackend(); cmd == nil || p.knobs.Deployment.Backend != "trtllm" || !strings.Contains(p.note, "backend sglang: no table") {
		t.Fatalf("from vLLM: backend %q, note %q; want trtllm, sglang's reason named", p.knobs.Deployment.Backend, p.note)
	}
	if p.cycleBackend(); p.knobs.Deployment.Backend != "vllm" || p.note != "" {
		t.Fatalf("from trtllm: backend %q, note %q; want vllm without a note", p.knobs.Deployment.Backend, p.note)
	}
	if !strings.Contains(p.knobs.Deployment.String(), "tp4·moe_tp4") || strings.Contains(p.knobs.Deployment.String(), "vllm") {
		t.Fatalf("vLLM goes unsaid in the deployment line: %q", p.knobs.Deployment.String())
	}
	p.space.BackendFits = func(d Deployment) string {
		if d.Backend != "vllm" {
			return "backend " + d.Backend + ": no"
		}
		return ""
	}
	if cmd := p.cycleBackend(); cmd != nil || p.knobs.Deployment.Backend != "vllm" ||
		p.note != "backend stays vllm: backend sglang: no; backend trtllm: no" {
		t.Fatalf("nothing else fits: backend %q, note %q", p.knobs.Deployment.Backend, p.note)
	}
}
