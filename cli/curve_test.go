package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/sweep"
)

// curve replays every router setting at every concurrency; the Pareto marks are exactly the
// points no other point beats on both requests/s and mean e2e latency.
func TestCurve(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "curve")
	stdout, stderr, code := execute("curve", "--requests", "400", "--router", "default_kv", "--router", "round_robin",
		"--router", "prefill_load_scale=4,overlap_score_credit=0.5", "--concurrency", "16,4,64", "--out", dir,
		"--set", "goal.sla.ttft_ms=200")
	if code != 0 {
		t.Fatalf("curve: %s", stderr)
	}
	for _, want := range []string{"◆", "SLO TTFT ≤ 200 ms for 90 % of requests", "goodput req/s", "prefill_load_scale=4,overlap_score_credit=0.5"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "curve.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cj struct {
		Points []sweep.CurvePoint `json:"points"`
	}
	if err := json.Unmarshal(data, &cj); err != nil {
		t.Fatal(err)
	}
	if len(cj.Points) != 9 || cj.Points[0].Concurrency != 4 || cj.Points[2].Concurrency != 64 || cj.Points[3].Router != "round_robin" {
		t.Fatalf("points %+v", cj.Points)
	}
	dominates := func(q, p sweep.CurvePoint) bool {
		a, b := q.Summary, p.Summary
		return a.RequestThroughput >= b.RequestThroughput && a.MeanE2EMS <= b.MeanE2EMS &&
			(a.RequestThroughput > b.RequestThroughput || a.MeanE2EMS < b.MeanE2EMS)
	}
	front := 0
	for _, p := range cj.Points {
		beaten := false
		for _, q := range cj.Points {
			beaten = beaten || dominates(q, p)
		}
		if p.Pareto == beaten {
			t.Errorf("%s c=%d: Pareto %v, dominated %v", p.Router, p.Concurrency, p.Pareto, beaten)
		}
		if p.Pareto {
			front++
		}
		if p.Summary.RequestsCompleted != 400 || p.Summary.Goodput == nil {
			t.Errorf("%s c=%d: %d requests, goodput %v", p.Router, p.Concurrency, p.Summary.RequestsCompleted, p.Summary.Goodput)
		}
	}
	if front == 0 {
		t.Error("no point on the Pareto front")
	}
	checkHTMLReport(t, filepath.Join(dir, "curve.html"), "Latency against throughput")
	if _, stderr, code := execute("curve", "--router", "prefill=4"); code != 1 || !strings.Contains(stderr, `"prefill" is not a router knob`) {
		t.Errorf("bad --router: status %d, %q", code, stderr)
	}
}
