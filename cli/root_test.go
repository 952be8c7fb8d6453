package cli

import (
	"bytes"
	"strings"
	"testing"
)

func execute(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = Execute(args, strings.NewReader(""), &o, &e)
	return o.String(), e.String(), code
}

// Misspelt commands, flags and keys get the nearest names; the examples.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"repla"}, `unknown command "repla" for "routerlab" (did you mean replay?)`},
		{[]string{"swep", "--out", "x"}, `unknown command "swep" for "routerlab" (did you mean sweep?)`},
		{[]string{"replay", "--request", "3"}, "unknown flag: --request (did you mean --requests?)"},
		{[]string{"replay", "--set", "replica=64"}, "search_space.replica: unknown key (did you mean replicas?)"},
	} {
		_, stderr, code := execute(c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: status %d, stderr %q; want 1 and %q", c.args, code, stderr, c.want)
		}
	}
}

// Without a terminal on standard output, plain routerlab refuses instead of starting a sweep,
// and says what to run.
func TestNoTerminalRefuses(t *testing.T) {
	stdout, stderr, code := execute("--requests", "50")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "routerlab sweep") {
		t.Fatalf("status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// --set in the explorer's words reaches the replay, in either order with the budget.
func TestReplayExplorerNames(t *testing.T) {
	a := replayJSONOut(t, "--set", "replicas=64")
	for _, want := range []string{`"search_space.parallel_configs": "tp4-dp1-moetp1-ep4-x64"`} {
		if !strings.Contains(a, want) {
			t.Fatalf("replay --set replicas=64 does not run 64 workers:\n%s", a)
		}
	}
	b := replayJSONOut(t, "--set", "parallel_configs=[{tp: 4, moe_ep: 4, replicas: 64}]", "--set", "gpu_budget=256")
	if a != b {
		t.Error("--set replicas=64 and the parallel_configs spelling give different replays")
	}
}
