package silicon

import (
	"context"
	"strings"
	"testing"
)

// The 86 SGLang GLM-5 aggregated rows: every B200 and H200 row replayed with its run's
// settings on the DSA tables, the 10 B300 rows skipped for their unmeasured modules.
func TestValidateGLM5(t *testing.T) {
	rows := sampleRows(t, "replays the GLM-5 runs; skipped in -short", func(r Row) bool {
		return r.Backend == "sglang" && r.Model == glm5 && r.Mode != "disagg"
	})
	rep, err := Validate(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]int{}
	for _, r := range rep.Rows {
		if r.Skipped != "" {
			skipped[r.System]++
			if !strings.Contains(r.Skipped, "not measured with block-FP8 projections on B300") {
				t.Errorf("line %d (%s): skipped: %s", r.Line, r.System, r.Skipped)
			}
		}
	}
	groups, ttft, tpot := groupMedians(rep, 10)
	t.Logf("%d of %d GLM-5 rows validated, skipped %v; %d groups, median TTFT MAPE %.1f %%, TPOT MAPE %.1f %%", rep.Validated, len(rows), skipped, groups, ttft, tpot)
	for _, g := range rep.Groups {
		t.Logf("%+v", g)
	}
	if len(rows) != 86 || rep.Validated != 76 || skipped["b300_sxm"] != 10 {
		t.Fatalf("%d rows, %d validated, skipped %v; want 86, 76, the 10 B300 rows", len(rows), rep.Validated, skipped)
	}
}
