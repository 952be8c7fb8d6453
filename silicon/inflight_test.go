package silicon

import (
	"math"
	"os"
	"strings"
	"testing"
)

// decodingInFlight is Little's law for a closed loop: with no wait before the first token
// every client is decoding; a TTFT as long as the decode leaves half of them.
func TestDecodingInFlight(t *testing.T) {
	for _, c := range []struct {
		c, osl     int
		ratio      float64
		ttft, tpot float64
		want       float64
	}{
		{64, 1001, 1, 0, 5, 64},    // no wait: all decoding
		{64, 1001, 1, 5000, 5, 32}, // 1,000 decode steps of 5 ms against a 5 s TTFT
		{10, 101, 0.8, 0, 10, 10},  // lengths 80…101
		{10, 101, 0.8, 895, 10, 5}, // mean output 90.5 tokens: 895 ms decoding
		{8, 1, 0.8, 100, 10, 0},    // one-token outputs never decode
	} {
		if got := decodingInFlight(c.c, c.osl, c.ratio, c.ttft, c.tpot); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("decodingInFlight(%d, %d, %g, %g, %g) = %g, want %g", c.c, c.osl, c.ratio, c.ttft, c.tpot, got, c.want)
		}
	}
}

// The nine gpt-oss-120b H100 rows labelled concurrency 512 (vLLM 0.11.2, 2025-12) decoded
// about a hundred requests at a time at every TP and length, where the B200 rows at
// concurrency 128 decoded all of theirs: docs/validation.md's reading of their TPOT.
func TestGptOSSH100C512RowsRanAboutAHundred(t *testing.T) {
	const path = "../../shared/aic/silicon_sample.csv"
	f, err := os.Open(path)
	if err != nil {
		t.Skip("../shared/aic/silicon_sample.csv not present: ", err)
	}
	defer f.Close()
	rows, err := Parse(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var c512, c128 int
	for _, r := range rows {
		if r.Backend != "vllm" || !strings.Contains(r.Model, "gpt-oss-120b") {
			continue
		}
		n := decodingInFlight(r.Concurrency, r.OSL, InferenceXRangeRatio, r.TTFTMS, r.TPOTMS)
		switch {
		case r.System == "h100_sxm" && r.Concurrency == 512:
			c512++
			if n < 85 || n > 100 {
				t.Errorf("line %d (tp %d, %d/%d): %.1f decoding of 512", r.Line, r.TP, r.ISL, r.OSL, n)
			}
		case r.System == "b200_sxm" && r.Concurrency == 128:
			c128++
			if n < 120 {
				t.Errorf("line %d (tp %d, %d/%d): %.1f decoding of 128", r.Line, r.TP, r.ISL, r.OSL, n)
			}
		}
	}
	if c512 != 9 || c128 == 0 {
		t.Fatalf("%d H100 rows at c 512 (want 9), %d B200 rows at c 128", c512, c128)
	}
}
