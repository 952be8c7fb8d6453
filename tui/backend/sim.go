// Package backend connects the explorer (package tui) to routerlab's simulator: it turns an
// experiment into the explorer's knob space, runs the engine for a point in chunks with
// snapshots, and drives the smart sweep. Only values cross into the tui.
package backend

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
	"github.com/routerlab/routerlab/tui"
)

// Columns is how many time windows the heatmaps and the TTFT chart get at most.
const Columns = 120

// decodeGuessUS is what the snapshot window's estimate of a closed-loop run's length takes
// one output token to cost: a typical TPOT. It only sizes the windows (see window).
const decodeGuessUS = 10_000

// frameEvery is the wall time between progress frames of a run: a frame copies every
// snapshot so far, so frames come seldom enough that a 1,024-worker run spends its CPU on
// simulating.
const frameEvery = 100 * time.Millisecond

// Sim runs the explorer's points on an experiment. It is safe for concurrent use, so the
// tui may run a new point while a cancelled one unwinds.
type Sim struct {
	exp      *config.Experiment
	base     engine.Config
	trace    *trace.Trace
	requests int
	catalog  *catalog // the models, GPUs and layouts the knobs step through

	workers model.Workers // by deployment with KV blocks unresolved
}

// NewSim prepares runs of the first `requests` requests of exp's trace (0: the file's
// workload.search_requests).
func NewSim(exp *config.Experiment, requests int) (*Sim, error) {
	base, err := exp.EngineConfig(nil)
	if err != nil {
		return nil, err
	}
	if requests <= 0 {
		requests = exp.File.Workload.SearchRequests
	}
	cat, err := newCatalog(base.Worker)
	if err != nil {
		return nil, err
	}
	return &Sim{exp: exp, base: base, trace: exp.Trace.First(requests), requests: requests, catalog: cat}, nil
}

// contextLength is the context_length a point of model runs with: the experiment's, capped
// at the model's own limit (vLLM refuses a longer --max-model-len), or the limit when the
// experiment leaves it unchecked.
func (s *Sim) contextLength(name string) int {
	pin, limit := s.exp.File.ContextLength, model.ContextLimit(name)
	if pin > 0 && (limit == 0 || pin <= limit) {
		return pin
	}
	return limit
}

// worker returns the worker model of d (KV blocks unresolved), building it on first use.
func (s *Sim) worker(d model.Deployment) (*model.Worker, error) {
	d.NumGPUBlocks = 0
	return s.workers.Get(d)
}

// Requests is how many requests each run replays.
func (s *Sim) Requests() int { return len(s.trace.Requests) }

// Title names what is explored, for the explorer's header: the trace first, since a narrow
// header cuts the end.
func (s *Sim) Title() string {
	return fmt.Sprintf("%s · first %d · %s", s.trace.Name, len(s.trace.Requests), s.exp.File.Name)
}

// Config is the engine configuration of a point, with the worker model that prices its steps.
func (s *Sim) Config(k tui.Knobs) (engine.Config, *model.Worker, error) {
	mode, err := router.ParseMode(k.Mode)
	if err != nil {
		return engine.Config{}, nil, err
	}
	cfg := s.base
	cfg.Router.Mode = mode
	cfg.Router.OverlapScoreCredit = k.Credit
	cfg.Router.PrefillLoadScale = k.Scale
	cfg.Router.Temperature = k.Temperature
	cfg.Router.IndexConfig = indexConfig(k.Index)
	cfg.ReplayConcurrency = k.Concurrency
	if k.Speedup > 0 {
		cfg.ArrivalSpeedupRatio = k.Speedup
	}
	cfg.RecordRequests = true
	cfg.Router.Load = s.loadConfig(k.Load)
	cfg.LoadReport = true // the Metrics and Fleet panes show where decode time goes
	dk := k.Deployment
	cfg.Workers, cfg.Disagg = dk.Replicas, nil
	d := &cfg.Worker
	if err := s.deploy(d, dk); err != nil {
		return engine.Config{}, nil, err
	}
	if dk.Prefill > 0 {
		if err := s.split(&cfg, k); err != nil {
			return engine.Config{}, nil, err
		}
	}
	if cfg.Fleet != nil { // the planner may grow a fleet from any start, within its slots
		fl := *cfg.Fleet
		fl.Slots = min(max(fl.Slots, cfg.Workers), router.MaxWorkers)
		cfg.Fleet = &fl
	}
	w, err := s.worker(*d)
	if err != nil {
		return engine.Config{}, nil, err
	}
	if d.NumGPUBlocks == 0 {
		d.NumGPUBlocks = w.Capacity().NumGPUBlocks
	}
	cfg.KVTiers, cfg.Router.Tiers = tierConfig(s.exp.File, s.base.KVTiers, k.Index, w.Capacity())
	return cfg, w, nil
}

