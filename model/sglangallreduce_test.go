package model

import (
	"math"
	"testing"
)

// TestStagedAllReduce: on 8 GPUs a message between SGLang's last one-stage row (64 K BF16
// elements, 128 KB) and the switch (256 KB) is priced along the one-stage rows' last segment,
// not toward the two-stage row above it; from the switch the two-stage rows price it; on 2 GPUs
// (one stage at every size) and on 4 (switch at 512 KB) the rows between are interpolated as
// measured. The embedded H200 DeepSeek-V3 table's all-reduces at 16 tokens (224 KB, one stage)
// are its 61 layers' two such messages.
func TestStagedAllReduce(t *testing.T) {
	rows := series{{8192, 5.16}, {16384, 5.65}, {32768, 6.40}, {65536, 7.83}, {131072, 14.04}, {262144, 14.92}}
	for _, c := range []struct {
		gpus      int
		elems, us float64
	}{
		{8, 65536, 7.83},
		{8, 114688, 7.83 + (7.83-6.40)*1.5},
		{8, 131072, 14.04},
		{8, 196608, 14.48},
		{8, 16384, 5.65},
		{4, 114688, 7.83 + (14.04-7.83)*0.75},
		{2, 114688, 7.83 + (14.04-7.83)*0.75},
	} {
		if got := stagedAllReduce(rows, c.gpus, allreduceElemSize)(c.elems); math.Abs(got-c.us) > 1e-9 {
			t.Errorf("%d GPUs, %.0f elements: %.3f µs, want %.3f", c.gpus, c.elems, got, c.us)
		}
	}

	const name = "deepseek-v3_h200_sxm_sglang-0.5.9_tp8-adp1-moetp8-moeep1.json.gz"
	tb := embeddedTable(t, name)
	var srcs []Source
	ars, err := readParquet[allreduceRow](sharedAICDir(t), "h200_sxm/comm/sglang/0.5.9/custom_allreduce_perf.parquet", &srcs)
	if err != nil {
		t.Fatal(err)
	}
	var pts []point
	for _, r := range ars {
		if r.Dtype == allreduceElemType && r.GPUs == 8 && r.Mode == "sglang_graph" {
			pts = append(pts, point{float64(r.Size), msToUS(r.Latency)})
		}
	}
	measured := newSeries(pts)
	i := -1
	for j := range tb.Collective.Values {
		if axisNode(j) == 16 {
			i = j
		}
	}
	if i < 0 {
		t.Fatal("no axis node at 16 tokens")
	}
	x := 16.0 * float64(tb.LLM.Hidden)
	want := float64(tb.LLM.Layers) * 2 * stagedAllReduce(measured, 8, allreduceElemSize)(x)
	if got := tb.Collective.Values[i]; math.Abs(got-want) > 0.01 {
		t.Errorf("%s: all-reduces at 16 tokens %.3f µs, want %.3f", name, got, want)
	}
	if across := float64(tb.LLM.Layers) * 2 * measured.at(x, 1); across-want < 250 {
		t.Errorf("%s: all-reduces at 16 tokens %.0f µs, interpolated across the switch %.0f: want some 0.3 ms less", name, want, across)
	}
}
