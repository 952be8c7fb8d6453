package config

import (
	"strings"
	"testing"
)

// The seed with parallel_configs left empty: the layouts of MiniMax-M2.5 on B200 that hold a
// 131072-token sequence and have tables (TEP and TP at 2 and 4 GPUs), every replica count up
// to gpu_budget 32: 16 + 16 + 8 + 8 configurations, and the other twelve shapes skipped with
// their reasons.
func TestDerivedParallelConfigs(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"parallel_configs=[]"}); err != nil {
		t.Fatal(err)
	}
	if !f.DerivedParallel() {
		t.Fatal("not derived")
	}
	vals := f.Values("parallel_configs")
	if len(vals) != 48 || vals[0].Text != "tp2-dp1-moetp1-ep2-x1" || vals[47].Text != "tp4-dp1-moetp4-ep1-x8" {
		t.Fatalf("%d configs: %v … %v", len(vals), vals[0], vals[len(vals)-1])
	}
	if f.GPUBudget != 32 {
		t.Errorf("gpu_budget %d, want 32 (a derived list never raises it)", f.GPUBudget)
	}
	if n := len(f.DerivedSkipped()); n != 12 {
		t.Errorf("%d skipped:\n%s", n, f.SkippedText())
	}
	if !strings.Contains(f.SkippedText(), "tp8-dp1-moetp1-ep8 (tep): no step-time table of layout tp8-adp1-moetp1-moeep8") {
		t.Errorf("skipped:\n%s", f.SkippedText())
	}
	// A floor and a smaller budget: only fleets of 12 to 16 GPUs.
	if err := f.Apply([]string{"min_gpu_budget=12", "gpu_budget=16"}); err != nil {
		t.Fatal(err)
	}
	vals = f.Values("parallel_configs")
	for _, v := range vals {
		var pc ParallelConfig
		for _, p := range f.list("parallel_configs").parallel {
			if p.String() == v.Text {
				pc = p
			}
		}
		if pc.GPUs() < 12 || pc.GPUs() > 16 {
			t.Errorf("%s takes %d GPUs", v.Text, pc.GPUs())
		}
	}
	if len(vals) != 3*2+2*2 { // TEP2/TP2 × 6..8, TEP4/TP4 × 3..4
		t.Errorf("%d configs in [12, 16]: %v", len(vals), vals)
	}
	fp := f.Fingerprint()
	if v, _ := fp.Get("search_space.min_gpu_budget"); v != "12" {
		t.Errorf("fingerprint min_gpu_budget %q", v)
	}
	// Setting a list again ends the derivation.
	if err := f.Apply([]string{"parallel_configs=[{tp: 4, moe_ep: 4, replicas: 2}]"}); err != nil || f.DerivedParallel() {
		t.Errorf("pinned again: %v derived %v", err, f.DerivedParallel())
	}
	if _, ok := Default().Fingerprint().Get("search_space.min_gpu_budget"); ok {
		t.Error("the seed's fingerprint names min_gpu_budget")
	}
}

func TestDerivedParallelErrors(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"parallel_configs=[]", "hardware_sku=[b200_sxm, h200_sxm]"}, "needs one hardware_sku"},
		{[]string{"parallel_configs=[]", "gpu_budget=1"}, "no parallel configuration of MiniMaxAI/MiniMax-M2.5 on b200_sxm holds a 131072-token sequence within gpu_budget 1"},
		{[]string{"min_gpu_budget=40"}, "search_space.min_gpu_budget: 40 is more than gpu_budget 32"},
	} {
		err := Default().Apply(c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.sets, err, c.want)
		}
	}
	y := strings.Replace(string(seedYAML), "  parallel_configs:\n    - {tp: 4, moe_ep: 4, replicas: 8}\n", "  parallel_configs: []\n", 1)
	if _, err := Parse([]byte(strings.Replace(y, "gpu_budget: 32", "gpu_budget: 1", 1)), "x.yaml"); err == nil ||
		!strings.HasPrefix(err.Error(), "x.yaml:11: search_space.parallel_configs: derived (left empty): no parallel configuration") {
		t.Errorf("file, budget 1: %v", err)
	}
	y = strings.Replace(y, "  parallel_configs: []\n", "  parallel_configs: []\n  min_gpu_budget: 64\n", 1)
	if _, err := Parse([]byte(y), "x.yaml"); err == nil || !strings.Contains(err.Error(), "x.yaml: search_space.min_gpu_budget: 64 is more than gpu_budget 32") {
		t.Errorf("file: %v", err)
	}
}

// A replay of the derived seed runs the reference's default: the whole budget (ratio 1), the
// engine size nearest the geometric centre of {2, 4} (a tie: the smaller, 2), TEP: 16 × TEP2.
func TestDerivedDefaultPoint(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"parallel_configs=[]"}); err != nil {
		t.Fatal(err)
	}
	v, err := f.At(f.DefaultPoint(), "parallel_configs")
	if err != nil || v.Text != "tp2-dp1-moetp1-ep2-x16" {
		t.Errorf("default %v %v", v, err)
	}
}

// Several backends: the sweep is the product of its lists, so a derived fleet must run on
// every listed backend. SGLang 0.5.9 and TRT-LLM 1.2.0rc5 time MiniMax-M2.5 on B200 at TP 4
// only: TEP4 and TP4 × 1..8 remain, and every deployment of the space builds a worker.
func TestDerivedParallelAcrossBackends(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"parallel_configs=[]", "backend=[vllm, sglang, trtllm]"}); err != nil {
		t.Fatal(err)
	}
	vals := f.Values("parallel_configs")
	if len(vals) != 16 || vals[0].Text != "tp4-dp1-moetp1-ep4-x1" || vals[15].Text != "tp4-dp1-moetp4-ep1-x8" {
		t.Fatalf("%d configs: %v", len(vals), vals)
	}
	if !strings.Contains(f.SkippedText(), "tp2-dp1-moetp1-ep2 (tep): sglang: no step-time table of layout tp2-adp1-moetp1-moeep2") {
		t.Errorf("skipped:\n%s", f.SkippedText())
	}
	if _, err := newExperiment(f, nil); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDeriveParallel is the cost of deriving the seed's space (every --set re-derives a
// derived file).
func BenchmarkDeriveParallel(b *testing.B) {
	f := Default()
	for b.Loop() {
		g := f.Clone()
		if err := g.Apply([]string{"parallel_configs=[]"}); err != nil {
			b.Fatal(err)
		}
	}
}
