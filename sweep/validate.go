package sweep

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/router"
)

// Validation names: the summary's validation list holds exactly these, in this order.
const (
	RoundRobin = "round_robin"
	DefaultKV  = "default_kv"
	Best       = "best"
)

// Validated is one configuration replayed on the validation requests (the whole trace by
// default).
type Validated struct {
	Name    string            `json:"name"`
	Config  map[string]string `json:"config"`
	Metrics engine.Summary    `json:"metrics"`
	// MeanE2E is the percentile bootstrap interval of the mean e2e latency over the requests.
	MeanE2E *Interval `json:"mean_e2e_latency_interval,omitempty"`
}

// Interval is a mean with its percentile bootstrap interval at Level.
type Interval struct {
	MeanMS float64 `json:"mean_ms"`
	LowMS  float64 `json:"low_ms"`
	HighMS float64 `json:"high_ms"`
	Level  float64 `json:"level"`
}

// PairedDiff is the mean per-request e2e latency difference best − default_kv over the same
// requests, with a percentile bootstrap confidence interval.
type PairedDiff struct {
	MeanMS    float64 `json:"mean_ms"`
	LowMS     float64 `json:"low_ms"`
	HighMS    float64 `json:"high_ms"`
	Level     float64 `json:"level"`
	Requests  int     `json:"requests"`
	Resamples int     `json:"resamples"`
}

// SaturationRow is the search-phase result of one prefill_load_scale value with the other
// knobs at the winner's values.
type SaturationRow struct {
	PrefillLoadScale string  `json:"prefill_load_scale"`
	Key              string  `json:"key"`
	Metrics          Metrics `json:"metrics"`
	Runs             int     `json:"n"`
	Searched         bool    `json:"searched"` // evaluated by the search, not added afterwards
}

// Validation is the outcome of the validation phase.
type Validation struct {
	Requests   int         // validation requests replayed
	Runs       []Validated // round_robin, default_kv, best
	Paired     *PairedDiff // nil when per-request records could not be paired
	Saturation []SaturationRow
	// Reports are the runs' whole reports (per-request records, snapshots of the fleet), in
	// Runs' order, for the charts of report.html; they are not written to summary.json.
	Reports []*engine.Report

	built *builtFigures // the charts of Reports alone, drawn by Validate (runFigures)
}

// snapshotsPerRun is about how many fleet snapshots a validation run keeps for the heatmaps
// of report.html: enough columns for a page, few enough for any fleet size.
const snapshotsPerRun = 200

// Bootstrap settings of the paired interval.
const (
	bootstrapResamples = 2000
	bootstrapLevel     = 0.95
	bootstrapStream    = 0xb007
)

