package silicon

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"runtime"
	"slices"
	"testing"
)

// Rows of other shapes than the shared ones (ISL 8192; two-GPU TP and TEP), from the published
// sample of AIConfigurator (see testdata/README.md): every one is validated, to the same targets.
// otherShapeRows are the 28 rows of other shapes from AIConfigurator's published sample.
func otherShapeRows(t *testing.T) []Row {
	t.Helper()
	const path = "testdata/aic_sample_b200_minimax_m2.5_fp8_other_shapes.csv"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := Parse(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestValidateOtherShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 28 closed-loop benchmarks; skipped in -short")
	}
	rep, err := Validate(context.Background(), otherShapeRows(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Validated != 28 || rep.Skipped != 0 {
		t.Fatalf("validated %d, skipped %d; want all 28", rep.Validated, rep.Skipped)
	}
	shapes := map[string]int{}
	for _, r := range rep.Rows {
		shapes[fmt.Sprintf("isl %d tp %d %s", r.ISL, r.TP, r.ValidatedAs)]++
	}
	if shapes["isl 8192 tp 4 TP"] != 7 || shapes["isl 8192 tp 2 TP"] != 5 || shapes["isl 1024 tp 2 TP"] != 8 || shapes["isl 1024 tp 2 TEP"] != 8 {
		t.Fatalf("shapes %v", shapes)
	}
	t.Logf("TTFT MAPE %.1f%%, TPOT MAPE %.1f%%", rep.TTFTMAPE, rep.TPOTMAPE)
	if rep.TTFTMAPE > TTFTMAPEBound || rep.TPOTMAPE > TPOTMAPEBound {
		t.Fatalf("TTFT MAPE %.1f%% (bound %g), TPOT MAPE %.1f%% (bound %g)", rep.TTFTMAPE, TTFTMAPEBound, rep.TPOTMAPE, TPOTMAPEBound)
	}
	// The long prompts, which the API server's tokenisation reaches: each ISL 8192 layout's
	// TTFT MAPE within 12 %, no per-concurrency bias above 10 % at c ≤ 32 (issue 19's
	// criterion; the mean signed error of the layouts' rows at that concurrency) and no row at
	// c ≤ 32 off by more than 11 % (TP 4 at c 4 reads −9.1 %, −10.4 % without the request path).
	byConc := map[int][]float64{}
	for _, tp := range []int{2, 4} {
		var sum float64
		n := 0
		for _, r := range rep.Rows {
			if r.ISL != 8192 || r.TP != tp {
				continue
			}
			sum += math.Abs(r.TTFTErrPct)
			n++
			if r.Concurrency <= 32 {
				byConc[r.Concurrency] = append(byConc[r.Concurrency], r.TTFTErrPct)
				if math.Abs(r.TTFTErrPct) > 11 {
					t.Errorf("line %d (ISL 8192, TP %d, c %d): TTFT %+.1f%%, want within 11 %%", r.Line, tp, r.Concurrency, r.TTFTErrPct)
				}
			}
		}
		if mape := sum / float64(n); n == 0 || mape > 12 {
			t.Errorf("ISL 8192 TP %d: TTFT MAPE %.1f%% over %d rows, want at most 12 %%", tp, mape, n)
		}
	}
	if len(byConc) != 4 {
		t.Fatalf("ISL 8192 concurrencies at most 32: %v, want 4, 8, 16, 32", byConc)
	}
	for _, c := range slices.Sorted(maps.Keys(byConc)) { // in order: the same failures print the same way every run
		errs := byConc[c]
		var sum float64
		for _, e := range errs {
			sum += e
		}
		if bias := sum / float64(len(errs)); math.Abs(bias) > 10 {
			t.Errorf("ISL 8192 at c %d: TTFT bias %+.1f%% over %d rows, want within 10 %%", c, bias, len(errs))
		}
	}
}

// Validate replays the distinct shapes at once: the report is the same on one core as on
// several, a repeated row takes its twin's prediction, and a skipped row stays in its place.
func TestValidateIsTheSameOnAnyNumberOfCores(t *testing.T) {
	if testing.Short() {
		t.Skip("replays four closed-loop benchmarks twice; skipped in -short")
	}
	all := otherShapeRows(t)
	rows := append(slices.Clone(all[:4]), all[0], all[1])
	rows[2].Unsupported = "skipped for the test"
	validate := func(procs int) *Report {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		rep, err := Validate(context.Background(), rows, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	one, many := validate(1), validate(4)
	if !reflect.DeepEqual(one, many) {
		t.Fatalf("one core and four disagree:\n%+v\n%+v", one.Rows, many.Rows)
	}
	if one.Validated != 5 || one.Skipped != 1 || one.Rows[2].Skipped != "skipped for the test" {
		t.Fatalf("validated %d, skipped %d (row 3: %q); want 5, 1, the row's own reason", one.Validated, one.Skipped, one.Rows[2].Skipped)
	}
	for _, twin := range [][2]int{{0, 4}, {1, 5}} {
		a, b := one.Rows[twin[0]], one.Rows[twin[1]]
		if a.PredTTFTMS == 0 || a.PredTTFTMS != b.PredTTFTMS || a.PredTPOTMS != b.PredTPOTMS {
			t.Errorf("rows %d and %d are the same measurement: predicted %v / %v and %v / %v", twin[0], twin[1], a.PredTTFTMS, a.PredTPOTMS, b.PredTTFTMS, b.PredTPOTMS)
		}
	}
}
