package model

import (
	"strings"
	"testing"
)

// A model asked for on a GPU it has no tables on is told where it has them (issue 31).
func TestNoTableNamesTheModelsGPUs(t *testing.T) {
	d := SeedDeployment()
	d.ModelName, d.TP, d.MoETP, d.MoEEP = "Qwen/Qwen3-32B", 4, 4, 1
	_, err := NewWorker(d)
	if err == nil || !strings.Contains(err.Error(), "(no table of this model on b200_sxm; it has tables on h100_sxm, h200_sxm)") {
		t.Fatalf("Qwen3-32B on b200: %v", err)
	}
}

// Names resolve to the embedded ids; an unknown one names the nearest; every embedded model
// has its context limit.
func TestResolveModel(t *testing.T) {
	for in, want := range map[string]string{"Kimi-K2.5": "moonshotai/Kimi-K2.5", "GPT-OSS-120B": "openai/gpt-oss-120b",
		"openai/gpt-oss-120b": "openai/gpt-oss-120b"} {
		if got, err := ResolveModel(in); err != nil || got != want {
			t.Errorf("ResolveModel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ResolveModel("Qwen3-23B")
	if err == nil || !strings.HasPrefix(err.Error(), `unknown model "Qwen3-23B"; closest embedded: Qwen/Qwen3-32B, `) {
		t.Errorf("Qwen3-23B: %v", err)
	}
	ms, err := Models()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if ContextLimit(m) == 0 {
			t.Errorf("embedded model %s has no context limit", m)
		}
	}
}
