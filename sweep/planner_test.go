package sweep

import (
	"context"
	"testing"

	"github.com/routerlab/routerlab/config"
)

// The planner's composites are moot where the policy scales nothing: [disabled, load_180_5]
// × three sensitivities gives 1 + 3 candidates, not 6.
func TestPlannerCompositesMootWhenDisabled(t *testing.T) {
	f := config.Default()
	if err := f.Apply([]string{"router_mode=kv_router", "overlap_score_credit=1", "prefill_load_scale=1", "router_temperature=0", "planner_scaling_policy=[disabled, load_180_5]", "planner_load_sensitivity=[aggressive, default, conservative]"}); err != nil {
		t.Fatal(err)
	}
	s, err := NewSpace(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Candidates) != 4 {
		t.Fatalf("%d candidates, want 4", len(s.Candidates))
	}
}