// Simulate runs one point in chunks of simulated time, sending a progress frame every
// frameEvery of wall time and the final result at the end.
func (s *Sim) Simulate(ctx context.Context, run tui.Run, partial func(tui.Result)) (tui.Result, error) {
	cfg, w, err := s.Config(run.Knobs)
	if err != nil {
		return tui.Result{}, err
	}
	cfg.SnapshotEveryUS = s.window(cfg)
	timer, err := s.timer(cfg, w)
	if err != nil {
		return tui.Result{}, err
	}
	sim, err := engine.New(cfg, timer, s.trace)
	if err != nil {
		return tui.Result{}, err
	}
	chunk := 8 * cfg.SnapshotEveryUS
	lastFrame := time.Now()
	for t := chunk; !sim.RunUntil(t); t += chunk {
		if err := ctx.Err(); err != nil {
			return tui.Result{}, err
		}
		if partial != nil && time.Since(lastFrame) >= frameEvery {
			rep := sim.Report() // the requests completed so far, for the prefix-hit heatmap
			partial(s.result(run.Knobs, sim.Snapshots(), rep.Requests, cfg.SnapshotEveryUS, sim.Now()))
			lastFrame = time.Now()
		}
	}
	rep := sim.Report()
	res := s.result(run.Knobs, rep.Snapshots, rep.Requests, cfg.SnapshotEveryUS, sim.Now())
	res.Final = true
	res.Metrics = metrics(rep.Summary)
	if d := rep.Summary.Disagg; d != nil {
		res.Metrics.Disagg = disaggMetrics(d, rep.Summary.MeanTPOTMS)
	}
	return res, nil
}

// window is the snapshot interval of a run at cfg: a function of the run alone, never of
// the runs before it, so the same knobs draw the same heatmaps and chart however the
// explorer got there. It aims at about 4·Columns snapshots from an estimate of the run's
// simulated length — the trace's span for an open loop, Σ output tokens × a typical TPOT ÷
// concurrency for a closed one — rounded down to 1, 2 or 5 × a power of ten milliseconds;
// result then merges adjacent windows into at most Columns columns.
func (s *Sim) window(cfg engine.Config) int64 {
	var estUS float64
	reqs := s.trace.Requests
	if cfg.ReplayConcurrency > 0 {
		out := 0
		for _, r := range reqs {
			out += r.OutputLength
		}
		estUS = float64(out) * decodeGuessUS / float64(cfg.ReplayConcurrency)
	} else if len(reqs) > 0 {
		estUS = float64(reqs[len(reqs)-1].TimestampMS-reqs[0].TimestampMS) * 1000 / max(cfg.ArrivalSpeedupRatio, 1e-9)
	}
	want := estUS / (4 * Columns)
	every := int64(1000)
	for mag := int64(1000); mag <= 1e9; mag *= 10 {
		for _, step := range []int64{1, 2, 5} {
			if v := mag * step; float64(v) <= want {
				every = v
			}
		}
	}
	return every
}

