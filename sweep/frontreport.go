package sweep

// The report's Pareto front and derived search space (report.md and report.html).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/routerlab/routerlab/report"
)

// frontRows are the front's table rows: configuration, tok/s/user, tok/s/GPU, GPUs.
func (s *Search) frontRows() [][]string {
	var rows [][]string
	for _, p := range s.ParetoFront() {
		rows = append(rows, []string{p.Key, ff(p.PerUser, 1), ff(p.PerGPU, 1), ff(p.GPUs, 0)})
	}
	return rows
}

var frontHead = []string{"configuration", "per-user tok/s", "tok/s per GPU", "GPUs"}

const frontTitle = "Pareto front: throughput per GPU against per-user throughput"

func (s *Search) frontText() string {
	return fmt.Sprintf("%d of the %d evaluations are on the front: no other evaluation serves more output tokens per GPU and per user at once (only feasible ones compete when any is feasible). Ordered by per-user throughput, the x axis.",
		len(s.ParetoFront()), len(s.Evaluations))
}

// skippedRows are the derived space's left-out shapes: shape, pattern, reason.
func (s *Search) skippedRows() [][]string {
	var rows [][]string
	for _, k := range s.File.DerivedSkipped() {
		rows = append(rows, []string{k.Shape.String(), k.Shape.Strategy(), k.Reason})
	}
	return rows
}

func (s *Search) derivedText() string {
	return fmt.Sprintf("search_space.parallel_configs was left empty: %d configurations derived within gpu_budget %d (docs/search-space.md); %d worker shapes were left out:",
		len(s.File.Values("parallel_configs")), s.File.GPUBudget, len(s.File.DerivedSkipped()))
}

// writeSpace writes the derived space's skipped shapes and the Pareto front, where there are.
func writeSpace(w *strings.Builder, s *Search) {
	table := func(head []string, rows [][]string) {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.ReplaceAll(strings.Join(r, " | "), "\n", " "))
		}
		w.WriteString("\n")
	}
	if s.File.DerivedParallel() {
		fmt.Fprintf(w, "## Derived parallel configurations\n\n%s\n\n", s.derivedText())
		table([]string{"shape", "pattern", "reason"}, s.skippedRows())
	}
	if rows := s.frontRows(); rows != nil {
		fmt.Fprintf(w, "## %s\n\n%s\n\n", frontTitle, s.frontText())
		table(frontHead, rows)
	}
}

// spacePage adds the same sections to the HTML report, the front with its chart.
func (s *Search) spacePage(pg *report.Page, fig func(...string)) {
	if s.File.DerivedParallel() {
		pg.Heading("Derived parallel configurations")
		pg.Para("%s", s.derivedText())
		pg.Table([]string{"shape", "pattern", "reason"}, s.skippedRows())
	}
	if rows := s.frontRows(); rows != nil {
		pg.Heading(frontTitle)
		pg.Para("%s", s.frontText())
		pg.Table(frontHead, rows)
		fig("pareto")
	}
}

// frontFigure draws every evaluation and the front; nil when the goal measured no front.
func (s *Search) frontFigure() (*report.Figure, error) {
	front := s.ParetoFront()
	if front == nil {
		return nil, nil
	}
	all := report.Series{Name: "each evaluation"}
	for _, e := range s.Evaluations {
		all.X = append(all.X, e.Metrics.OutputTokSPerUser)
		all.Y = append(all.Y, perGPU(e.Metrics.OutputTokS, e.Metrics))
	}
	line := report.Series{Name: "Pareto front (" + strconv.Itoa(len(front)) + ")"}
	for _, p := range front {
		line.X, line.Y = append(line.X, p.PerUser), append(line.Y, p.PerGPU)
	}
	p, err := report.Front("Throughput per GPU against per-user throughput", "per-user output tok/s", "output tok/s per GPU", all, line)
	if err != nil {
		return nil, err
	}
	return &report.Figure{Name: "pareto", Plot: p,
		Caption: fmt.Sprintf("Every evaluation on the search requests (%d) and the Pareto front: tokens per GPU against the rate each streaming user sees.", len(s.Evaluations))}, nil
}
