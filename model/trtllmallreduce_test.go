package model

import (
	"math"
	"strings"
	"testing"
)

// TestWithLamportRows: TensorRT-LLM 1.2.0rc5's Hopper all-reduce rows at 2 and 4 GPUs below
// 1 MB take the 1.3.0rc10 row of the same GPU count, size and mode; a 1 MB row, an 8-GPU row and
// another dtype keep theirs; a missing later row is an error, not a silent keep.
func TestWithLamportRows(t *testing.T) {
	row := func(gpus, size int64, dtype string, ms float64) allreduceRow {
		return allreduceRow{Dtype: dtype, GPUs: gpus, Size: size, Latency: ms}
	}
	rows := []allreduceRow{
		row(4, 32768, allreduceElemType, 0.0115),  // 8 tokens of 4,096: replaced
		row(4, 262144, allreduceElemType, 0.0119), // 512 KB: replaced
		row(4, 524288, allreduceElemType, 0.0132), // 1 MB: kept
		row(2, 8192, allreduceElemType, 0.0099),   // replaced
		row(8, 32768, allreduceElemType, 0.0049),  // 8 GPUs: kept
		row(4, 32768, "float16", 0.0200),          // another dtype: kept
	}
	later := []allreduceRow{
		row(4, 32768, allreduceElemType, 0.0037), row(4, 262144, allreduceElemType, 0.0078),
		row(4, 524288, allreduceElemType, 0.0129), row(2, 8192, allreduceElemType, 0.0030),
		row(8, 32768, allreduceElemType, 0.0048),
	}
	got, err := withLamportRows(rows, later)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.0037, 0.0078, 0.0132, 0.0030, 0.0049, 0.0200}
	for i, w := range want {
		if got[i].Latency != w {
			t.Errorf("row %d (%d GPUs, %d elements, %s): %.4f ms, want %.4f", i, got[i].GPUs, got[i].Size, got[i].Dtype, got[i].Latency, w)
		}
	}
	if rows[0].Latency != 0.0115 {
		t.Error("withLamportRows changed its input")
	}
	if _, err := withLamportRows(rows, later[1:]); err == nil {
		t.Error("no error for a 4-GPU row the later collection lacks")
	}
	for _, c := range []struct {
		b       Backend
		version string
		sku     string
		want    bool
	}{
		{BackendTRTLLM, trtllmVersion, "h100_sxm", true}, {BackendTRTLLM, trtllmVersion, "h200_sxm", true},
		{BackendTRTLLM, trtllmVersion, "b200_sxm", false}, {BackendTRTLLM, trtllmLamportVersion, "h100_sxm", false},
		{BackendSGLang, trtllmVersion, "h100_sxm", false},
	} {
		if got := trtllmAllReduceMismeasured(c.b, c.version, c.sku); got != c.want {
			t.Errorf("%s %s on %s: %v, want %v", c.b, c.version, c.sku, got, c.want)
		}
	}
}

// TestQwen3235BAllReducesAtEightTokens: the embedded Qwen3-235B TRT-LLM H100 tables price a
// decode step of 8 tokens with 94 layers × 2 all-reduces of 32,768 elements at 1.3.0rc10's
// 4-GPU row (3.67 µs) at TEP 4, not 1.2.0rc5's 11.50 µs, and at 1.2.0rc5's own 8-GPU row
// (4.91 µs) at TEP 8.
func TestQwen3235BAllReducesAtEightTokens(t *testing.T) {
	for _, c := range []struct {
		tp       int
		rowUS    float64
		repriced bool
	}{{4, 3.67, true}, {8, 4.91, false}} {
		d := SeedDeployment()
		d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion = "Qwen/Qwen3-235B-A22B-FP8", "h100_sxm", BackendTRTLLM, trtllmVersion
		d.Quantization, d.TP, d.MoETP, d.MoEEP = "fp8", c.tp, 1, c.tp
		tb, err := loadTable(d)
		if err != nil {
			t.Fatal(err)
		}
		const layers = 94
		ar := newCurve(tb.Collective.Values, 1)
		if got, want := ar.at(8), layers*2*c.rowUS; math.Abs(got-want) > 0.01*want {
			t.Errorf("TEP %d: all-reduces at 8 tokens %.0f µs, want %d × 2 × %.2f = %.0f", c.tp, got, layers, c.rowUS, want)
		}
		noted := false
		for _, k := range tb.Kernels {
			noted = noted || strings.Contains(k, trtllmLamportVersion)
		}
		if noted != c.repriced {
			t.Errorf("TEP %d: kernels name the %s rows: %v, want %v", c.tp, trtllmLamportVersion, noted, c.repriced)
		}
	}
}
