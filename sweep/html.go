package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/plot/vg"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/report"
)

// HTML is report.html: the report's tables with its charts inline as SVG, one self-contained
// file. Like report.md it depends only on the result, so identical sweeps give identical files.
func (r *Result) HTML() ([]byte, error) {
	figs, err := r.Figures()
	if err != nil {
		return nil, err
	}
	byName := map[string]report.Figure{}
	for _, f := range figs {
		byName[f.Name] = f
	}
	s := r.Search
	f := s.File
	b := s.BestEvaluation()
	pg := &report.Page{Title: "routerlab sweep: " + f.Name}
	fig := func(names ...string) {
		for _, n := range names {
			if x, ok := byName[n]; ok {
				pg.Figure(x)
			}
		}
	}
	pg.Para("Goal: %s. Algorithm %s, seed %d; at most %d rounds × %d candidates. Search: first %d requests of %s; %d of %d canonical configurations evaluated; stop: %s.",
		s.Objective, f.Sweep.Algorithm, f.Sweep.Seed, s.Rounds, f.Sweep.CandidatesPerRound, b.Runs[0].RequestsCompleted,
		f.Workload.TracePath, len(s.Evaluations), len(s.Space.Candidates), s.Stop)

	pg.Heading("Best configuration")
	var rows [][]string
	for _, d := range s.Space.Dims {
		if v, ok := b.Config[d.Key]; ok {
			rows = append(rows, []string{d.Key, v})
		}
	}
	pg.Table([]string{"knob", "value"}, rows)
	pg.Para("On the search requests: %s %s %s.", strings.TrimPrefix(s.Objective.String(), "minimise "), ff(b.Value, 2), s.Objective.Unit())
	s.poolsPage(pg)
	s.spacePage(pg, fig)

	if v := r.Validation; v != nil {
		pg.Heading(fmt.Sprintf("Validation on %d requests", v.Requests))
		head := []string{"configuration", "mean e2e ms", "95 % interval", "mean TTFT ms", "mean TPOT ms", "req/s", "output tok/s", "prefix reuse"}
		sla := f.Goal.SLAText()
		if sla != "" {
			head = append(head, "SLO met", "goodput req/s")
		}
		rows = nil
		for _, run := range v.Runs {
			m := run.Metrics
			ci := "–"
			if run.MeanE2E != nil {
				ci = fmt.Sprintf("[%s, %s]", ff(run.MeanE2E.LowMS, 1), ff(run.MeanE2E.HighMS, 1))
			}
			row := []string{run.Name, ff(m.MeanE2EMS, 1), ci, ff(m.MeanTTFTMS, 1), ff(m.MeanTPOTMS, 2), ff(m.RequestThroughput, 2),
				ff(m.OutputThroughput, 0), ff(m.PrefixCacheReusedRatio, 3)}
			if g := m.Goodput; g != nil {
				row = append(row, ff(100*g.Attainment, 1)+" %", ff(g.RequestsPerS, 2))
			}
			rows = append(rows, row)
		}
		pg.Table(head, rows)
		if d := v.Paired; d != nil {
			pg.Para("Paired per-request e2e difference best − default_kv over the same %d requests: mean %s ms, %.0f %% bootstrap interval [%s, %s] ms (%d resamples).",
				d.Requests, ff(d.MeanMS, 1), 100*d.Level, ff(d.LowMS, 1), ff(d.HighMS, 1), d.Resamples)
		}
		if sla != "" {
			pg.Para("SLO: %s. SLO met: the share of requests within every bound; goodput: those requests per second, as vLLM's benchmark_serving counts them.", sla)
		}
		fig("validation", "cdf-ttft", "cdf-tpot", "cdf-e2e")
		for _, run := range v.Runs {
			fig("load-"+run.Name, "prefix-hit-"+run.Name)
		}
		if len(v.Saturation) > 0 {
			pg.Heading("prefill_load_scale saturation")
			pg.Para("Search requests, other knobs at the winner's values.")
			rows = nil
			for _, row := range v.Saturation {
				from := "added"
				if row.Searched {
					from = "search"
				}
				m := row.Metrics
				rows = append(rows, []string{row.PrefillLoadScale, ff(m.E2EMS, 1), ff(m.TTFTMS, 1), ff(m.TPOTMS, 2), ff(m.PrefixReuse, 3), strconv.Itoa(row.Runs), from})
			}
			pg.Table([]string{"prefill_load_scale", "mean e2e ms", "mean TTFT ms", "mean TPOT ms", "prefix reuse", "n", "from"}, rows)
			fig("saturation")
		}
	}

	pg.Heading("Convergence")
	fig("convergence")

	report.FingerprintTable(pg, s.Experiment)

	pg.Heading("All evaluations, best first")
	rows = nil
	for rank, i := range s.Ranked() {
		e := &s.Evaluations[i]
		m := e.Metrics
		rows = append(rows, []string{strconv.Itoa(rank + 1), e.Key, ff(e.Value, 2), ff(m.E2EMS, 1), ff(m.TTFTMS, 1), ff(m.TPOTMS, 2),
			ff(m.OutputTokS, 0), ff(m.PrefixReuse, 3), strconv.Itoa(len(e.Runs)), strconv.Itoa(e.Round)})
	}
	pg.Table([]string{"rank", "configuration", s.Objective.Target + " " + s.Objective.Unit(), "mean e2e ms", "mean TTFT ms",
		"mean TPOT ms", "output tok/s", "prefix reuse", "n", "round"}, rows)
	return pg.HTML()
}