// result converts snapshots and the requests completed so far into the explorer's values,
// merging adjacent snapshot windows so that there are at most Columns. The prefix-hit ratio
// of a window is token-weighted over the requests that arrived in it on that worker
// (Σ cached ÷ Σ input tokens, NaN when none did), so a quiet window is blank rather than
// a zero that would read as "no reuse".
func (s *Sim) result(k tui.Knobs, snaps []engine.Snapshot, recs []engine.RequestRecord, everyUS, nowUS int64) tui.Result {
	merge := max(1, (len(snaps)+Columns-1)/Columns)
	cols := (len(snaps) + merge - 1) / merge
	workers := 0
	if len(snaps) > 0 {
		workers = len(snaps[0].Workers)
	}
	res := tui.Result{Knobs: k, SimMS: float64(nowUS) / 1000}
	res.Fleet.Prefill = k.Deployment.Prefill
	res.Fleet.WindowMS = float64(everyUS*int64(merge)) / 1000
	res.Fleet.ActiveBlocks = matrix(workers, cols)
	res.Fleet.QueuedPrefill = matrix(workers, cols)
	res.Fleet.Decodes = matrix(workers, cols)
	for c := range cols {
		group := snaps[c*merge : min(len(snaps), (c+1)*merge)]
		for w := range workers {
			var blocks, queued, decodes float64
			for _, sn := range group {
				blocks += float64(sn.Workers[w].ActiveBlocks)
				queued += float64(sn.Workers[w].QueuedPrefillTokens)
				decodes += float64(sn.Workers[w].Decoding)
			}
			res.Fleet.ActiveBlocks[w][c] = blocks / float64(len(group))
			res.Fleet.QueuedPrefill[w][c] = queued / float64(len(group))
			res.Fleet.Decodes[w][c] = decodes / float64(len(group))
		}
	}
	if slices.ContainsFunc(snaps, func(sn engine.Snapshot) bool {
		return slices.ContainsFunc(sn.Workers, func(w engine.WorkerSnapshot) bool { return w.State != "" })
	}) {
		res.Fleet.States = states(snaps, workers, cols, merge)
	}
	res.Fleet.HitRatio = hitRatio(recs, workers, cols, res.Fleet.WindowMS)
	if k.Index.G2Blocks > 0 {
		res.Fleet.TierHit = tierHit(recs, cols, res.Fleet.WindowMS)
	}
	res.TTFTOverTime = ttftOverTime(recs, res.Fleet.WindowMS, cols)
	return res
}

// states is each worker's most telling state in each window of merged snapshots.
func states(snaps []engine.Snapshot, workers, cols, merge int) [][]byte {
	code := map[string]byte{"": tui.StateServing, "off": tui.StateOff, "draining": tui.StateDraining, "starting": tui.StateStarting, "failed": tui.StateFailed}
	out := make([][]byte, workers)
	for w := range out {
		out[w] = make([]byte, cols)
		for c := range cols {
			for _, sn := range snaps[c*merge : min(len(snaps), (c+1)*merge)] {
				out[w][c] = max(out[w][c], code[sn.Workers[w].State])
			}
		}
	}
	return out
}

// hitRatio is the token-weighted prefix-hit ratio per worker and arrival window; in a
// disaggregated fleet a request counts on its prefill worker (the prompt's prefix hits) and
// on its decode worker (the prompt tokens it held at the reservation).
func hitRatio(recs []engine.RequestRecord, workers, cols int, windowMS float64) [][]float64 {
	cached, input := matrix(workers, cols), matrix(workers, cols)
	for _, r := range recs {
		if cols == 0 || windowMS <= 0 {
			break
		}
		c := min(cols-1, int(r.ArrivalMS/windowMS))
		add := func(w, hit int) {
			if w >= 0 && w < workers {
				cached[w][c] += float64(hit)
				input[w][c] += float64(r.InputLength)
			}
		}
		if h := r.Handoff; h != nil {
			add(h.PrefillWorker, r.CachedTokens)
			add(r.Worker, h.DecodeCachedTokens)
		} else {
			add(r.Worker, r.CachedTokens)
		}
	}
	for w := range cached {
		for c := range cached[w] {
			if input[w][c] == 0 {
				cached[w][c] = math.NaN()
			} else {
				cached[w][c] /= input[w][c]
			}
		}
	}
	return cached
}

