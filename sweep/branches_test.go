package sweep

import (
	"context"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/config"
)

// deployment_mode [agg, disagg] on the seed's 8 B200s: one branch per mode within
// parallel_configs, each derived (12 aggregated fleets, 44 prefill/decode pairs), encoded on
// its own projector's axes beside a mode axis, and ranked across branches in one report.
func TestBothDeploymentModesSweep(t *testing.T) {
	f, exp := derivedSeed(t, "gpu_budget=8", "deployment_mode=[agg, disagg]", "sweep.max_rounds=3")
	s, err := NewSpace(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.shapes) != 2 || s.shapes[0].Mode != config.ModeAgg || s.shapes[0].Projector.Len() != 12 ||
		s.shapes[1].Mode != config.ModeDisagg || s.shapes[1].First != 12 || s.shapes[1].Projector.Len() != 44 || len(s.Candidates) != 56 {
		t.Fatalf("branches %+v, %d candidates", s.shapes, len(s.Candidates))
	}
	// The mode axis, the aggregated block (ratio, log2 size, attention dp, FFN ep) and the
	// disaggregated block (ratio, prefill share, two sizes, two attention, two FFN modes).
	agg, dis := s.Candidates[0].X, s.Candidates[55].X
	if len(agg) != 13 || len(dis) != 13 || agg[0] != 0 || dis[0] != 1 || dis[1] != 0 || dis[2] != 0 {
		t.Fatalf("encodings %v, %v", agg, dis)
	}
	if testing.Short() {
		t.Skip("30 replays")
	}
	res, err := RunSearch(context.Background(), f, exp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]int{}
	for _, e := range res.Evaluations {
		modes[f.ModeOf(e.Config["parallel_configs"])]++
	}
	var md strings.Builder
	writeDeploymentDims(&md, res)
	const want = "deployment_mode disagg won: 2530.5 ms against 2790.9 for agg (-9.3 %)."
	if len(res.Evaluations) != 30 || modes[config.ModeAgg] == 0 || modes[config.ModeDisagg] == 0 || !strings.Contains(md.String(), want) {
		t.Errorf("%d evaluations (%v); report:\n%s\nwant %q", len(res.Evaluations), modes, md.String(), want)
	}
}

// Random search draws the branch first, so both modes are sampled.
func TestProjectedRandomDrawsBothModes(t *testing.T) {
	f := seedFile(t, "parallel_configs=[]", "gpu_budget=8", "deployment_mode=[disagg, agg]", "router_mode=kv_router",
		"overlap_score_credit=1.0", "prefill_load_scale=1.0", "router_temperature=0.0")
	s, err := NewSpace(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newProposer(Random, s, 3)
	if err != nil {
		t.Fatal(err)
	}
	picks, err := p.next(nil, make([]bool, len(s.Candidates)), 10)
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]int{}
	for _, c := range picks {
		modes[f.ModeOf(s.Candidates[c].Config["parallel_configs"])]++
	}
	if len(picks) != 10 || modes[config.ModeAgg] == 0 || modes[config.ModeDisagg] == 0 {
		t.Errorf("picks %v: modes %v", picks, modes)
	}
}

// Each branch's candidates vary only its own mode's engine keys: agg_max_num_seqs splits the
// 12 aggregated fleets, decode_max_num_seqs the 44 pairs, 112 candidates of the 224 points.
func TestBranchesIgnoreTheOtherModesKeys(t *testing.T) {
	f, _ := derivedSeed(t, "gpu_budget=8", "deployment_mode=[agg, disagg]", "agg_max_num_seqs=[256, 512]", "decode_max_num_seqs=[64, 256]")
	s, err := NewSpace(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	variants := 0
	for _, c := range s.Candidates {
		variants += c.Variants
		_, a := c.Config["agg_max_num_seqs"]
		_, d := c.Config["decode_max_num_seqs"]
		if disagg := f.ModeOf(c.Config["parallel_configs"]) == config.ModeDisagg; a == disagg || d != disagg {
			t.Fatalf("%s: agg key %v, decode key %v", c.Key, a, d)
		}
	}
	if len(s.Candidates) != 112 || variants != 224 {
		t.Errorf("%d candidates of %d points", len(s.Candidates), variants)
	}
}
