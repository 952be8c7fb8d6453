package model

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestFillsMeasuredRank pins which step sizes the sampler of the TRT-LLM 1.2.0rc5 expert rows
// rounded to all zeros under expert parallelism: DeepSeek's 256 experts at 1 and 2 tokens,
// Qwen3-235B's 128 at 1 token, gpt-oss's 128 top-4 at 1 and 2; never at moe_ep 1, never
// above the narrow range.
func TestFillsMeasuredRank(t *testing.T) {
	if m := narrowMeanWeight(1.2); math.Abs(m-0.2614) > 1e-3 {
		t.Errorf("mean narrow-range weight at alpha 1.2: %.4f, want 0.2614", m)
	}
	for _, c := range []struct {
		tokens, experts, topK, ep int
		alpha                     float64
		want                      bool
	}{
		{1, 256, 8, 8, 1.2, true}, {2, 256, 8, 8, 1.2, true}, {4, 256, 8, 8, 1.2, false},
		{2, 256, 8, 4, 1.2, true}, {2, 256, 8, 1, 1.2, false},
		{1, 128, 8, 4, 1.2, true}, {2, 128, 8, 4, 1.2, false},
		{2, 128, 4, 4, 1.2, true}, {4, 128, 4, 4, 1.2, false},
		{2, 256, 8, 8, 1.01, true}, {64, 256, 8, 8, 1.2, false},
	} {
		if got := fillsMeasuredRank(c.tokens, c.experts, c.topK, c.ep, c.alpha); got != c.want {
			t.Errorf("%d tokens, %d experts top-%d, moe_ep %d, alpha %g: %v, want %v", c.tokens, c.experts, c.topK, c.ep, c.alpha, got, c.want)
		}
	}
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{"h200_sxm/moe/trtllm/1.2.0rc5/moe_perf.parquet", true},
		{"b200_sxm/moe/trtllm/1.3.0rc10/moe_perf.parquet", false},
		{"b200_sxm/moe/vllm/0.24.0/moe_perf.parquet", false},
		{"h200_sxm/moe/sglang/0.5.9/moe_perf.parquet", false},
	} {
		if got := firstExpertsFillRel(c.rel); got != c.want {
			t.Errorf("%s: %v, want %v", c.rel, got, c.want)
		}
	}
	for _, d := range []string{"balanced", "power_law_1", "power_law_x"} {
		if _, ok := powerLawAlpha(d); ok {
			t.Errorf("%q read as a power law", d)
		}
	}
}

// TestDeepSeekH200ExpertsFromFourTokens: the embedded DeepSeek-V3 TRT-LLM H200 TEP 8 table
// prices a decode step of 1 to 4 tokens at the measured 4-token row of its CUTLASS fp8_block
// experts (0.0891 ms a layer, 58 MoE layers), not at the 2-token row (0.2135 ms: 16 experts on
// the measured rank) that the running maximum carried up to 16 tokens before.
func TestDeepSeekH200ExpertsFromFourTokens(t *testing.T) {
	d := SeedDeployment()
	d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion = "deepseek-ai/DeepSeek-V3", "h200_sxm", BackendTRTLLM, trtllmVersion
	d.Quantization, d.TP, d.MoETP, d.MoEEP = "", 8, 1, 8
	tb, err := loadTable(d)
	if err != nil {
		t.Fatal(err)
	}
	moe := newCurve(tb.MoE.Values, 1)
	const layers = 58
	four := moe.at(4)
	if math.Abs(four-layers*89.1) > layers*89.1*0.02 {
		t.Errorf("experts at 4 tokens: %.0f µs, want the 4-token row, %d × 89.1 µs", four, layers)
	}
	if one, two := moe.at(1), moe.at(2); one != four || two != four {
		t.Errorf("experts at 1 and 2 tokens: %.0f and %.0f µs, want the 4-token row's %.0f as their floor", one, two, four)
	}
	if x := moe.at(16); x >= layers*213.5 {
		t.Errorf("experts at 16 tokens: %.0f µs, at or above the 2-token row's %d × 213.5 µs", x, layers)
	}
}

// TestSGLangFirstFillExpertTables pins where the embedded tables read SGLang's expert rows
// drawn before aiconfigurator 13dadba3b (moesampler.go): of the expert-parallel tables
// (moe_ep > 1), only SGLang's seed, MiniMax-M2.5 on B200 at TEP 4, reads SGLang 0.5.9's
// expert table, whose fill put more than half of a narrow-range step on the measured rank;
// every validated SGLang expert-parallel group reads 0.5.10's or 0.5.14's (the round-robin)
// or vLLM's rows. A table that starts reading the 0.5.9 expert-parallel rows must be priced
// with that fill in mind, not by the TensorRT-LLM 1.2.0rc5 rule, which stays off for them.
func TestSGLangFirstFillExpertTables(t *testing.T) {
	var readers []string
	for _, name := range EmbeddedTables() {
		if !strings.HasSuffix(name, ".json.gz") {
			continue
		}
		tb := embeddedTable(t, name)
		if tb.Layout.MoEEP <= 1 {
			continue
		}
		for _, s := range tb.Sources {
			if strings.Contains(s.Path, "/moe/sglang/0.5.9/") {
				readers = append(readers, name)
				if firstExpertsFillRel(s.Path) {
					t.Errorf("%s: %s repriced by the 1.2.0rc5 rule", name, s.Path)
				}
			}
		}
	}
	if want := []string{"minimax-m2.5_b200_sxm_sglang-0.5.9_tp4-adp1-moetp1-moeep4.json.gz"}; !slices.Equal(readers, want) {
		t.Errorf("expert-parallel tables reading SGLang 0.5.9's expert rows: %v, want %v", readers, want)
	}
}
