package layout

import (
	"fmt"
	"testing"
)

func TestWorkerShapes(t *testing.T) {
	vllm, _ := RulesFor("vllm")
	deepep, _ := RulesFor("sglang/deepep_moe")
	for _, c := range []struct {
		name string
		moe  bool
		r    Rules
		gpus int
		want string
	}{
		{"dense", false, vllm, 4, "[tp4-dp1-moetp4-ep1]"},
		{"moe one GPU has no pattern", true, vllm, 1, "[]"},
		{"moe 4 vllm", true, vllm, 4, "[tp1-dp4-moetp1-ep4 tp1-dp4-moetp4-ep1 tp4-dp1-moetp1-ep4 tp4-dp1-moetp4-ep1]"},
		{"sglang EP-only kernels drop MoE TP", true, deepep, 4, "[tp1-dp4-moetp1-ep4 tp4-dp1-moetp1-ep4]"},
		{"moe 2", true, vllm, 2, "[tp1-dp2-moetp1-ep2 tp1-dp2-moetp2-ep1 tp2-dp1-moetp1-ep2 tp2-dp1-moetp2-ep1]"},
	} {
		if got := fmt.Sprint(WorkerShapes(c.moe, c.r, c.gpus)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	strategies := map[string]string{}
	for _, s := range WorkerShapes(true, vllm, 8) {
		strategies[s.String()] = s.Strategy()
	}
	want := map[string]string{"tp1-dp8-moetp1-ep8": "dep", "tp1-dp8-moetp8-ep1": "dtp", "tp8-dp1-moetp1-ep8": "tep", "tp8-dp1-moetp8-ep1": "tp"}
	if fmt.Sprint(strategies) != fmt.Sprint(want) {
		t.Errorf("strategies %v, want %v", strategies, want)
	}
}

// The filters as data: each backend's rule refuses exactly its shapes.
func TestRulesAllow(t *testing.T) {
	for _, c := range []struct {
		backend string
		s       Shape
		ok      bool
	}{
		{"trtllm", Shape{2, 2, 1, 4}, false},
		{"vllm", Shape{2, 2, 1, 4}, true},
		{"vllm", Shape{4, 1, 2, 2}, false},
		{"trtllm", Shape{4, 1, 2, 2}, true},
		{"sglang", Shape{4, 1, 4, 1}, true},
		{"sglang/megamoe", Shape{4, 1, 4, 1}, false},
	} {
		r, err := RulesFor(c.backend)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.allows(c.s); got != c.ok {
			t.Errorf("%s allows %s: %v, want %v", c.backend, c.s, got, c.ok)
		}
	}
	if _, err := RulesFor("tensorrt"); err == nil {
		t.Error("an unknown backend was accepted")
	}
}

// fakeProbe: each GPU holds perGPU tokens of KV; attention DP has no table.
func fakeProbe(perGPU int64) Probe {
	return func(s Shape) (Fit, error) {
		f := Fit{KVTokens: perGPU * int64(s.TP)}
		if s.AttentionDP > 1 {
			f.Untimed = "no step-time table: attention DP"
		}
		return f, nil
	}
}

func TestAggEnumeration(t *testing.T) {
	vllm, _ := RulesFor("vllm")
	sp := Space{MoE: true, Rules: vllm, Budget: 8, MaxSeqLen: 1500}
	got, skipped, err := sp.Agg(fakeProbe(1000))
	if err != nil {
		t.Fatal(err)
	}
	want := "[tp2-dp1-moetp1-ep2-x1 tp2-dp1-moetp1-ep2-x2 tp2-dp1-moetp1-ep2-x3 tp2-dp1-moetp1-ep2-x4 " +
		"tp2-dp1-moetp2-ep1-x1 tp2-dp1-moetp2-ep1-x2 tp2-dp1-moetp2-ep1-x3 tp2-dp1-moetp2-ep1-x4 " +
		"tp4-dp1-moetp1-ep4-x1 tp4-dp1-moetp1-ep4-x2 tp4-dp1-moetp4-ep1-x1 tp4-dp1-moetp4-ep1-x2 " +
		"tp8-dp1-moetp1-ep8-x1 tp8-dp1-moetp8-ep1-x1]"
	if fmt.Sprint(got) != want {
		t.Errorf("agg\n got %v\nwant %s", got, want)
	}
	// DEP/DTP at 2, 4, 8 GPUs: KV 1000 ≤ 1500 tokens (tp 1), so KV is the reason named first.
	if len(skipped) != 6 || skipped[0].Reason != "its KV cache holds 1000 tokens, not more than the longest sequence (1500)" {
		t.Errorf("skipped %v", skipped)
	}
	sp.MinBudget = 8
	got, _, _ = sp.Agg(fakeProbe(1000))
	if fmt.Sprint(got) != "[tp2-dp1-moetp1-ep2-x4 tp2-dp1-moetp2-ep1-x4 tp4-dp1-moetp1-ep4-x2 tp4-dp1-moetp4-ep1-x2 tp8-dp1-moetp1-ep8-x1 tp8-dp1-moetp8-ep1-x1]" {
		t.Errorf("min_gpu_budget 8: %v", got)
	}
	// A KV cache must hold more than the longest sequence: 2000 tokens at TP 2 do not hold 2000.
	sp = Space{MoE: false, Rules: vllm, Budget: 4, MaxSeqLen: 2000}
	got, skipped, _ = sp.Agg(fakeProbe(1000))
	if fmt.Sprint(got) != "[tp4-dp1-moetp4-ep1-x1]" || len(skipped) != 2 {
		t.Errorf("dense: %v skipped %v", got, skipped)
	}
}

func TestDisaggPairs(t *testing.T) {
	vllm, _ := RulesFor("vllm")
	sp := Space{MoE: false, Rules: vllm, Budget: 6, MinBudget: 5, MaxSeqLen: 100}
	got, _, err := sp.Disagg(fakeProbe(1000))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range got {
		if g := p.GPUs(); g < 5 || g > 6 {
			t.Errorf("%s uses %d GPUs", p, g)
		}
		if p.Prefill.TP == 4 && p.Decode.TP == 2 {
			n++
		}
	}
	// Roles of at most 6 − 1 GPUs: tp1 × 1..5, tp2 × 1..2, tp4 × 1 (GPUs 1,2,3,4,5,2,4,4);
	// ordered pairs summing to 5: 10, to 6: 15.
	if n != 1 || len(got) != 25 {
		t.Errorf("%d pairs (want 25), %d of prefill tp4 × 1 + decode tp2 × 1 (want 1)", len(got), n)
	}
}