// Validate replays round_robin, default_kv (kv_router, credit 1, scale 1, T 0) and the
// search's best on the validation requests at the workload seed, with the rest of the
// deployment at the winner's values; computes the paired bootstrap interval of the e2e
// difference best − default_kv; and fills the prefill_load_scale saturation table on the
// search requests, simulating only the values the search did not evaluate.
func Validate(ctx context.Context, s *Search, sim Simulator, opt Options) (*Validation, error) {
	opt = opt.withRemote(sim)
	sim = withSlotMemory(sim)
	f := s.File
	names, configs, jobs, err := validationPlan(s, s.BestEvaluation(), sim)
	if err != nil {
		return nil, err
	}
	if opt.spec != nil {
		// The replays not yet speculated start on the free slots now; the saturation
		// phase's short runs take the first slot one of them frees (three runs on two
		// cores end at the same time in either order).
		opt.spec.want(jobs)
	}
	sat, satJobs, satOwner, err := saturationPlan(s, sim)
	if err != nil {
		return nil, err
	}

	v := &Validation{Runs: make([]Validated, len(names))}
	// Saturation first: it runs on the search requests, so it is short, and each phase's
	// count then means one thing.
	satJobRuns := make([]Metrics, len(satJobs))
	err = s.runPhase(ctx, sim, PhaseSaturation, satJobs, opt, func(j int, rep *engine.Report) (string, map[string]string) {
		satJobRuns[j] = s.Objective.measure(satJobs[j].cfg, rep)
		return sat[satOwner[j]].Key, nil
	})
	if err != nil {
		return nil, err
	}
	// Averaged in job (seed) order, not completion order, so the means are reproducible.
	satRuns := make([][]Metrics, len(sat))
	for j, m := range satJobRuns {
		satRuns[satOwner[j]] = append(satRuns[satOwner[j]], m)
	}
	for r := range sat {
		if len(satRuns[r]) > 0 {
			sat[r].Metrics, sat[r].Runs = meanMetrics(satRuns[r]), len(satRuns[r])
		}
	}
	reports := make([]*engine.Report, len(names))
	err = s.runPhase(ctx, sim, PhaseValidation, jobs, opt, func(j int, rep *engine.Report) (string, map[string]string) {
		reports[j] = rep
		v.Runs[j] = Validated{Name: names[j], Config: configs[j], Metrics: rep.Summary}
		return names[j], configs[j]
	})
	if err != nil {
		return nil, err
	}
	v.Saturation = sat
	v.Requests = reports[2].Summary.RequestsCompleted
	// The runs' mean e2e intervals resample the same requests together: one index stream for
	// all three, a third of the cost of three. The paired interval has its own stream, so
	// the two bootstraps run at once (each is as it would be alone); the means start first,
	// while the paired differences are put in request order.
	e2e := make([][]float64, len(reports))
	for j, rep := range reports {
		e2e[j] = make([]float64, 0, len(rep.Requests))
		for _, r := range rep.Requests {
			e2e[j] = append(e2e[j], r.E2EMS)
		}
	}
	means := make(chan []Interval, 1)
	go func() { means <- bootstrapMeans(e2e, f.Sweep.Seed+1) }()
	// The charts that need only the reports are drawn beside the bootstraps rather than after
	// them (report.html's other charts and its tables need the intervals).
	built := make(chan *builtFigures, 1)
	go func() {
		figs, err := drawRunFigures(v.Runs, reports)
		built <- &builtFigures{figs, err}
	}()
	v.Paired, err = pairRuns(reports[2], reports[1], f.Sweep.Seed)
	ivs := <-means // also on an error: neither goroutine outlives Validate
	v.built = <-built
	if err != nil {
		return nil, err
	}
	if ivs != nil {
		for j := range v.Runs {
			v.Runs[j].MeanE2E = &ivs[j]
		}
	}
	v.Reports = reports
	return v, nil
}

// validationPlan is the validation phase's replays with best as the winner: their names,
// search-dimension values and jobs (round_robin, default_kv, best).
func validationPlan(s *Search, best *Evaluation, sim Simulator) ([]string, []map[string]string, []runJob, error) {
	f := s.File
	bestIdx, _ := s.Space.Index(best.Key)
	base, err := sim.EngineConfig(s.Space.Candidates[bestIdx].Point)
	if err != nil {
		return nil, nil, nil, err
	}
	base.Seed = f.Workload.Seed
	base.RecordRequests = true
	// Goodput under goal.sla or the default SLO, for the report: it changes no simulated number.
	base.SLO = f.Goal.ReportSLO()
	// Snapshot interval from the first search run, scaled to the validation requests
	// (snapshots do not change a result; they only record the fleet). The first run, not the
	// winner's, so that the interval is known before the winner is and the replays can start
	// early (speculate.go).
	if sr := s.Evaluations[0].Runs[0]; sr.RequestsCompleted > 0 {
		n := f.Validate.Requests
		if v, ok := s.Experiment.Get("workload.trace_requests"); ok && n == 0 {
			n, _ = strconv.Atoi(v)
		}
		est := sr.DurationMS * 1000 * float64(max(n, sr.RequestsCompleted)) / float64(sr.RequestsCompleted)
		base.SnapshotEveryUS = max(100_000, int64(est/snapshotsPerRun))
	}
	def := base
	def.Router.Mode, def.Router.OverlapScoreCredit, def.Router.PrefillLoadScale, def.Router.Temperature = router.ModeKV, 1, 1, 0
	def.Router.Load = router.LoadConfig{} // Dynamo's default load accounting and admission too
	// Dynamo's default router also knows the fleet as Dynamo does by default: KV events, one
	// router, no credit decay, whatever the winner's index knobs (docs/router.md).
	def.Router.IndexConfig = router.DefaultIndexConfig()
	// Round-robin ignores the KV router's knobs; leaving them at default_kv's makes its
	// replay the same job whatever the winner's knobs are.
	rr := def
	rr.Router.Mode = router.ModeRoundRobin
	names := []string{RoundRobin, DefaultKV, Best}
	configs := []map[string]string{
		{config.KeyRouterMode: string(router.ModeRoundRobin)},
		{config.KeyRouterMode: string(router.ModeKV), config.KeyOverlapScoreCredit: "1.0", config.KeyPrefillLoadScale: "1.0", config.KeyRouterTemperature: "0.0"},
		best.Config,
	}
	jobs := []runJob{{cfg: rr, requests: f.Validate.Requests}, {cfg: def, requests: f.Validate.Requests}, {cfg: base, requests: f.Validate.Requests}}
	return names, configs, jobs, nil
}

