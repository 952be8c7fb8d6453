package sweep

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/report"
	"github.com/routerlab/routerlab/router"
)

// CurveRouter is one router setting of a load curve.
type CurveRouter struct {
	Name   string        `json:"name"`
	Router router.Config `json:"router"`
}

// CurvePoint is one replay of a load curve: a router setting at one concurrency.
type CurvePoint struct {
	Router      string         `json:"router"`
	Concurrency int            `json:"concurrency"`
	Summary     engine.Summary `json:"summary"`
	// Pareto marks the points no other point beats on both throughput (requests/s, higher)
	// and mean e2e latency (lower): the operating points worth choosing from.
	Pareto bool `json:"pareto"`
}

// Curve replays base under each router setting at each concurrency (closed loop) on the
// first `requests` requests, in parallel, and marks the Pareto front of throughput against
// mean e2e latency. Points come router by router, concurrencies ascending. progress (nil:
// none) hears each finished replay.
func Curve(ctx context.Context, sim Simulator, base engine.Config, routers []CurveRouter, concurrencies []int, requests int, progress func(done, total int)) ([]CurvePoint, error) {
	concurrencies = slices.Sorted(slices.Values(concurrencies))
	concurrencies = slices.Compact(concurrencies)
	var jobs []runJob
	var points []CurvePoint
	for _, r := range routers {
		for _, c := range concurrencies {
			if c < 1 {
				return nil, fmt.Errorf("sweep: curve concurrency %d: want ≥ 1 (closed loop)", c)
			}
			cfg := base
			cfg.Router, cfg.ReplayConcurrency = r.Router, c
			cfg.Router.BlockSize = base.Router.BlockSize
			jobs = append(jobs, runJob{cfg: cfg, requests: requests})
			points = append(points, CurvePoint{Router: r.Name, Concurrency: c})
		}
	}
	var done atomic.Int64
	err := runAll(ctx, withSlotMemory(sim), runtime.GOMAXPROCS(0), jobs, nil, func(j int, rep *engine.Report, _ time.Duration) error {
		points[j].Summary = rep.Summary // each job writes only its own slot
		if progress != nil {
			progress(int(done.Add(1)), len(jobs))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range points {
		p := points[i].Summary
		points[i].Pareto = !slices.ContainsFunc(points, func(q CurvePoint) bool {
			s := q.Summary
			return s.RequestThroughput >= p.RequestThroughput && s.MeanE2EMS <= p.MeanE2EMS &&
				(s.RequestThroughput > p.RequestThroughput || s.MeanE2EMS < p.MeanE2EMS)
		})
	}
	return points, nil
}

// CurveFigures draws the load curves: mean e2e latency and p90 TTFT against requests/s, one
// line per router setting along its concurrencies.
func CurveFigures(points []CurvePoint) ([]report.Figure, error) {
	var names []string
	for _, p := range points {
		if !slices.Contains(names, p.Router) {
			names = append(names, p.Router)
		}
	}
	var figs []report.Figure
	for _, m := range []struct {
		name, label string
		get         func(engine.Summary) float64
	}{
		{"curve-e2e", "mean e2e latency (ms)", func(s engine.Summary) float64 { return s.MeanE2EMS }},
		{"curve-ttft", "p90 TTFT (ms)", func(s engine.Summary) float64 { return s.P90TTFTMS }},
	} {
		var series []report.Series
		for _, n := range names {
			s := report.Series{Name: n}
			for _, p := range points {
				if p.Router == n {
					s.X, s.Y = append(s.X, p.Summary.RequestThroughput), append(s.Y, m.get(p.Summary))
				}
			}
			series = append(series, s)
		}
		p, err := report.Lines("Latency against throughput", "requests/s (concurrency rising along each line)", m.label, series, false, nil)
		if err != nil {
			return nil, err
		}
		figs = append(figs, report.Figure{Name: m.name, Plot: p,
			Caption: fmt.Sprintf("%s against requests/s for each router setting, one point per concurrency.", m.label)})
	}
	return figs, nil
}

// CurveHTML is curve.html: the table of points with the Pareto front marked, the charts and
// the experiment. sla describes goal.sla ("" if none).
func CurveHTML(points []CurvePoint, fp config.Fingerprint, sla string) ([]byte, error) {
	pg := &report.Page{Title: "routerlab curve: latency against throughput"}
	pg.Para("Each router setting replayed closed loop at each concurrency; ◆ marks the Pareto front: no other point has both more requests/s and lower mean e2e latency.")
	head, rows := CurveTable(points, sla != "")
	pg.Table(head, rows)
	if sla != "" {
		pg.Para("SLO: %s; goodput as vLLM's benchmark_serving counts it.", sla)
	}
	figs, err := CurveFigures(points)
	if err != nil {
		return nil, err
	}
	for _, f := range figs {
		pg.Figure(f)
	}
	report.FingerprintTable(pg, fp)
	return pg.HTML()
}

// CurveTable is the points as table rows (with SLO columns when goodput is known).
func CurveTable(points []CurvePoint, slo bool) ([]string, [][]string) {
	head := []string{"router", "concurrency", "req/s", "output tok/s", "mean TTFT ms", "p90 TTFT ms", "mean TPOT ms", "mean e2e ms", "p90 e2e ms"}
	if slo {
		head = append(head, "SLO met", "goodput req/s")
	}
	head = append(head, "Pareto")
	var rows [][]string
	for _, p := range points {
		s := p.Summary
		row := []string{p.Router, strconv.Itoa(p.Concurrency), ff(s.RequestThroughput, 2), ff(s.OutputThroughput, 0), ff(s.MeanTTFTMS, 1),
			ff(s.P90TTFTMS, 1), ff(s.MeanTPOTMS, 2), ff(s.MeanE2EMS, 1), ff(s.P90E2EMS, 1)}
		if slo {
			if g := s.Goodput; g != nil {
				row = append(row, ff(100*g.Attainment, 1)+" %", ff(g.RequestsPerS, 2))
			} else {
				row = append(row, "–", "–")
			}
		}
		mark := ""
		if p.Pareto {
			mark = "◆"
		}
		rows = append(rows, append(row, mark))
	}
	return head, rows
}