// Figures are the report's charts: convergence, saturation, validation bars, latency CDFs
// and fleet heatmaps per validation run (those the result has data for).
func (r *Result) Figures() ([]report.Figure, error) {
	s := r.Search
	var figs []report.Figure
	values := make([]float64, len(s.Evaluations))
	for i, e := range s.Evaluations {
		values[i] = e.Value
	}
	unit := fmt.Sprintf("%s (%s)", objectiveName(s.Objective), s.Objective.Unit())
	p, err := report.Convergence(values, s.BestSoFar(), unit)
	if err != nil {
		return nil, err
	}
	figs = append(figs, report.Figure{Name: "convergence", Plot: p,
		Caption: fmt.Sprintf("Every evaluation's %s on the search requests and the best so far, over %d evaluations.", objectiveName(s.Objective), len(values))})
	if front, err := s.frontFigure(); err != nil {
		return nil, err
	} else if front != nil {
		figs = append(figs, *front)
	}
	v := r.Validation
	if v == nil {
		return figs, nil
	}
	if len(v.Saturation) > 0 {
		var x, y []float64
		labels := map[float64]string{}
		for i, row := range v.Saturation {
			x = append(x, float64(i))
			labels[float64(i)] = row.PrefillLoadScale
			y = append(y, s.Objective.Value(row.Metrics))
		}
		p, err := report.Lines("prefill_load_scale saturation", "prefill_load_scale (other knobs at the winner's)", unit,
			[]report.Series{{X: x, Y: y}}, false, labels)
		if err != nil {
			return nil, err
		}
		figs = append(figs, report.Figure{Name: "saturation", Plot: p,
			Caption: fmt.Sprintf("The goal's %s on the search requests at each prefill_load_scale, evenly spaced.", objectiveName(s.Objective))})
	}
	var dots []report.Interval
	for _, run := range v.Runs {
		d := report.Interval{Name: run.Name, Value: run.Metrics.MeanE2EMS}
		if run.MeanE2E != nil {
			d.Low, d.High = run.MeanE2E.LowMS, run.MeanE2E.HighMS
		}
		dots = append(dots, d)
	}
	p, lo, hi, err := report.Intervals(fmt.Sprintf("Validation on %d requests", v.Requests), "mean e2e latency (ms)", dots)
	if err != nil {
		return nil, err
	}
	figs = append(figs, report.Figure{Name: "validation", Plot: p, Width: 12 * vg.Centimeter, Height: 8 * vg.Centimeter,
		Caption: fmt.Sprintf("Mean e2e latency of each validation run (dot) with its %.0f %% bootstrap interval over requests (bar). "+
			"The axis is zoomed to %s–%s ms to show the differences: it does not start at 0.", 100*bootstrapLevel, ff(lo, 0), ff(hi, 0))})
	if len(v.Reports) != len(v.Runs) {
		return figs, nil
	}
	runFigs, err := v.runFigures()
	if err != nil {
		return nil, err
	}
	return append(figs, runFigs...), nil
}

// runFigures are the charts drawn from the validation runs' reports alone: the latency
// CDFs and each run's fleet heatmaps. Validate starts them beside the bootstrap intervals,
// which the other charts need, and keeps them (v.built); without them they are drawn here.
func (v *Validation) runFigures() ([]report.Figure, error) {
	if v.built != nil {
		return v.built.figs, v.built.err
	}
	return drawRunFigures(v.Runs, v.Reports)
}

// builtFigures are runFigures drawn ahead.
type builtFigures struct {
	figs []report.Figure
	err  error
}

// drawRunFigures draws the CDFs and each run's heatmaps at once, one goroutine each, and
// returns them in that order (the first error in that order).
func drawRunFigures(runs []Validated, reps []*engine.Report) ([]report.Figure, error) {
	names := make([]string, len(runs))
	for i, run := range runs {
		names[i] = run.Name
	}
	parts := make([][]report.Figure, 1+len(reps))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	wg.Go(func() { parts[0], errs[0] = report.LatencyCDFs(names, reps) })
	sc := report.SharedFleetScale(reps)
	for i, rep := range reps {
		wg.Go(func() { parts[1+i], errs[1+i] = report.FleetHeatmaps(names[i], rep, sc) })
	}
	wg.Wait()
	var figs []report.Figure
	for i, p := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		figs = append(figs, p...)
	}
	return figs, nil
}

func objectiveName(o Objective) string {
	if o.Target == "pareto" {
		return "geometric mean of tok/s per GPU and per user"
	}
	return targetWords[o.Target]
}