// runPhase runs the jobs of a phase after the search, announcing the phase and reporting each
// finished run; record stores a run's report (under a lock) and names it for the event. A
// phase without jobs is skipped silently.
func (s *Search) runPhase(ctx context.Context, sim Simulator, phase Phase, jobs []runJob, opt Options,
	record func(j int, rep *engine.Report) (string, map[string]string)) error {
	if len(jobs) == 0 {
		return nil
	}
	tr := &tracker{obj: s.Objective, total: len(jobs)}
	if err := opt.send(ctx, Event{Progress: Progress{Phase: phase, Total: len(jobs)}, Unit: s.Objective.Unit()}); err != nil {
		return err
	}
	var mu sync.Mutex
	return runAll(ctx, sim, s.File.Sweep.ParallelEvals, jobs, opt.spec, func(j int, rep *engine.Report, _ time.Duration) error {
		mu.Lock()
		key, cfg := record(j, rep)
		m := s.Objective.measure(jobs[j].cfg, rep)
		tr.add(key, m)
		ev := Event{Progress: Progress{Phase: phase, Done: tr.done, Total: tr.total}, Key: key, Config: cfg,
			Value: s.Objective.Value(m), Unit: s.Objective.Unit(), BestKey: tr.bestKey, BestValue: tr.bestValue}
		defer mu.Unlock() // sent under the lock, so events leave in the order of their counts
		return opt.send(ctx, ev)
	})
}

// saturationPlan lists the prefill_load_scale values with the other knobs at the winner's
// values: rows the search evaluated are filled in, the others come with the jobs to run (and
// for each job, its row). Empty when prefill_load_scale is not searched or the winner is not
// a kv_router configuration.
func saturationPlan(s *Search, sim Simulator) ([]SaturationRow, []runJob, []int, error) {
	best := s.BestEvaluation()
	dim := slices.IndexFunc(s.Space.Dims, func(d config.Dimension) bool { return d.Key == config.KeyPrefillLoadScale })
	if dim < 0 || best.Config[config.KeyRouterMode] != "" && best.Config[config.KeyRouterMode] != string(router.ModeKV) {
		return nil, nil, nil, nil
	}
	if _, ok := best.Config[config.KeyPrefillLoadScale]; !ok {
		return nil, nil, nil, nil
	}
	bestIdx, _ := s.Space.Index(best.Key)
	evaluated := map[string]*Evaluation{}
	for i := range s.Evaluations {
		evaluated[s.Evaluations[i].Key] = &s.Evaluations[i]
	}
	var rows []SaturationRow
	var jobs []runJob
	var owner []int
	for j, val := range s.Space.Dims[dim].Values {
		p := slices.Clone(s.Space.Candidates[bestIdx].Point)
		p[dim] = j
		ci, err := s.Space.Lookup(s.File, p)
		if err != nil {
			return nil, nil, nil, err
		}
		c := &s.Space.Candidates[ci]
		row := SaturationRow{PrefillLoadScale: val.Text, Key: c.Key}
		if e, ok := evaluated[c.Key]; ok {
			row.Metrics, row.Runs, row.Searched = e.Metrics, len(e.Runs), true
		} else {
			cfg, err := sim.EngineConfig(c.Point)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("sweep: %s: %w", c.Key, err)
			}
			s.Objective.prepare(&cfg)
			for _, seed := range seedsFor(c, s.File.Workload.Seed) {
				cfg.Seed = seed
				jobs = append(jobs, runJob{cfg: cfg, requests: s.File.Workload.SearchRequests})
				owner = append(owner, len(rows))
			}
		}
		rows = append(rows, row)
	}
	return rows, jobs, owner, nil
}

