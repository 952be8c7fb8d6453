package model

import (
	"math"
	"testing"
)

// TestCollectorTopKCopies: the SGLang Triton rows at one expert-parallel rank lose the
// collector's three routing copies (3 µs each on H200, AIConfigurator's constant latency), and
// no other rows do. The embedded H200 DeepSeek-V3 table's experts at one token are the 0.5.9
// power-law row and the fused shared expert's balanced row, both less their copies: 58 layers
// × 9 µs under the rows as measured.
func TestCollectorTopKCopies(t *testing.T) {
	for _, c := range []struct {
		rel, kernel string
		ep          int
		want        bool
	}{
		{"h200_sxm/moe/sglang/0.5.9/moe_perf.parquet", sglangTritonMoE, 1, true},
		{"h200_sxm/moe/sglang/0.5.6.post2/moe_perf.parquet", sglangTritonMoE, 1, true},
		{"h200_sxm/moe/sglang/0.5.10/moe_perf.parquet", sglangTritonMoE, 1, true},
		{"h200_sxm/moe/sglang/0.5.9/moe_perf.parquet", sglangTritonMoE, 8, false},
		{"h100_sxm/moe/sglang/0.5.6.post2/moe_perf.parquet", sglangTritonMoE, 1, false},
		{"b200_sxm/moe/sglang/0.5.9/moe_perf.parquet", sglangTritonMoE, 1, true},
		{"h200_sxm/moe/sglang/0.5.14/moe_perf.parquet", sglangTritonMoE, 1, false},
		{"b200_sxm/moe/sglang/0.5.14/moe_perf.parquet", "sglang_flashinfer_trtllm_moe", 1, false},
		{"h200_sxm/moe/vllm/0.19.0/moe_perf.parquet", sglangTritonMoE, 1, false},
	} {
		if got := collectorTopKCopies(c.rel, c.kernel, c.ep); got != c.want {
			t.Errorf("%s %s moe_ep %d: %v, want %v", c.rel, c.kernel, c.ep, got, c.want)
		}
	}

	const name = "deepseek-v3_h200_sxm_sglang-0.5.9_tp8-adp1-moetp8-moeep1.json.gz"
	tb := embeddedTable(t, name)
	copies := tb.GPU.topKCopiesUS(1, 8, 256)
	if copies < 9 || copies > 9.1 {
		t.Errorf("H200, one token top-8 of 256: copies %.3f µs, want 3 × 3 µs and a few ns", copies)
	}
	var srcs []Source
	rows, err := readParquet[moeRow](sharedAICDir(t), "h200_sxm/moe/sglang/0.5.9/moe_perf.parquet", &srcs)
	if err != nil {
		t.Fatal(err)
	}
	row := func(tokens int64, dist string) float64 {
		for _, r := range rows {
			if r.Kernel == sglangTritonMoE && r.Dtype == "fp8_block" && r.Hidden == 7168 && r.Inter == 2048 && r.TopK == 8 &&
				r.Experts == 256 && r.MoETP == 8 && r.MoEEP == 1 && r.Tokens == tokens && r.Distribution == dist {
				return msToUS(r.Latency)
			}
		}
		t.Fatalf("no %s row at %d tokens", dist, tokens)
		return 0
	}
	layers := float64(tb.LLM.MoELayers())
	routed := row(1, moeDistribution) - copies
	shared := (row(32, "balanced") - tb.GPU.topKCopiesUS(32, 8, 256)) / 256
	want := layers * (routed + shared)
	if got := tb.MoE.Values[0]; math.Abs(got-want) > 0.01 {
		t.Errorf("%s: experts at one token %.3f µs, want %.0f × (%.2f + %.3f) = %.3f", name, got, layers, routed, shared, want)
	}
	asMeasured := layers * (row(1, moeDistribution) + row(32, "balanced")/256)
	if d := asMeasured - tb.MoE.Values[0]; d < 0.5e3 || d > 0.55e3 {
		t.Errorf("%s: experts at one token %.0f µs under the rows as measured, want about 58 × 9", name, d)
	}
}
