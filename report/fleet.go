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
	var serving, starting, draining Series
	serving.Name, starting.Name, draining.Name = "serving", "starting", "draining"
	end := math.Max(rep.Summary.DurationMS, f.Timeline[len(f.Timeline)-1].TimeMS)
	for i, pt := range f.Timeline {
		next := end
		if i+1 < len(f.Timeline) {
			next = f.Timeline[i+1].TimeMS
		}
		// A step: the state holds from its time to the next point's.
		for _, t := range []float64{pt.TimeMS, next} {
			serving.X, serving.Y = append(serving.X, t/60_000), append(serving.Y, float64(pt.Serving))
			starting.X, starting.Y = append(starting.X, t/60_000), append(starting.Y, float64(pt.Starting))
			draining.X, draining.Y = append(draining.X, t/60_000), append(draining.Y, float64(pt.Draining))
		}
	}
	p, err := Lines("Replicas", "time (min)", "workers", []Series{serving, starting, draining}, false, nil)
	if err != nil {
		return nil, err
	}
	return append(figs, Figure{Name: "replicas-timeline", Caption: "workers serving, starting and draining over the run (" +
		strconv.Itoa(f.ScalingEvents) + " scaling events)", Plot: p, Width: 16 * vg.Centimeter, Height: 6 * vg.Centimeter}), nil
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
	if len(f.SLAWindows) > 0 {
		var rows [][]string
		for _, w := range f.SLAWindows {
			rows = append(rows, []string{f1(w.StartMS / 60_000), strconv.Itoa(w.Requests), strconv.Itoa(w.Good), f1(100 * w.Attainment)})
		}
		pg.Table([]string{"minute", "requests", "met the SLO", "attainment %"}, rows)
	}
}
