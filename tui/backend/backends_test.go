package backend

import (
	"strings"
	"testing"
)

// The seed's layouts run on every backend's tables; a layout a backend has no table for is
// explained, and the backend's own release and tables price the run.
func TestBackendFitsAndPrices(t *testing.T) {
	_, s := smallExperiment(t, 50)
	k := s.Initial()
	if k.Deployment.Backend != "" {
		t.Fatalf("a vLLM experiment's backend knob: %q, want \"\" (the experiment's)", k.Deployment.Backend)
	}
	for _, b := range []string{"sglang", "trtllm"} {
		d := k.Deployment
		d.Backend = b
		if why := s.backendFits(d); why != "" {
			t.Fatalf("seed on %s: %s", b, why)
		}
		k.Deployment.Backend = b
		cfg, w, err := s.Config(k)
		if err != nil {
			t.Fatal(err)
		}
		if string(cfg.Worker.Backend) != b || cfg.Worker.BackendVersion != cfg.Worker.Backend.EmbeddedVersion() || !strings.Contains(w.TableDigest(), b) {
			t.Fatalf("%s: deployment %s %s on table %s", b, cfg.Worker.Backend, cfg.Worker.BackendVersion, w.TableDigest())
		}
	}
	d := k.Deployment
	d.Backend, d.Layout = "sglang", "tp2·ep2"
	if why := s.backendFits(d); !strings.Contains(why, "no step-time table") || !strings.Contains(why, "sglang") {
		t.Fatalf("MiniMax-M2.5 TP2 on SGLang (no table): %q", why)
	}
}