// tierHit is the fleet's token-weighted share of prompt tokens onboarded from the KV tiers
// per arrival window.
func tierHit(recs []engine.RequestRecord, cols int, windowMS float64) []float64 {
	tier, input := make([]float64, cols), make([]float64, cols)
	for _, r := range recs {
		if cols == 0 || windowMS <= 0 {
			break
		}
		c := min(cols-1, int(r.ArrivalMS/windowMS))
		tier[c] += float64(r.TierCachedTokens)
		input[c] += float64(r.InputLength)
	}
	for c := range tier {
		if input[c] == 0 {
			tier[c] = math.NaN()
		} else {
			tier[c] /= input[c]
		}
	}
	return tier
}

func matrix(rows, cols int) [][]float64 {
	m := make([][]float64, rows)
	for i := range m {
		m[i] = make([]float64, cols)
	}
	return m
}

// ttftOverTime is the mean TTFT of the requests whose first token fell in each window.
func ttftOverTime(recs []engine.RequestRecord, windowMS float64, cols int) []float64 {
	if cols == 0 || windowMS <= 0 {
		return nil
	}
	sum := make([]float64, cols)
	n := make([]int, cols)
	for _, r := range recs {
		c := min(cols-1, int((r.ArrivalMS+r.TTFTMS)/windowMS))
		sum[c] += r.TTFTMS
		n[c]++
	}
	out := make([]float64, cols)
	for c := range out {
		out[c] = math.NaN()
		if n[c] > 0 {
			out[c] = sum[c] / float64(n[c])
		}
	}
	return out
}

// metrics picks the explorer's figures out of an engine summary.
func metrics(s engine.Summary) tui.Metrics {
	var why []string // each reason with its first request's place; counted when several
	for _, r := range s.Rejections {
		w := fmt.Sprintf("%s (first: %s)", r.Reason, r.First)
		if len(s.Rejections) > 1 {
			w = fmt.Sprintf("%d %s", r.Requests, w)
		}
		why = append(why, w)
	}
	m := tui.Metrics{
		Rejected: s.RequestsRejected, RejectedWhy: strings.Join(why, "; "),
		Completed:   s.RequestsCompleted,
		TTFT:        tui.Quantiles{Mean: s.MeanTTFTMS, P50: s.P50TTFTMS, P90: s.P90TTFTMS, P99: s.P99TTFTMS},
		TPOT:        tui.Quantiles{Mean: s.MeanTPOTMS, P50: s.P50TPOTMS, P90: s.P90TPOTMS, P99: s.P99TPOTMS},
		E2E:         tui.Quantiles{Mean: s.MeanE2EMS, P50: s.P50E2EMS, P90: s.P90E2EMS, P99: s.P99E2EMS},
		OutputTokS:  s.OutputThroughput,
		PrefixReuse: s.PrefixCacheReusedRatio,
	}
	if l := s.Load; l != nil {
		m.StallMS, m.StallShare, m.DecodeImbalance, m.BlockImbalance = l.MeanTPOTStallMS, l.TPOTStallShare, l.DecodeImbalance, l.BlockImbalance
	}
	return m
}

// powersOfTwo is lo, 2·lo, 4·lo, … up to hi: the ladder of a numeric knob.
func powersOfTwo(lo, hi int) []int {
	var out []int
	for n := lo; n <= hi; n *= 2 {
		out = append(out, n)
	}
	return out
}

// ladder is a ladder with the experiment's own values added, sorted, without repeats.
func ladder(base []int, extra ...int) []int {
	out := append(base, extra...)
	slices.Sort(out)
	return slices.Compact(out)
}

func ints(vals []config.Value) []int {
	var out []int
	for _, v := range vals {
		out = append(out, int(v.Num))
	}
	return out
}

