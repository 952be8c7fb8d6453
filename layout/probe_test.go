package layout

import (
	"fmt"
	"testing"

	"github.com/routerlab/routerlab/model"
)

// The seed's model on B200 under a 32-GPU budget, context 131072: the memory arithmetic and the
// embedded tables decide which shapes are derived and which are skipped, and why.
func TestSeedModelDerivedSpace(t *testing.T) {
	d := model.SeedDeployment()
	moe, err := IsMoE(d.ModelName)
	if err != nil || !moe {
		t.Fatalf("MiniMax-M2.5 MoE: %v %v", moe, err)
	}
	vllm, _ := RulesFor("vllm")
	sp := Space{MoE: true, Rules: vllm, Budget: 32, MaxSeqLen: d.ContextLength}
	kept, skipped, err := sp.Shapes(ModelProbe(d))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(kept); got != "[tp2-dp1-moetp1-ep2 tp2-dp1-moetp2-ep1 tp4-dp1-moetp1-ep4 tp4-dp1-moetp4-ep1]" {
		t.Errorf("kept %s", got)
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Shape.String()] = s.Reason
	}
	if r := reasons["tp8-dp1-moetp1-ep8"]; r != "no step-time table of layout tp8-adp1-moetp1-moeep8 at the checkpoint's precision (routerlab model list)" {
		t.Errorf("tp8 EP8: %q", r)
	}
	if r := reasons["tp1-dp2-moetp1-ep2"]; r != "no step-time table of a rank of layout tp1-adp2-moetp1-moeep2 (tp 1) at the checkpoint's precision (routerlab model list)" {
		t.Errorf("DEP 2: %q", r)
	}
	for s, r := range reasons {
		t.Logf("skipped %s: %s", s, r)
	}
	if len(kept)+len(skipped) != 16 { // 2, 4, 8, 16 GPUs × TEP, DEP, TP, DTP
		t.Errorf("%d shapes", len(kept)+len(skipped))
	}
	agg, _, _ := sp.Agg(ModelProbe(d))
	if len(agg) != 2*16+2*8 {
		t.Errorf("%d agg configurations, want 48", len(agg))
	}
	w, err := model.NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	fit, _ := ModelProbe(d)(Shape{4, 1, 1, 4})
	if fit.KVTokens != int64(w.Capacity().NumGPUBlocks)*64 || fit.Untimed != "" {
		t.Errorf("TEP4 KV %d tokens (%q), the seed worker's %d blocks", fit.KVTokens, fit.Untimed, w.Capacity().NumGPUBlocks)
	}
}
