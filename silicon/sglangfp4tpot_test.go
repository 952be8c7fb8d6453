package silicon

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
)

// The SGLang DeepSeek NVFP4 groups on B200 under-predict TPOT (R1 −10.7 %, V3 −12.4 % bias),
// and the bias is the runs', not a decode-step component's: the same script's flags, checkpoint
// and client (but for its warm-up) ran twice, on 2025-11-10 in the lmsysorg/sglang:v0.5.3rc1
// image (no warm-up) and on 2026-03-25 in v0.5.9-cu130 (2 × CONC warm-ups), and the replay,
// one set of 0.5.9 tables for both, meets the 2026 rows and not the 2025 ones. The 2025 runs
// measured a slower TPOT than the 2026 runs at the same layout and shape — most at 8k
// prompts, where their TTFT was also seconds longer: prefills the older image ran slower,
// which every request decoding beside them waits through — and no table here measures the
// v0.5.3rc1 image's kernels (B200's SGLang collections start at 0.5.9). docs/backend-validation.md,
// "Worst groups and their diagnosis", has the per-component audit of the decode step.
func TestSGLangDeepSeekNVFP4TPOTByRun(t *testing.T) {
	rows := sampleRows(t, "replays the SGLang DeepSeek-R1 NVFP4 B200 rows; skipped in -short", func(r Row) bool {
		return r.Backend == "sglang" && r.Model == "deepseek-ai/DeepSeek-R1" && r.System == "b200_sxm" && r.Precision == "fp4" && r.Mode != "disagg"
	})
	// From the measurements alone: the 2025-11-10 rows against the 2026-03-25 rows of the same
	// expert-parallel width (2025's tp label; 2026's ep label), ISL, OSL and concurrency.
	type shape struct{ width, isl, osl, c int }
	width := func(r Row) int {
		if r.MoEEP > 1 {
			return r.MoEEP
		}
		return r.TP
	}
	y26 := map[shape]Row{}
	for _, r := range rows {
		if strings.HasPrefix(r.Measured, "2026-03-25") {
			y26[shape{width(r), r.ISL, r.OSL, r.Concurrency}] = r
		}
	}
	ratios := map[[2]int][]float64{} // by ISL, OSL: 2025 TPOT / 2026 TPOT
	var ttft8k []float64             // 2025 − 2026 TTFT at 8k prompts, ms
	for _, r := range rows {
		if !strings.HasPrefix(r.Measured, "2025-11-10") {
			continue
		}
		if q, ok := y26[shape{width(r), r.ISL, r.OSL, r.Concurrency}]; ok {
			ratios[[2]int{r.ISL, r.OSL}] = append(ratios[[2]int{r.ISL, r.OSL}], r.TPOTMS/q.TPOTMS)
			if r.ISL == 8192 {
				ttft8k = append(ttft8k, r.TTFTMS-q.TTFTMS)
			}
		}
	}
	median := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	r11, r18, r81 := median(ratios[[2]int{1024, 1024}]), median(ratios[[2]int{1024, 8192}]), median(ratios[[2]int{8192, 1024}])
	t.Logf("2025-11-10 over 2026-03-25 measured TPOT, median by ISL/OSL: 1k/1k %.3f (%d shapes), 1k/8k %.3f (%d), 8k/1k %.3f (%d); 8k prompts' TTFT %.0f–%.0f ms longer",
		r11, len(ratios[[2]int{1024, 1024}]), r18, len(ratios[[2]int{1024, 8192}]), r81, len(ratios[[2]int{8192, 1024}]), slices.Min(ttft8k), slices.Max(ttft8k))
	if r11 < 1.05 || r18 < 1.1 || r81 < 1.2 || slices.Min(ttft8k) < 4000 {
		t.Errorf("the 2025 runs no longer measure slower than the 2026 runs: TPOT ratios %.3f, %.3f, %.3f; 8k TTFT at least %.0f ms longer", r11, r18, r81, slices.Min(ttft8k))
	}

	rep, err := Validate(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type acc struct{ n, mape, bias float64 }
	by := map[string]*acc{}
	for _, r := range rep.Rows {
		if r.Skipped != "" {
			t.Errorf("line %d skipped: %s", r.Line, r.Skipped)
			continue
		}
		y := r.Measured[:4]
		if by[y] == nil {
			by[y] = &acc{}
		}
		by[y].n++
		by[y].mape += math.Abs(r.TPOTErrPct)
		by[y].bias += r.TPOTErrPct
	}
	a25, a26 := by["2025"], by["2026"]
	if a25 == nil || a26 == nil || a25.n != 36 || a26.n != 51 {
		t.Fatalf("want the 36 rows of 2025 and the 51 of 2026 validated, have %+v and %+v", a25, a26)
	}
	m25, b25, m26, b26 := a25.mape/a25.n, a25.bias/a25.n, a26.mape/a26.n, a26.bias/a26.n
	t.Logf("TPOT MAPE (bias): 2025 rows %.1f %% (%+.1f %%), 2026 rows %.1f %% (%+.1f %%)", m25, b25, m26, b26)
	// Regression bounds (nothing is fitted to these rows): at 4271e46 the 2025 rows were
	// 19.9 % (−19.9 %), the 2026 rows 5.2 % (−4.1 %); with the latent RMSNorms and the
	// shared-output add priced (model.mlaLatentNormsUnmeasured, model.sglangDeepSeekSharedAdd)
	// 17.5 % (−17.5 %) and 3.6 % (−1.2 %);
	// with the checkpoint's o_proj in NVFP4 (model.LLMSpec.OProjQuant: V2 quantises it, V3.1-NVFP4's
	// exclude_modules leave it) 18.5 % (−18.5 %) and 3.5 % (−2.4 %); with SGLang's custom
	// all-reduce priced on each side of its one-/two-stage switch (model.stagedAllReduce; these
	// runs fuse the all-reduce with FlashInfer's, not priced, so its rows stand in) 19.5 %
	// (−19.5 %) and 4.9 % (−3.9 %).
	if m26 > 4.93 || b26 < -3.88 || b26 > 0 || b25 > -15 {
		t.Errorf("TPOT: 2026 rows %.2f %% (%+.2f %%), want <= 4.93 %% and a bias in [−3.88, 0] %%; 2025 rows' bias %+.1f %%, want <= −15 %%", m26, b26, b25)
	}
}

// The SGLang DeepSeek-V3 NVFP4 group on B300 over-predicts TPOT (+10.1 % bias at 077d97f), most
// at 1k/1k and c 8–64, and the bias is the B300 run's speed, not a component priced apart from
// B200's: dsr1_fp4_b300.sh (9ebeafb4e) launches the server with dsr1_fp4_b200.sh's flags
// (12ba0ae07), and the replay prices a decode step of the same batch and context on B300's own
// tables (0.5.10; experts from its 0.5.14 flashinfer_trtllm rows) within 2 % of B200's. At
// 1k/1k and c 4–32 the B300 run measured a TPOT no slower than the B200 run of 2026-03-25 at
// the same expert-parallel width and concurrency (faster at seven of the eight, by 0.4–1.8 ms),
// though the client's tokenizer made its prompts some five times longer on the server
// (dsr1B300Client); the replay puts B300 above B200 at every one. What in the v0.5.10.post1
// image or the GPU makes the step faster is not established (docs/backend-validation.md, "Worst groups
// and their diagnosis", SGLang DeepSeek-V3 NVFP4 on B300), so nothing is repriced.
func TestSGLangDeepSeekNVFP4B300FasterThanB200(t *testing.T) {
	rows := sampleRows(t, "replays the SGLang DeepSeek-V3 NVFP4 B200 and B300 rows at 1k/1k; skipped in -short", func(r Row) bool {
		return r.Backend == "sglang" && r.Model == "deepseek-ai/DeepSeek-V3" && r.Precision == "fp4" && r.Mode != "disagg" &&
			r.ISL == 1024 && r.OSL == 1024 && r.Concurrency <= 32 &&
			((r.System == "b300_sxm" && strings.HasPrefix(r.Measured, "2026-04-17")) || (r.System == "b200_sxm" && strings.HasPrefix(r.Measured, "2026-03-25")))
	})
	rep, err := Validate(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type shape struct{ ep, c int }
	type pair struct{ measured, predicted float64 }
	by := map[string]map[shape]pair{"b200_sxm": {}, "b300_sxm": {}}
	for _, r := range rep.Rows {
		if r.Skipped != "" {
			t.Fatalf("line %d skipped: %s", r.Line, r.Skipped)
		}
		by[r.System][shape{r.MoEEP, r.Concurrency}] = pair{r.TPOTMS, r.PredTPOTMS}
	}
	shapes := slices.SortedFunc(maps.Keys(by["b300_sxm"]), func(a, b shape) int { return cmp.Or(a.ep-b.ep, a.c-b.c) })
	n := 0
	for _, s := range shapes {
		b3 := by["b300_sxm"][s]
		b2, ok := by["b200_sxm"][s]
		if !ok {
			continue
		}
		n++
		measured, replayed := b3.measured-b2.measured, b3.predicted-b2.predicted
		t.Logf("EP %d, c %2d: measured B300 %.2f, B200 %.2f ms (%+.2f); replayed %.2f, %.2f (%+.2f)",
			s.ep, s.c, b3.measured, b2.measured, measured, b3.predicted, b2.predicted, replayed)
		// Measured: B300 at most B200's TPOT (1 % for EP 4 c 16's 12.98 against 12.91 ms);
		// replayed: B300 above B200, by at least 0.5 ms more than measured.
		if b3.measured > 1.01*b2.measured || replayed <= 0 || replayed-measured < 0.5 {
			t.Errorf("EP %d, c %d: B300 measured %.2f against B200's %.2f ms, replayed %.2f against %.2f: the page says the B300 run is no slower and the replay at least 0.5 ms slower than that",
				s.ep, s.c, b3.measured, b2.measured, b3.predicted, b2.predicted)
		}
	}
	if n != 8 {
		t.Errorf("compared %d shapes, want 8 (EP 4 and 8 at c 4, 8, 16, 32)", n)
	}
}
