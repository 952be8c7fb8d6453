package silicon

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/model"
)

// The silicon part of the simulator digest (config.SimulatorDigest): what `model validate`
// decides beyond a replay — how a CSV row is read, which run's settings replay it, how its
// labels are reinterpreted or skipped, the replay of a closed-loop benchmark and the errors
// it summarises. config cannot import this package, so the digest of every binary that links
// it (routerlab does, through `model validate`) covers it.
func init() { config.AddSimulatorPart("silicon", canonicalValidation) }

// canonicalRows is a CSV in AIConfigurator's sample format: one row per measuring run
// (InferenceXRuns, dated inside the run, on the smallest layout the tables price, or skipped
// with the loader's reason where none does) and rows that take the reinterpretations and skips — a DEP row, a converted DEP row, a
// pipeline-parallel one, labels of no worker, a disaggregated one — then the seed's shared
// format. Four clients, 1,024 prompt and 64 output tokens: small replays.
func canonicalRows() (sample, shared string) {
	var b strings.Builder
	b.WriteString(strings.Join(sampleColumns, ",") + "\n")
	var backend model.Backend // the run's: each row is replayed on its own backend
	row := func(src, model, system, precision, version, mode string, isl, osl, batch, tp, pp, adp, moetp, moeep int) {
		fmt.Fprintf(&b, "%q,%s,%s,%s,%s,%s,%s,%d,%d,,,%d,%d,%d,%d,%d,%d,95.5,9.25\n",
			src, backend, version, model, system, precision, mode, isl, osl, batch, tp, pp, adp, moetp, moeep)
	}
	for i, run := range InferenceXRuns() {
		backend = run.Backend.OrDefault()
		date := run.From
		if date == "" {
			date = run.To
		}
		if run.Undated {
			date = ""
		}
		// A row of the run's branch of its script (RunShape), else 1,024 prompt and 64 output
		// tokens at c 4 on the smallest layout priced.
		isl, osl, conc, tp := cmp.Or(run.Shape.ISL, 1024), cmp.Or(run.Shape.OSL, 64), max(run.Shape.MinConcurrency, 4), run.Shape.TP
		if tp == 0 {
			tp = servingTP(run, Row{Backend: string(backend), Model: run.Model, System: run.System, Precision: run.Precision, Measured: date, BackendVersion: run.version(), ISL: isl, OSL: osl, Concurrency: conc})
		}
		src := fmt.Sprintf("config_id=%d; silicon_concurrency=%d; measured=%s", i, conc, date)
		if run.Shape.NoConfigID {
			src = fmt.Sprintf("silicon_concurrency=%d; measured=%s", conc, date)
		}
		if i%2 == 1 { // the MoE and attention labels left blank, as collections of dense runs do
			fmt.Fprintf(&b, "%q,%s,%s,%s,%s,%s,agg,%d,%d,,,%d,%d,1,,,,95.5,9.25\n", src, backend, run.version(), run.Model, run.System, run.Precision, isl, osl, conc, tp)
			continue
		}
		row(src, run.Model, run.System, run.Precision, run.version(), "agg", isl, osl, conc, tp, 1, 1, tp, 1)
		if i == 0 {
			row(src, run.Model, run.System, run.Precision, run.version(), "agg", 1024, 64, 2, 2, 1, 2, 1, 4)    // converted DEP
			row(src, run.Model, run.System, run.Precision, run.version(), "agg", 1024, 64, 4, 1, 1, 4, 1, 4)    // DEP: skipped
			row(src, run.Model, run.System, run.Precision, run.version(), "agg", 1024, 64, 4, 2, 2, 1, 2, 1)    // pipeline: skipped
			row(src, run.Model, run.System, run.Precision, run.version(), "agg", 1024, 64, 4, 4, 1, 1, 1, 2)    // no worker: skipped
			row(src, run.Model, run.System, run.Precision, run.version(), "disagg", 1024, 64, 4, 2, 1, 1, 2, 1) // skipped
		}
	}
	shared = strings.Join(columns, ",") + "\n" +
		"1,4,2026-04-08,0.19.0,fp8,fp8,fp8,1024,64,4,2,1,2,1,79.3,9.37\n" +
		"2,8,2026-04-23,0.19.0,fp8,fp8,fp8,2048,64,8,4,1,1,4,89.1,10.8\n" +
		"3,8,2026-04-23,0.19.0,fp8,fp8,fp8,2048,64,8,4,1,1,4,91.0,10.2\n"
	return b.String(), shared
}

// servingTP is the smallest tensor-parallel size of 1, 2, 4 and 8 whose worker the embedded
// tables price for row r under run's settings with room for a KV cache (8 when none does: the
// row is then skipped with the loader's reason). DeepSeek-R1's one-GPU tables, there for
// the ranks of attention data parallelism, leave no KV cache beside the whole model.
func servingTP(run Run, r Row) int {
	for _, tp := range []int{1, 2, 4, 8} {
		r.TP, r.AttentionDP, r.MoETP, r.MoEEP = tp, 1, tp, 1
		if w, err := model.NewWorker(run.Benchmark.deployment(r)); err == nil && w.Capacity().NumGPUBlocks > 0 {
			return tp
		}
	}
	return 8
}

// canonicalValidation validates the canonical rows under the inferencex profile and the
// shared-format rows under both profiles, as `model validate` does without flags, writing
// each report as JSON; a validation that fails writes its error.
func canonicalValidation(w io.Writer) error {
	sample, shared := canonicalRows()
	for _, c := range []struct {
		name, csv string
		profile   Benchmark
	}{{"sample", sample, InferenceX()}, {"shared", shared, InferenceX()}, {"shared ideal", shared, Ideal()}} {
		fmt.Fprintln(w, "validate", c.name)
		rows, err := Parse(strings.NewReader(c.csv), c.name)
		if err != nil {
			fmt.Fprintln(w, "error:", err)
			continue
		}
		rep, err := Validate(context.Background(), rows, Options{Benchmark: c.profile, Seed: 7})
		if err != nil {
			fmt.Fprintln(w, "error:", err)
			continue
		}
		if err := rep.WriteJSON(w); err != nil {
			return err
		}
	}
	return nil
}