// pairRuns is the paired bootstrap interval of best − default_kv over the requests both
// completed (the same ones, or an error).
func pairRuns(best, def *engine.Report, seed uint64) (*PairedDiff, error) {
	bestIDs, bestE2E, err := e2eByRequest(best)
	if err != nil {
		return nil, err
	}
	defIDs, defE2E, err := e2eByRequest(def)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(bestIDs, defIDs) {
		return nil, fmt.Errorf("sweep: best and default_kv completed different requests (%d and %d); cannot pair them", len(bestIDs), len(defIDs))
	}
	return PairedBootstrap(bestE2E, defE2E, seed)
}

// PairedBootstrap resamples the per-request differences a−b (same requests) with a seeded
// generator and returns the mean difference with its percentile interval.
func PairedBootstrap(a, b []float64, seed uint64) (*PairedDiff, error) {
	if len(a) != len(b) || len(a) == 0 {
		return nil, fmt.Errorf("sweep: cannot pair %d with %d per-request latencies", len(a), len(b))
	}
	d := make([]float64, len(a))
	for i := range d {
		d[i] = a[i] - b[i]
	}
	mean, lo, hi := bootstrapMean(d, seed)
	return &PairedDiff{MeanMS: mean, LowMS: lo, HighMS: hi, Level: bootstrapLevel, Requests: len(d), Resamples: bootstrapResamples}, nil
}

// bootstrapMeans is the mean of each d[k] with its percentile bootstrap interval, resampling
// the same positions of every d[k] (they hold the same requests); nil unless all have the same
// non-zero length.
func bootstrapMeans(d [][]float64, seed uint64) []Interval {
	n := len(d[0])
	if n == 0 || slices.ContainsFunc(d, func(x []float64) bool { return len(x) != n }) {
		return nil
	}
	means := make([][]float64, len(d))
	for k := range means {
		means[k] = make([]float64, bootstrapResamples)
	}
	inParts(seed, (n+1)/2, func(rng *rand.PCG, from, to int) { resampleMeans(d, rng, means, from, to) })
	out := make([]Interval, len(d))
	tail := (1 - bootstrapLevel) / 2
	for k := range d {
		var mean float64
		for _, x := range d[k] {
			mean += x
		}
		slices.Sort(means[k])
		out[k] = Interval{MeanMS: mean / float64(n), LowMS: means[k][int(tail*float64(bootstrapResamples))],
			HighMS: means[k][int((1-tail)*float64(bootstrapResamples))-1], Level: bootstrapLevel}
	}
	return out
}

// resampleMeans fills means[k][r] for resamples from ≤ r < to of every series d[k], drawing
// each resample's indices from rng, two per 64-bit draw as in bootstrapMean. Three series
// (a validation's round_robin, default_kv and best) are summed in one pass as the indices are
// drawn: each sum is a chain of dependent additions whose latency bounds the loop, so three
// chains side by side cost about what one does. Each series' sum adds the same terms in the
// same order as a pass of its own, so the means are bit-identical to summing them one by one
// (TestResampleMeansFusedIsExact).
func resampleMeans(d [][]float64, rng *rand.PCG, means [][]float64, from, to int) {
	n := len(d[0])
	un := uint64(n)
	if len(d) == 3 {
		a, b, c := d[0][:n], d[1][:n], d[2][:n]
		for r := from; r < to; r++ {
			var sa, sb, sc float64
			for i := 0; i < n; i += 2 {
				x := rng.Uint64()
				j := ((x & 0xffffffff) * un) >> 32
				sa += a[j]
				sb += b[j]
				sc += c[j]
				if i+1 < n {
					j = ((x >> 32) * un) >> 32
					sa += a[j]
					sb += b[j]
					sc += c[j]
				}
			}
			means[0][r], means[1][r], means[2][r] = sa/float64(n), sb/float64(n), sc/float64(n)
		}
		return
	}
	idx := make([]uint32, n)
	for r := from; r < to; r++ {
		for i := 0; i < n; i += 2 {
			x := rng.Uint64()
			idx[i] = uint32(((x & 0xffffffff) * un) >> 32)
			if i+1 < n {
				idx[i+1] = uint32(((x >> 32) * un) >> 32)
			}
		}
		for k, dk := range d {
			var sum float64
			for _, i := range idx {
				sum += dk[i]
			}
			means[k][r] = sum / float64(n)
		}
	}
}

