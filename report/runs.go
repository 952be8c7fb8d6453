package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/routerlab/routerlab/engine"
)

// LatencyCDFs draws the TTFT, TPOT and e2e distributions of runs with per-request records,
// one line per run. The three are drawn at once, one goroutine each (each sorts every run's
// latencies), and returned in that order.
func LatencyCDFs(names []string, reps []*engine.Report) ([]Figure, error) {
	metrics := []struct{ name, title, label string }{
		{"ttft", "TTFT", "TTFT (ms)"}, {"tpot", "TPOT", "TPOT (ms)"}, {"e2e", "e2e latency", "e2e latency (ms)"},
	}
	plots := make([]*plot.Plot, len(metrics))
	errs := make([]error, len(metrics))
	var wg sync.WaitGroup
	for k, m := range metrics {
		wg.Go(func() {
			samples := make([][]float64, len(reps))
			for i, rep := range reps {
				samples[i] = make([]float64, 0, len(rep.Requests))
				for _, rr := range rep.Requests {
					switch m.name {
					case "ttft":
						samples[i] = append(samples[i], rr.TTFTMS)
					case "tpot":
						if rr.OutputLength > 1 {
							samples[i] = append(samples[i], (rr.E2EMS-rr.TTFTMS)/float64(rr.OutputLength-1))
						}
					default:
						samples[i] = append(samples[i], rr.E2EMS)
					}
				}
			}
			plots[k], errs[k] = CDF(m.title+" distribution", m.label+", log scale", names, samples)
		})
	}
	wg.Wait()
	var figs []Figure
	for k, m := range metrics {
		if errs[k] != nil {
			return nil, errs[k]
		}
		if plots[k] == nil {
			continue
		}
		figs = append(figs, Figure{Name: "cdf-" + m.name, Plot: plots[k], Caption: "Share of requests with " + m.title + " at most x."})
	}
	return figs, nil
}

// heatmapRows and heatmapCols bound a heatmap's cells: larger fleets are grouped into
// consecutive workers, longer runs into time bins.
const heatmapRows, heatmapCols = 64, 160

// FleetScale is what the fleet heatmaps of runs shown together share: the time axis (s) and
// the load colour scale's top (KV blocks), so that one colour is one load in every run.
type FleetScale struct{ UntilS, MaxLoad float64 }

// SharedFleetScale is the scale spanning every run's snapshots.
func SharedFleetScale(reps []*engine.Report) FleetScale {
	var sc FleetScale
	for _, rep := range reps {
		if sn := rep.Snapshots; len(sn) > 0 {
			sc.UntilS = math.Max(sc.UntilS, float64(sn[len(sn)-1].TimeUS)/1e6)
			for _, s := range sn {
				for _, w := range s.Workers {
					sc.MaxLoad = math.Max(sc.MaxLoad, float64(w.ActiveBlocks))
				}
			}
		}
	}
	return sc
}

