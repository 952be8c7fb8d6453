package sweep

import (
	"bytes"
	"strings"
	"testing"
)

// The sweep's part of the simulator digest is deterministic and every canonical sweep runs
// to its results: one that errors no longer takes the paths it is there for.
func TestCanonicalSweepsDeterministic(t *testing.T) {
	var b1, b2 bytes.Buffer
	if err := canonicalSweeps(&b1); err != nil {
		t.Fatal(err)
	}
	if err := canonicalSweeps(&b2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Error("two runs of the canonical sweeps write differently")
	}
	for _, line := range strings.Split(b1.String(), "\n") {
		if strings.HasPrefix(line, "error:") {
			t.Error(line)
		}
	}
	for _, want := range []string{`"Evaluations":`, `"Saturation":`, `"mean_e2e_latency_interval":`, `"pareto":true`} {
		if !strings.Contains(b1.String(), want) {
			t.Errorf("canonical sweeps lack %s", want)
		}
	}
}
