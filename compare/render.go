package compare

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/report"
)

func g4(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e12 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func rel(m Metric) string {
	if math.IsNaN(m.Rel) {
		return "–"
	}
	return fmt.Sprintf("%+.2f %%", 100*m.Rel)
}

// rows are the metric table: metric, base, other, Δ, Δ %.
func (c *Comparison) rows() [][]string {
	out := make([][]string, len(c.Metrics))
	for i, m := range c.Metrics {
		out[i] = []string{m.Key, g4(m.Base), g4(m.Other), g4(m.Abs), rel(m)}
	}
	return out
}

func (c *Comparison) pairedText(p Paired) string {
	return fmt.Sprintf("%s: mean %+.2f ms, %.0f %% bootstrap interval [%+.2f, %+.2f] ms over %d requests (%d resamples)",
		p.Metric, p.MeanMS, 100*p.Level, p.LowMS, p.HighMS, p.Requests, p.Resamples)
}

// sloNote says which SLO the goodput rows count under when a run's was counted here from its
// per-request records; "" otherwise (goal.sla: the runs' own fingerprints say it).
func (c *Comparison) sloNote() string {
	if !c.Base.DefaultSLO && !c.Other.DefaultSLO {
		return ""
	}
	return "goodput.*: SLO " + config.Default().Goal.SLAText() + ", counted from the per-request records"
}

// WriteText prints the comparison as tables.
func (c *Comparison) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "A: %s (%s, %d requests)\nB: %s (%s, %d requests)\n\n", c.Base.Path, c.Base.Kind, c.Base.Summary.RequestsCompleted,
		c.Other.Path, c.Other.Kind, c.Other.Summary.RequestsCompleted)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tA\tB\tB − A\tchange\t")
	for _, r := range c.rows() {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if note := c.sloNote(); note != "" {
		fmt.Fprintln(w, note)
	}
	fmt.Fprintln(w)
	if len(c.Paired) > 0 {
		fmt.Fprintln(w, "paired per-request differences B − A:")
		for _, p := range c.Paired {
			fmt.Fprintln(w, "  "+c.pairedText(p))
		}
	} else {
		fmt.Fprintln(w, c.NoPairing)
	}
	fmt.Fprintln(w)
	if len(c.Changes) == 0 {
		fmt.Fprintln(w, "settings: the same experiment")
		return nil
	}
	fmt.Fprintln(w, "settings that differ (A → B):")
	for _, ch := range c.Changes {
		fmt.Fprintln(w, "  "+ch.String())
	}
	return nil
}

// HTML is the comparisons as one self-contained page: per comparison the metric table, the
// paired intervals, the settings that differ; then the latency distributions of every run
// that kept per-request records.
func HTML(cs []*Comparison) ([]byte, error) {
	pg := &report.Page{Title: "routerlab compare"}
	for _, c := range cs {
		pg.Heading(fmt.Sprintf("%s against %s", c.Other.Path, c.Base.Path))
		pg.Para("A: %s (%s, %d requests). B: %s (%s, %d requests).", c.Base.Path, c.Base.Kind, c.Base.Summary.RequestsCompleted,
			c.Other.Path, c.Other.Kind, c.Other.Summary.RequestsCompleted)
		pg.Table([]string{"metric", "A", "B", "B − A", "change"}, c.rows())
		if note := c.sloNote(); note != "" {
			pg.Para("%s", note)
		}
		if len(c.Paired) > 0 {
			var rows [][]string
			for _, p := range c.Paired {
				rows = append(rows, []string{p.Metric, fmt.Sprintf("%+.2f", p.MeanMS), fmt.Sprintf("[%+.2f, %+.2f]", p.LowMS, p.HighMS), strconv.Itoa(p.Requests)})
			}
			pg.Para("Paired per-request differences B − A, %.0f %% bootstrap intervals (%d resamples):", 100*c.Paired[0].Level, c.Paired[0].Resamples)
			pg.Table([]string{"metric", "mean ms", "interval ms", "requests"}, rows)
		} else {
			pg.Para("%s", c.NoPairing)
		}
		if len(c.Changes) == 0 {
			pg.Para("Settings: the same experiment.")
		} else {
			rows := make([][]string, len(c.Changes))
			for i, ch := range c.Changes {
				rows[i] = []string{ch.Key, ch.Old, ch.New}
			}
			pg.Para("Settings that differ:")
			pg.Table([]string{"setting", "A", "B"}, rows)
		}
	}
	figs, err := Figures(cs)
	if err != nil {
		return nil, err
	}
	if len(figs) > 0 {
		pg.Heading("Distributions")
		for _, f := range figs {
			pg.Figure(f)
		}
	}
	return pg.HTML()
}

// Figures are the comparison page's charts: the latency distributions of every run that kept
// per-request records, one line per run.
func Figures(cs []*Comparison) ([]report.Figure, error) {
	var names []string
	var reps []*engine.Report
	add := func(r *Run) {
		for _, n := range names {
			if n == r.Path {
				return
			}
		}
		if len(r.Requests) > 0 {
			names, reps = append(names, r.Path), append(reps, &engine.Report{Requests: r.Requests})
		}
	}
	for _, c := range cs {
		add(c.Base)
		add(c.Other)
	}
	if len(reps) == 0 {
		return nil, nil
	}
	return report.LatencyCDFs(names, reps)
}