// Space is the explorer's knob space: each router knob's search_space values (a knob with a
// single value also gets the seed's values, so it can still be explored), every router
// mode, and ladders of concurrencies and deployment settings.
func (s *Sim) Space() tui.Space {
	f := s.exp.File
	seed := config.Default()
	nums := func(key string) []float64 {
		vals := f.Values(key)
		if len(vals) < 2 {
			vals = append(vals, seed.Values(key)...)
		}
		var out []float64
		for _, v := range vals {
			out = append(out, v.Num)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	sp := tui.Space{
		Credits:       nums(config.KeyOverlapScoreCredit),
		Scales:        nums(config.KeyPrefillLoadScale),
		Temperatures:  nums(config.KeyRouterTemperature),
		Concurrencies: ladder(powersOfTwo(1, 256), f.Workload.ReplayConcurrency),
		Speedups:      speedups(f.Workload.ArrivalSpeedupRatio),
		Replicas:      ladder(powersOfTwo(1, router.MaxWorkers), s.base.Workers),
		BatchedTokens: ladder(powersOfTwo(2048, 65536), ints(f.Values("agg_max_num_batched_tokens"))...),
		Seqs:          ladder(powersOfTwo(32, 1024), ints(f.Values("agg_max_num_seqs"))...),
		Index:         indexSpace(f),
	}
	for _, m := range router.Modes() {
		sp.Modes = append(sp.Modes, string(m))
	}
	sp.KVCacheDtypes = model.KVCacheDtypes()
	sp.Load = s.loadSpace()
	d := s.base.Worker
	sp.Layouts = s.catalog.Layouts(d.ModelName, d.HardwareSKU)
	sp.Models, sp.Catalog = s.catalog.Models(), s.catalog
	for _, m := range sp.Models {
		sp.GPUs = append(sp.GPUs, s.catalog.GPUs(m)...)
	}
	slices.Sort(sp.GPUs)
	sp.GPUs = slices.Compact(sp.GPUs)
	sp.Backends, sp.BackendFits = model.BackendNames(), s.backendFits
	sp.DisaggFits, sp.LayoutGPUs = s.disaggFits, s.layoutGPUs
	sp.ConditionalRule = conditionalRule(s.exp.File.Disagg.ConditionalThresholds())
	return sp
}

// Initial is where the explorer starts: Dynamo's default point, as `routerlab replay` and the
// sweep's default_kv run it (kv_router, credit 1, scale 1, T 0 where the file's lists offer
// them, every other list its first value), at the file's concurrency and deployment.
func (s *Sim) Initial() tui.Knobs {
	f := s.exp.File
	p := f.DefaultPoint()
	val := func(key string) config.Value {
		v, _ := f.At(p, key) // DefaultPoint is a valid point of f
		return v
	}
	d := s.base.Worker
	k := tui.Knobs{
		Mode:        val(config.KeyRouterMode).Text,
		Credit:      val(config.KeyOverlapScoreCredit).Num,
		Scale:       val(config.KeyPrefillLoadScale).Num,
		Temperature: val(config.KeyRouterTemperature).Num,
		Concurrency: f.Workload.ReplayConcurrency,
		Speedup:     f.Workload.ArrivalSpeedupRatio,
		Index:       indexKnobs(val),
		Deployment: tui.Deployment{
			Replicas: s.base.Workers, Layout: layoutName(d.Layout(), s.catalog.moe[d.ModelName], d.Quantization),
			MaxBatchedTokens: d.MaxNumBatchedTokens, MaxSeqs: d.MaxNumSeqs, KVCacheDtype: d.KVCacheDtype, Async: d.AsyncScheduling,
			Model: d.ModelName, GPU: d.HardwareSKU, Backend: explicitBackend(d.Backend),
		},
		Load: s.initialLoad(),
	}
	if dg := s.base.Disagg; dg != nil {
		s.fileSplit(&k.Deployment, dg)
	}
	return k
}

// speedups is the arrival_speedup_ratio knob's ladder: quarter speed to 64 times, and the
// file's own value.
func speedups(file float64) []float64 {
	out := []float64{0.25, 0.5, 1, 2, 4, 8, 16, 32, 64}
	if file > 0 && !slices.Contains(out, file) {
		out = append(out, file)
		slices.Sort(out)
	}
	return out
}