// FleetHeatmaps draws a run's per-worker load (active KV blocks), prefix-hit ratio and
// decoding requests over time from its snapshots, each with its colour bar; none when it
// kept none. sc is shared
// with the runs shown beside it (zero: the run's own).
func FleetHeatmaps(name string, rep *engine.Report, sc FleetScale) ([]Figure, error) {
	sn := rep.Snapshots
	if len(sn) < 2 || len(sn[0].Workers) == 0 {
		return nil, nil
	}
	workers := len(sn[0].Workers)
	per := (workers + heatmapRows - 1) / heatmapRows
	rows := (workers + per - 1) / per
	bin := (len(sn) + heatmapCols - 1) / heatmapCols
	cols := (len(sn) + bin - 1) / bin
	load, hit, dec := make([][]float64, rows), make([][]float64, rows), make([][]float64, rows)
	labels := make([]string, rows)
	hiLoad, hiDec := 0.0, 0.0
	for r := range rows {
		load[r], hit[r], dec[r] = make([]float64, cols), make([]float64, cols), make([]float64, cols)
		lo, hi := r*per, min(workers, (r+1)*per)
		labels[r] = "w" + strconv.Itoa(lo)
		if hi-lo > 1 {
			labels[r] += "–" + strconv.Itoa(hi-1)
		}
		for c := range cols {
			var maxLoad, maxDec, hitSum float64
			var hitN int
			for k := c * bin; k < min(len(sn), (c+1)*bin); k++ {
				for w := lo; w < hi; w++ {
					ws := sn[k].Workers[w]
					maxLoad = math.Max(maxLoad, float64(ws.ActiveBlocks))
					maxDec = math.Max(maxDec, float64(ws.Decoding))
					if ws.PrefixHitRatio > 0 || ws.Running > 0 {
						hitSum += ws.PrefixHitRatio
						hitN++
					}
				}
			}
			load[r][c], dec[r][c] = maxLoad, maxDec
			hiLoad, hiDec = math.Max(hiLoad, maxLoad), math.Max(hiDec, maxDec)
			if hitN > 0 {
				hit[r][c] = hitSum / float64(hitN)
			}
		}
	}
	if d := rep.Summary.Disagg; d != nil && per == 1 {
		poolLabels(d, labels)
	}
	dx := float64(sn[1].TimeUS-sn[0].TimeUS) * float64(bin) / 1e6
	x0 := float64(sn[0].TimeUS) / 1e6
	group := ""
	if per > 1 {
		group = fmt.Sprintf(" (%d workers a row: the maximum load, the mean hit ratio)", per)
	}
	hiLoad = math.Max(hiLoad, sc.MaxLoad)
	pl, bl, err := Heatmap(name+": active KV blocks per worker", "simulated time (s)", Grid{Z: load, X0: x0, DX: dx, Rows: labels}, 0, hiLoad, sc.UntilS, "active KV blocks")
	if err != nil {
		return nil, err
	}
	ph, bh, err := Heatmap(name+": prefix-hit ratio per worker", "simulated time (s)", Grid{Z: hit, X0: x0, DX: dx, Rows: labels}, 0, 1, sc.UntilS, "prefix-hit ratio")
	if err != nil {
		return nil, err
	}
	h := vg.Length(max(5, min(12, 2+rows/3))) * vg.Centimeter
	figs := []Figure{
		{Name: "load-" + name, Plot: pl, Bar: bl, Height: h, Width: 17 * vg.Centimeter,
			Caption: fmt.Sprintf("%s: KV blocks held by running requests; colour from %s, 0 to %.0f blocks, as the bar at the right reads; white past the run's end%s.", name, HeatmapScale, hiLoad, group)},
		{Name: "prefix-hit-" + name, Plot: ph, Bar: bh, Height: h, Width: 17 * vg.Centimeter,
			Caption: fmt.Sprintf("%s: prefix-hit tokens ÷ prompt tokens of the requests admitted in each interval; colour from %s, 0 to 1, as the bar at the right reads; white past the run's end%s.", name, HeatmapScale, group)},
	}
	if hiDec == 0 { // snapshots from before they counted decoding requests
		return figs, nil
	}
	pd, bd, err := Heatmap(name+": decoding requests per worker", "simulated time (s)", Grid{Z: dec, X0: x0, DX: dx, Rows: labels}, 0, hiDec, sc.UntilS, "decoding requests")
	if err != nil {
		return nil, err
	}
	return append(figs, Figure{Name: "decodes-" + name, Plot: pd, Bar: bd, Height: h, Width: 17 * vg.Centimeter,
		Caption: fmt.Sprintf("%s: requests past their first token; colour from %s, 0 to %.0f, as the bar at the right reads; white past the run's end%s.", name, HeatmapScale, hiDec, strings.Replace(group, "the maximum load", "the maximum", 1))}), nil
}
