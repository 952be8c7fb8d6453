package backend

import (
	"strings"
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/tui"
)

// Fit moves a deployment onto tables that exist, nearest first, and says why (issue 31: 6 of
// 8 models failed on b200 with the seed's tp4·ep4; Llama-70B ran only as "tp4·moe_tp4").
func TestCatalogFit(t *testing.T) {
	c, err := newCatalog(model.SeedDeployment())
	if err != nil {
		t.Fatal(err)
	}
	seed := tui.Deployment{Model: "MiniMaxAI/MiniMax-M2.5", GPU: "b200_sxm", Layout: "tp4·ep4"}
	for _, tc := range []struct {
		model, gpu, layout  string // where Fit starts
		wantGPU, wantLayout string
		note                string
	}{
		// Unchanged when the tables exist.
		{"MiniMaxAI/MiniMax-M2.5", "b200_sxm", "tp4·ep4", "b200_sxm", "tp4·ep4", ""},
		// A dense model on its own GPU: the same GPUs per worker, no expert split in the name.
		{"meta-llama/Llama-3.1-70B", "h200_sxm", "tp4·ep4", "h200_sxm", "tp4",
			"layout tp4·ep4 → tp4 (a dense model has no experts to split; all: tp1 fp8, tp2 fp8, tp4, tp4 fp8, tp8, tp8 fp8)"},
		// No table at the checkpoint's precision on b200: the nearest is FP8 at 4 GPUs.
		{"meta-llama/Llama-3.1-70B", "b200_sxm", "tp4·ep4", "b200_sxm", "tp4 fp8",
			"layout tp4·ep4 → tp4 fp8 (a dense model has no experts to split; all: tp1 fp8, tp1 nvfp4, tp2 fp8, tp2 nvfp4, tp4 fp8, tp4 nvfp4, tp8 fp8, tp8 nvfp4)"},
		// No tables on the GPU: the model's next GPU, then its nearest layout there.
		{"Qwen/Qwen3-32B", "b200_sxm", "tp4·ep4", "h100_sxm", "tp4",
			"Qwen3-32B has no tables on b200_sxm, so hardware_sku h100_sxm; layout tp4·ep4 → tp4 (a dense model has no experts to split; all: tp1, tp1 fp8, tp2, tp4, tp4 fp8, tp8)"},
		// An 8-GPU-only model from a 4-GPU layout: the nearest by GPUs per worker, same split.
		{"deepseek-ai/DeepSeek-V3", "b200_sxm", "tp4·ep4", "b200_sxm", "tp8·ep8",
			"layout tp4·ep4 → tp8·ep8 (the nearest there; all: tp8·ep8, tp8·moe_tp8)"},
	} {
		d := seed
		d.Model, d.GPU, d.Layout = tc.model, tc.gpu, tc.layout
		got, note := c.Fit(d)
		if got.GPU != tc.wantGPU || got.Layout != tc.wantLayout || note != tc.note {
			t.Errorf("Fit(%s on %s, %s) = %s, %s, %q; want %s, %s, %q", tc.model, tc.gpu, tc.layout, got.GPU, got.Layout, note, tc.wantGPU, tc.wantLayout, tc.note)
		}
		if _, err := c.option(got.Model, got.GPU, got.Layout); err != nil {
			t.Errorf("Fit gave a deployment without tables: %v", err)
		}
	}
	// No dense model's layout carries an expert split.
	for _, m := range c.Models() {
		for _, g := range c.GPUs(m) {
			for _, l := range c.Layouts(m, g) {
				if !c.moe[m] && (strings.Contains(l, "·ep") || strings.Contains(l, "moe_tp")) {
					t.Errorf("dense %s on %s offers %q", m, g, l)
				}
			}
		}
	}
}
