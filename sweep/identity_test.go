package sweep

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// The sweep's part of the simulator digest is deterministic and every canonical sweep runs
// to its results: one that errors no longer takes the paths it is there for.
func TestCanonicalSweepsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the digest's canonical work: seconds, and many times that under -race")
	}
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

// The canonical sweeps vary every key that config's canonical replays leave to the sweep
// (config's TestCanonicalReplaysCoverEveryKey lists the same keys).
func TestCanonicalSweepsCoverSweepKeys(t *testing.T) {
	all := slices.Concat(canonicalSweepBase, slices.Concat(canonicalSweepSets...))
	for _, k := range []string{"workload.search_requests", "goal.target", "goal.max_ttft_ms", "goal.max_tpot_ms", "goal.max_e2e_latency_ms",
		"sweep.algorithm", "sweep.max_rounds", "sweep.candidates_per_round", "sweep.seed", "validate.enabled", "validate.requests"} {
		if !slices.ContainsFunc(all, func(s string) bool { return strings.HasPrefix(s, k+"=") }) {
			t.Errorf("%s: no canonical sweep sets it", k)
		}
	}
}
