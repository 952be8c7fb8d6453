package cli

import (
	"regexp"
	"strings"
	"testing"
)

// wallTime matches the one field of a summary that differs between identical runs.
var wallTime = regexp.MustCompile(`"wall_time_ms": ?[0-9.e+-]+`)

func replayJSONOut(t *testing.T, args ...string) string {
	t.Helper()
	out, _, err := runCmd(t, newReplayCmd(), append([]string{"--requests", "300", "--format", "json"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return wallTime.ReplaceAllString(out, `"wall_time_ms": 0`)
}

// Bare replay runs Dynamo's default router, not the first values of the seed's lists (credit
// 0, scale 0), and says so in its output.
func TestBareReplayIsDynamosDefaultPoint(t *testing.T) {
	bare := replayJSONOut(t)
	set := replayJSONOut(t, "--set", "overlap_score_credit=1", "--set", "prefill_load_scale=1", "--set", "router_temperature=0")
	if bare != set {
		t.Errorf("bare replay differs from --set credit=1 scale=1 T=0:\n%s\n---\n%s", bare, set)
	}
	for _, want := range []string{`"search_space.router_mode": "kv_router"`, `"search_space.overlap_score_credit": "1"`,
		`"search_space.prefill_load_scale": "1"`, `"search_space.router_temperature": "0"`} {
		if !strings.Contains(bare, want) {
			t.Errorf("replay JSON does not state %s:\n%s", want, bare)
		}
	}
	if first := replayJSONOut(t, "--set", "overlap_score_credit=0", "--set", "prefill_load_scale=0"); first == bare {
		t.Error("credit 0, scale 0 gave the default point's result: the knobs are not reaching the replay")
	}
	table, _, err := runCmd(t, newReplayCmd(), "--requests", "300")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "router kv_router  overlap_score_credit 1  prefill_load_scale 1  router_temperature 0") ||
		!strings.Contains(table, "point of the search space: router_mode=kv_router overlap_score_credit=1.0 prefill_load_scale=1.0 router_temperature=0.0") {
		t.Errorf("table does not state the point it ran:\n%s", table)
	}
	// Under round robin the point names the mode set and the KV knobs as ignored (issue 31).
	rr, _, err := runCmd(t, newReplayCmd(), "--requests", "50", "--set", "router_mode=round_robin")
	if err != nil {
		t.Fatal(err)
	}
	if want := "point of the search space: router_mode=round_robin (round_robin ignores overlap_score_credit, prefill_load_scale, router_temperature)\n"; !strings.Contains(rr, want) {
		t.Errorf("round robin's point line, want %q:\n%s", want, rr)
	}
}