// bootstrapMean is the mean of d and its percentile bootstrap interval at bootstrapLevel.
func bootstrapMean(d []float64, seed uint64) (mean, lo, hi float64) {
	n := len(d)
	for _, x := range d {
		mean += x
	}
	mean /= float64(n)
	means := make([]float64, bootstrapResamples)
	un := uint64(n)
	inParts(seed, (n+1)/2, func(rng *rand.PCG, from, to int) {
		for r := from; r < to; r++ {
			// Two indices per 64-bit draw, each by multiply-shift of 32 random bits (its bias,
			// n/2³², is far below the resampling noise).
			var s float64
			for i := 0; i < n; i += 2 {
				x := rng.Uint64()
				s += d[((x&0xffffffff)*un)>>32]
				if i+1 < n {
					s += d[((x>>32)*un)>>32]
				}
			}
			means[r] = s / float64(n)
		}
	})
	slices.Sort(means)
	tail := (1 - bootstrapLevel) / 2
	return mean, means[int(tail*float64(bootstrapResamples))], means[int((1-tail)*float64(bootstrapResamples))-1]
}

// inParts runs fill(rng, from, to) over the resamples [0, bootstrapResamples) split into
// parts, one goroutine per core taking the next part as it finishes one: four parts per core
// (at most 16), so that when the two bootstraps and the report's charts run at once no core
// waits long for another's last part. Each part's generator is the stream (seed,
// bootstrapStream) advanced to where it stands at the part's first resample (drawsPer draws a
// resample), so every resample sees the draws it would in one pass and the intervals do not
// depend on the split (TestBootstrapMeansSplitIsExact).
func inParts(seed uint64, drawsPer int, fill func(rng *rand.PCG, from, to int)) {
	cores := runtime.GOMAXPROCS(0)
	parts := 1
	if cores > 1 {
		parts = min(4*cores, 16)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(cores, parts) {
		wg.Go(func() {
			for p := int(next.Add(1) - 1); p < parts; p = int(next.Add(1) - 1) {
				from, to := p*bootstrapResamples/parts, (p+1)*bootstrapResamples/parts
				rng := rand.NewPCG(seed, bootstrapStream) // the source itself: its Uint64 inlines
				advancePCG(rng, uint64(from)*uint64(drawsPer))
				fill(rng, from, to)
			}
		})
	}
	wg.Wait()
}

// u128 is a 128-bit integer, arithmetic mod 2¹²⁸.
type u128 struct{ hi, lo uint64 }

func (a u128) mul(b u128) u128 {
	hi, lo := bits.Mul64(a.lo, b.lo)
	return u128{hi + a.hi*b.lo + a.lo*b.hi, lo}
}

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

// PCG's state is a 128-bit linear congruential generator, s ← s·mul + inc (mod 2¹²⁸), with
// math/rand/v2's multiplier and increment (pcg-cpp's defaults); TestAdvancePCG checks them
// against the generator.
var (
	pcgMul = u128{2549297995355413924, 4865540595714422341}
	pcgInc = u128{6364136223846793005, 1442695040888963407}
)

// advancePCG moves p k draws ahead in O(log k) steps (drawing past them one by one cost as
// much as a part's own resamples): k steps of the generator are one affine map s ← s·A + C,
// built by repeated squaring (F. Brown, "Random number generation with arbitrary strides",
// 1994). The state is read and written through the generator's binary encoding.
func advancePCG(p *rand.PCG, k uint64) {
	b, _ := p.MarshalBinary() // "pcg:", then the state's high and low words, big-endian
	s := u128{binary.BigEndian.Uint64(b[4:]), binary.BigEndian.Uint64(b[12:])}
	a, c := u128{0, 1}, u128{}
	m, inc := pcgMul, pcgInc
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			a, c = a.mul(m), c.mul(m).add(inc)
		}
		inc = m.add(u128{0, 1}).mul(inc)
		m = m.mul(m)
	}
	s = s.mul(a).add(c)
	b = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b[:4], s.hi), s.lo)
	if err := p.UnmarshalBinary(b); err != nil {
		panic(err) // the encoding PCG itself wrote
	}
}
