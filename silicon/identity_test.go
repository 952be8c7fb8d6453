package silicon

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// The silicon part of the simulator digest writes the same bytes twice, parses both formats,
// replays a row of every measuring run and reaches every skip it is there for.
func TestCanonicalValidationDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	start := time.Now()
	if err := canonicalValidation(&a); err != nil {
		t.Fatal(err)
	}
	t.Logf("canonical validation: %v, %d bytes", time.Since(start), a.Len())
	if err := canonicalValidation(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two runs of the canonical validation differ")
	}
	if strings.Contains(a.String(), "error:") {
		t.Fatalf("a canonical validation failed:\n%s", a.String())
	}
	sample, _ := canonicalRows()
	rows, err := Parse(strings.NewReader(sample), "sample")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(context.Background(), rows, Options{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	// A run whose model, GPU, precision and backend have no table at any layout tried is
	// skipped with the loader's reason (MiniMax-M2.5 FP8 on H100, Qwen3-32B FP8 on H100 …);
	// every other run's row and the converted DEP row are validated.
	runs := len(InferenceXRuns())
	skips := map[string]int{}
	for _, r := range rep.Rows {
		if r.Skipped != "" {
			skips[r.Skipped[:min(len(r.Skipped), 20)]]++
		}
	}
	noTable, skipRuns, rankNoTable := skips["model: no step-time "], 0, -1 // -1: the DEP row below
	for _, r := range InferenceXRuns() {
		if r.Skip != "" {
			skipRuns++ // its row is skipped with the run's reason
		}
	}
	for reason, n := range skips {
		if strings.HasPrefix(reason, "attention_dp ") {
			rankNoTable += n // a run whose script chose attention DP, without a table of its rank
		}
	}
	if len(rows) != runs+5 || rep.Validated != runs-noTable-skipRuns-rankNoTable+1 || noTable > runs/4 {
		t.Errorf("%d rows, %d validated, %d without tables, %d of runs not replayed; want %d rows, all but those validated, at most a quarter without tables",
			len(rows), rep.Validated, noTable, skipRuns, runs+5)
	}
	for _, want := range []string{"attention_dp 4 (DEP)", "pp_size 2: pipeline ", "labels tp 4, attenti", "mode disagg: prefill"} {
		if n := skips[want]; n != 1 && !(want == "attention_dp 4 (DEP)" && n > 1) { // and runs' rows on attention ranks
			t.Errorf("no row skipped as %q…; skips: %v", want, skips)
		}
	}
}
