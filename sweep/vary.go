package sweep

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/report"
)

// VaryPoint is one replay of a one-key sweep (routerlab vary): the key's value, its place
// on the x axis, the trace it replayed, and the summary.
type VaryPoint struct {
	Value   string         `json:"value"`
	X       float64        `json:"x"`
	Trace   string         `json:"trace"`
	Summary engine.Summary `json:"summary"`
}

// varyMetrics are what a one-key sweep charts: tail and mean TTFT, and the fleet's churn and
// cost (0 for a static fleet).
var varyMetrics = []struct {
	name, label string
	get         func(engine.Summary) float64
}{
	{"vary-p99-ttft", "p99 TTFT (ms)", func(s engine.Summary) float64 { return s.P99TTFTMS }},
	{"vary-mean-ttft", "mean TTFT (ms)", func(s engine.Summary) float64 { return s.MeanTTFTMS }},
	{"vary-p99-itl", "p99 ITL (ms)", func(s engine.Summary) float64 { return s.P99ITLMS }},
	{"vary-scaling-events", "scaling events", func(s engine.Summary) float64 {
		if s.Fleet == nil {
			return 0
		}
		return float64(s.Fleet.ScalingEvents)
	}},
	{"vary-gpu-hours", "GPU-hours", func(s engine.Summary) float64 {
		if s.Fleet == nil {
			return 0
		}
		return s.Fleet.GPUHours
	}},
}

// VaryFigures draws each metric against the key's value: one line per trace and, with
// several traces, their median.
func VaryFigures(key, xLabel string, points []VaryPoint) ([]report.Figure, error) {
	var traces []string
	for _, p := range points {
		if !slices.Contains(traces, p.Trace) {
			traces = append(traces, p.Trace)
		}
	}
	var figs []report.Figure
	for _, m := range varyMetrics {
		var series []report.Series
		byX := map[float64][]float64{}
		for _, tr := range traces {
			s := report.Series{Name: tr}
			for _, p := range points {
				if p.Trace == tr {
					v := m.get(p.Summary)
					s.X, s.Y = append(s.X, p.X), append(s.Y, v)
					byX[p.X] = append(byX[p.X], v)
				}
			}
			series = append(series, s)
		}
		if len(traces) > 1 {
			med := report.Series{Name: "median"}
			for x := range byX {
				med.X = append(med.X, x)
			}
			sort.Float64s(med.X)
			for _, x := range med.X {
				med.Y = append(med.Y, medianOf(byX[x]))
			}
			series = append(series, med)
		}
		p, err := report.Lines(m.label+" against "+key, xLabel, m.label, series, false, nil)
		if err != nil {
			return nil, err
		}
		figs = append(figs, report.Figure{Name: m.name, Plot: p,
			Caption: fmt.Sprintf("%s at each value of %s, one line per trace%s.", m.label, key, map[bool]string{true: " and their median"}[len(traces) > 1])})
	}
	return figs, nil
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// VaryTable is the points as table rows, in order.
func VaryTable(key string, points []VaryPoint) ([]string, [][]string) {
	head := []string{key, "trace", "p99 TTFT (ms)", "mean TTFT (ms)", "p99 ITL (ms)", "scaling events", "GPU-hours", "completed"}
	var rows [][]string
	for _, p := range points {
		row := []string{p.Value, p.Trace}
		for _, m := range varyMetrics {
			row = append(row, strconv.FormatFloat(m.get(p.Summary), 'f', -1, 64))
		}
		rows = append(rows, append(row, strconv.Itoa(p.Summary.RequestsCompleted)))
	}
	return head, rows
}

// VaryHTML is vary.html: the table, the charts and the experiment.
func VaryHTML(key, xLabel string, points []VaryPoint, fp config.Fingerprint) ([]byte, error) {
	pg := &report.Page{Title: "routerlab vary: " + key}
	pg.Para("The experiment replayed at each value of %s, on each trace; everything else as the file and --set give it.", key)
	head, rows := VaryTable(key, points)
	pg.Table(head, rows)
	figs, err := VaryFigures(key, xLabel, points)
	if err != nil {
		return nil, err
	}
	for _, f := range figs {
		pg.Figure(f)
	}
	report.FingerprintTable(pg, fp)
	return pg.HTML()
}
