package model

import (
	"math"
	"strings"
	"testing"
)

func TestParseMoEShape(t *testing.T) {
	if got, err := ParseMoEShape("3584,3072,896,16"); err != nil || got != (MoEShape{3584, 3072, 896, 16}) {
		t.Fatalf("ParseMoEShape: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "3584,3072,896", "3584,3072,896,0", "3584,3072,8,16", "a,b,c,d", "-1,2,3,1", "3584,3072,896,16,8", "3584,3072,896,16x", " 3584,3072,896,16"} {
		if _, err := ParseMoEShape(bad); err == nil || !strings.Contains(err.Error(), "hidden,inter,experts,topk") {
			t.Errorf("ParseMoEShape(%q): %v", bad, err)
		}
	}
}

// A row of N' tokens at another shape is read at the tokens that give each expert as many
// rows; its latency scales with the layer's expert work. The own shape maps to itself.
func TestTransferMoE(t *testing.T) {
	gptOSS, marlin := MoEShape{2880, 2880, 128, 4}, MoEShape{3584, 3072, 896, 16}
	tokens, latency := transferMoE(gptOSS, marlin)
	if math.Abs(tokens-4.0/7) > 1e-12 || math.Abs(latency-128.0*2880*2880/(896*3584*3072)) > 1e-12 {
		t.Fatalf("transfer: tokens × %g, latency × %g", tokens, latency)
	}
	if tk, l := transferMoE(gptOSS, gptOSS); tk != 1 || l != 1 {
		t.Fatalf("own shape: tokens × %g, latency × %g", tk, l)
	}
}

// Importing experts measured at another shape reads that shape's rows, says so in the table
// (Extrapolated, the kernel words) and prices differently from the model's own rows; a shape
// with no rows is a clear error naming it.
func TestImportMoEShapeTransfer(t *testing.T) {
	dir := sharedAICDir(t)
	o := ImportOptions{Model: "openai/gpt-oss-120b", HardwareSKU: "h200_sxm", Backend: "vllm", BackendVersion: "0.18.0",
		Layouts: layouts("1,1,1")}
	own, err := Import(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	o.MoE = MoEKernel{Version: "0.24.0", Source: "vllm_compressedtensorsw4a4mxfp4moe_marlin_marlinexperts_situ_as_silu", Quant: "w4a16_mxfp4",
		Shape: MoEShape{3584, 3072, 896, 16}}
	moved, err := Import(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	a, b := own[0], moved[0]
	if !strings.Contains(strings.Join(b.Extrapolated, "\n"), "transferred to this model's hidden 2880") ||
		!strings.Contains(strings.Join(b.Kernels, "\n"), "measured at hidden 3584 inter 3072 top-16 of 896 experts") {
		t.Fatalf("the transfer is not stated:\n%s\n%s", strings.Join(b.Extrapolated, "\n"), strings.Join(b.Kernels, "\n"))
	}
	for i := range a.GEMM.Values {
		if a.GEMM.Values[i] != b.GEMM.Values[i] || a.Elementwise.Values[i] != b.Elementwise.Values[i] {
			t.Fatalf("node %d: the transfer moved more than the experts", i)
		}
	}
	at := func(g Grid, x float64) float64 { c := newCurve(g.Values, 1); return c.at(x) }
	if r := at(b.MoE, 8192) / at(a.MoE, 8192); r < 1.3 || r > 2.5 {
		t.Fatalf("Marlin's rows transferred to 8,192 tokens: %.2f× the Triton rows", r)
	}
	o.MoE.Shape = MoEShape{3584, 3072, 896, 8}
	if _, err := Import(dir, o); err == nil || !strings.Contains(err.Error(), "hidden 3584 inter 3072 top-8 of 896 experts") {
		t.Fatalf("a shape without rows: %v", err)
	}
}
