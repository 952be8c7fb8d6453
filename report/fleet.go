package report

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot/vg"

	"github.com/routerlab/routerlab/engine"
)

// FleetFigures are a changing fleet's charts: the latency timeline (p50 and p99 TTFT of each
// minute's arrivals) and under it, on the same clock, the replicas serving, starting and
// draining. None for a static fleet.
func FleetFigures(rep *engine.Report) ([]Figure, error) {
	f := rep.Summary.Fleet
	if f == nil {
		return nil, nil
	}
	var figs []Figure
	if len(rep.Requests) > 0 {
		byMin := map[int][]float64{}
		for _, r := range rep.Requests {
			k := int(r.ArrivalMS / 60_000)
			byMin[k] = append(byMin[k], r.TTFTMS)
		}
		var x, p50, p99 []float64
		for _, k := range slices.Sorted(func(yield func(int) bool) {
			for k := range byMin {
				if !yield(k) {
					return
				}
			}
		}) {
			v := byMin[k]
			slices.Sort(v)
			x = append(x, float64(k)+0.5)
			p50 = append(p50, v[nearest(0.5, len(v))])
			p99 = append(p99, v[nearest(0.99, len(v))])
		}
		p, err := Lines("TTFT of each minute's arrivals", "time (min)", "TTFT (ms)", []Series{{"p50", x, p50}, {"p99", x, p99}}, false, nil)
		if err != nil {
			return nil, err
		}
		figs = append(figs, Figure{Name: "latency-timeline", Caption: "TTFT over the run, by the minute requests arrived", Plot: p, Width: 16 * vg.Centimeter, Height: 7 * vg.Centimeter})
	}
	end := math.Max(rep.Summary.DurationMS, f.Timeline[len(f.Timeline)-1].TimeMS)
	series := []Series{
		steps("serving", f.Timeline, end, func(p engine.FleetPoint) int { return p.Serving }),
		steps("starting", f.Timeline, end, func(p engine.FleetPoint) int { return p.Starting }),
		steps("draining", f.Timeline, end, func(p engine.FleetPoint) int { return p.Draining }),
	}
	if f.Prefill != nil { // a disaggregated fleet: each pool's serving workers too
		series = append(series,
			steps("prefill serving", f.Prefill.Timeline, end, func(p engine.FleetPoint) int { return p.Serving }),
			steps("decode serving", f.Decode.Timeline, end, func(p engine.FleetPoint) int { return p.Serving }))
	}
	p, err := Lines("Replicas", "time (min)", "workers", series, false, nil)
	if err != nil {
		return nil, err
	}
	return append(figs, Figure{Name: "replicas-timeline", Caption: "workers serving, starting and draining over the run (" +
		strconv.Itoa(f.ScalingEvents) + " scaling events)", Plot: p, Width: 16 * vg.Centimeter, Height: 6 * vg.Centimeter}), nil
}

// steps is one count of a fleet timeline as a step line in minutes: each point's count holds
// from its time to the next point's (the last to end).
func steps(name string, pts []engine.FleetPoint, end float64, count func(engine.FleetPoint) int) Series {
	s := Series{Name: name}
	for i, pt := range pts {
		next := end
		if i+1 < len(pts) {
			next = pts[i+1].TimeMS
		}
		for _, t := range []float64{pt.TimeMS, next} {
			s.X, s.Y = append(s.X, t/60_000), append(s.Y, float64(count(pt)))
		}
	}
	return s
}

// nearest is the nearest-rank index of the p-quantile of n sorted values.
func nearest(p float64, n int) int { return min(max(int(math.Ceil(p*float64(n)))-1, 0), n-1) }

// FleetSection adds a changing fleet's account to a replay's page (its charts are among
// ReplayFigures).
func FleetSection(pg *Page, s engine.Summary) {
	f := s.Fleet
	if f == nil {
		return
	}
	pg.Heading("Fleet")
	pg.Para("%.3f GPU-hours; peak %d workers; %d scaling events in %d planner ticks; %d failures, %d requests migrated, %d lost.",
		f.GPUHours, f.PeakWorkers, f.ScalingEvents, f.PlannerTicks, f.Failures, f.Migrated, f.Lost)
	if f.Prefill != nil {
		pg.Para("Prefill pool: %.3f GPU-hours, peak %d workers, %d scaling events. Decode pool: %.3f GPU-hours, peak %d workers, %d scaling events.",
			f.Prefill.GPUHours, f.Prefill.PeakWorkers, f.Prefill.ScalingEvents, f.Decode.GPUHours, f.Decode.PeakWorkers, f.Decode.ScalingEvents)
	}
	if len(f.SLAWindows) > 0 {
		var rows [][]string
		for _, w := range f.SLAWindows {
			rows = append(rows, []string{f1(w.StartMS / 60_000), strconv.Itoa(w.Requests), strconv.Itoa(w.Good), f1(100 * w.Attainment)})
		}
		pg.Table([]string{"minute", "requests", "met the SLO", "attainment %"}, rows)
	}
}
