package engine

import "slices"

// FleetPoint is the fleet at one moment: workers in each state from then on.
type FleetPoint struct {
	TimeMS   float64 `json:"time_ms"`
	Serving  int     `json:"serving"`
	Starting int     `json:"starting"`
	Draining int     `json:"draining"`
}

// ScalingEvent is one change of the replica target, by the planner or a failure.
type ScalingEvent struct {
	TimeMS float64 `json:"time_ms"`
	Pool   string  `json:"pool,omitempty"` // prefill or decode in a disaggregated fleet
	From   int     `json:"from"`
	To     int     `json:"to"`
	Reason string  `json:"reason"`
}

// FleetSummary is the report's account of a changing fleet.
type FleetSummary struct {
	GPUHours      float64        `json:"gpu_hours"`
	ScalingEvents int            `json:"scaling_events"`
	PlannerTicks  int            `json:"planner_ticks"`
	Failures      int            `json:"failures"`
	Migrated      int            `json:"requests_migrated"`
	Lost          int            `json:"requests_lost"`
	PeakWorkers   int            `json:"peak_workers"`
	Timeline      []FleetPoint   `json:"timeline"`
	Events        []ScalingEvent `json:"events,omitempty"`
	// SLAWindows: with an SLO, the share of each minute's requests (by arrival) that
	// completed within it; lost requests count as missed.
	SLAWindows []SLAWindow `json:"sla_windows,omitempty"`
	// Prefill and Decode are a disaggregated fleet's pools, each on its own.
	Prefill *PoolFleet `json:"prefill,omitempty"`
	Decode  *PoolFleet `json:"decode,omitempty"`
}

// PoolFleet is one pool's share of a changing disaggregated fleet.
type PoolFleet struct {
	GPUHours      float64      `json:"gpu_hours"`
	ScalingEvents int          `json:"scaling_events"`
	PeakWorkers   int          `json:"peak_workers"`
	Timeline      []FleetPoint `json:"timeline"`
}

// SLAWindow is one window's SLA attainment.
type SLAWindow struct {
	StartMS    float64 `json:"start_ms"`
	Requests   int     `json:"requests"`
	Good       int     `json:"good"`
	Attainment float64 `json:"attainment"`
}

// slaWindowUS is the SLA attainment's window: a minute, the scale of a planner's decisions.
const slaWindowUS = 60_000_000

// slaWindows counts, per window of arrivals, the requests that arrived (completed or lost)
// and those that met the SLO.
func (s *Sim) slaWindows() []SLAWindow {
	if !s.cfg.SLO.Set() {
		return nil
	}
	var out []SLAWindow
	for i := range s.reqs {
		r := &s.reqs[i]
		lost := r.fl == nil && !r.finished && r.worker >= 0
		if !r.finished && !lost {
			continue
		}
		k := int(r.arrival / slaWindowUS)
		for len(out) <= k {
			out = append(out, SLAWindow{StartMS: ms(float64(len(out)) * slaWindowUS)})
		}
		out[k].Requests++
		if r.finished {
			t, e := r.firstTok-r.arrival, r.done-r.arrival
			var tp float64
			if r.out >= 2 {
				tp = float64(e-t) / float64(r.out-1)
			}
			if s.cfg.SLO.Good(ms(float64(t)), ms(tp), ms(float64(e))) {
				out[k].Good++
			}
		}
	}
	for k := range out {
		if out[k].Requests > 0 {
			out[k].Attainment = round(float64(out[k].Good)/float64(out[k].Requests), 6)
		}
	}
	return out
}

// summary closes the GPU integral at end and returns the report's account.
func (s *Sim) fleetSummary(end int64) *FleetSummary {
	fs := s.fleet
	tail := float64(max(0, end-fs.lastT))
	liveGPUs := 0
	for k := range 2 {
		liveGPUs += fs.poolLive[k] * fs.gpus(k)
	}
	gpuUS := fs.gpuUS + float64(liveGPUs)*tail
	sum := &FleetSummary{
		GPUHours:      round(gpuUS/3.6e9, 6),
		ScalingEvents: len(fs.events),
		PlannerTicks:  fs.ticks,
		Failures:      fs.failures,
		Migrated:      fs.migrated,
		Lost:          fs.lost,
		PeakWorkers:   peakOf(fs.points),
		Timeline:      slices.Clone(fs.points),
		Events:        slices.Clone(fs.events),
		SLAWindows:    s.slaWindows(),
	}
	if fs.first < len(fs.state) {
		pools := [2]*PoolFleet{}
		for k := range 2 {
			p := &PoolFleet{
				GPUHours:    round((fs.poolGPUUS[k]+float64(fs.poolLive[k]*fs.gpus(k))*tail)/3.6e9, 6),
				PeakWorkers: peakOf(fs.poolPoints[k]),
				Timeline:    slices.Clone(fs.poolPoints[k]),
			}
			for _, e := range fs.events {
				if e.Pool == [...]string{"prefill", "decode"}[k] {
					p.ScalingEvents++
				}
			}
			pools[k] = p
		}
		sum.Prefill, sum.Decode = pools[0], pools[1]
	}
	return sum
}

// peakOf is the most workers live at once on a timeline.
func peakOf(pts []FleetPoint) int {
	peak := 0
	for _, p := range pts {
		peak = max(peak, p.Serving+p.Starting+p.Draining)
	}
	return peak
}
