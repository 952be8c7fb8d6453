package backend

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/tui"
)

// Sweeper runs the smart sweep of an experiment for the explorer, in memory (no output
// directory, no ledger), at the explorer's knobs: their concurrency, request count and
// deployment, searching the experiment's router knobs.
type Sweeper struct {
	sim  *Sim
	out  string // run directory ("" = no files, unless runs is set)
	runs string // parent of a new run directory per sweep, when out is ""
	n    *atomic.Int64
	wg   *sync.WaitGroup // sweeps still running
}

// NewSweeper sweeps the experiment of sim as `routerlab sweep` would, on the requests sim
// replays, without writing files.
func NewSweeper(sim *Sim) *Sweeper {
	return &Sweeper{sim: sim, n: new(atomic.Int64), wg: new(sync.WaitGroup)}
}

// WritingTo returns the same sweep writing its run directory (ledger, report) into dir.
func (s *Sweeper) WritingTo(dir string) *Sweeper {
	c := *s
	c.out = dir
	return &c
}

// dir is where the next sweep writes: out, or a new explorer-TIME-N under runs.
func (s *Sweeper) dir() string {
	if s.out != "" || s.runs == "" {
		return s.out
	}
	return filepath.Join(s.runs, fmt.Sprintf("explorer-%s-%d", time.Now().UTC().Format("20060102-150405"), s.n.Add(1)))
}

// isRouterKey reports whether a search_space key is a router knob: the dimensions the
// explorer's sweep searches (the deployment is fixed at the knobs).
func isRouterKey(key string) bool {
	return slices.Contains([]string{config.KeyRouterMode, config.KeyOverlapScoreCredit, config.KeyPrefillLoadScale, config.KeyRouterTemperature}, key)
}

// Info describes the sweep for the explorer's sweep pane.
func (s *Sweeper) Info() (tui.SweepInfo, error) {
	f := s.sim.exp.File
	obj, err := sweep.NewObjective(f.Goal)
	if err != nil {
		return tui.SweepInfo{}, err
	}
	name := objectiveLabel(obj)
	var dims []string
	for _, d := range f.Dimensions() {
		if isRouterKey(d.Key) {
			dims = append(dims, d.Key)
		}
	}
	validation := len(s.sim.exp.Trace.Requests)
	if n := f.Validate.Requests; n > 0 && n < validation {
		validation = n
	}
	return tui.SweepInfo{
		Objective: name, HigherIsBetter: obj.Maximise(), Dims: dims,
		Rounds: f.Sweep.MaxRounds, PerRound: f.Sweep.CandidatesPerRound,
		Requests: s.sim.Requests(), ValidationRequests: validation,
	}, nil
}

// objectiveLabel titles the objective's column: "e2e ms", "TTFT ms", "TPOT ms", "tok/s".
func objectiveLabel(obj sweep.Objective) string {
	if name, ok := map[string]string{"e2e_latency": "e2e ms", "ttft": "TTFT ms", "tpot": "TPOT ms"}[obj.Target]; ok {
		return name
	}
	return obj.Unit()
}

// File is the experiment file the explorer sweeps at knobs k: the experiment's, with the
// concurrency, the search requests and every deployment setting fixed at k's (the GPU
// budget raised if k's fleet needs more).
func (s *Sweeper) File(k tui.Knobs) (*config.File, error) {
	f := s.sim.exp.File.Clone()
	sets, err := s.ResumeSets(k)
	if err != nil {
		return nil, err
	}
	if err := f.Apply(sets); err != nil {
		return nil, err
	}
	return f, nil
}

// ResumeSets are the --set overrides that make File(at) of the experiment: with the flags
// that made the experiment, `routerlab sweep --out DIR --resume` continues a sweep the
// explorer started at knobs at (its ledger refuses any other experiment).
func (s *Sweeper) ResumeSets(at tui.Knobs) ([]string, error) {
	sets, err := s.sim.deploymentSets(at)
	if err != nil {
		return nil, err
	}
	return append(sets, "workload.search_requests="+strconv.Itoa(s.sim.Requests())), nil
}

// deploymentSets are the --set overrides that put the experiment at k's concurrency and
// deployment, in the experiment file's own keys (what every routerlab command accepts):
// every setting, then what the model and GPU bring with them (precision, backend version,
// context length) where it differs from the file's.
func (s *Sim) deploymentSets(k tui.Knobs) ([]string, error) {
	dk := k.Deployment
	f := s.exp.File
	o, err := s.option(dk)
	if err != nil {
		return nil, err
	}
	l := o.layout
	// parallel_configs given with --set raises gpu_budget to fit (config.File.Apply).
	shape := func(l model.Layout, replicas int) string {
		return fmt.Sprintf("{tp: %d, attention_dp: %d, moe_tp: %d, moe_ep: %d, replicas: %d}", l.TP, l.AttentionDP, l.MoETP, l.MoEEP, replicas)
	}
	sets := []string{
		"workload.replay_concurrency=" + strconv.Itoa(k.Concurrency),
		"parallel_configs=[" + shape(l, dk.Replicas) + "]",
		fmt.Sprintf("agg_max_num_batched_tokens=[%d]", dk.MaxBatchedTokens),
		fmt.Sprintf("agg_max_num_seqs=[%d]", dk.MaxSeqs),
	}
	switch {
	case dk.Prefill == 0 && slices.ContainsFunc(f.Values("deployment_mode"), func(v config.Value) bool { return v.Text == config.ModeDisagg }):
		sets = append(sets, "deployment_mode=[agg]") // a disaggregated file's fleet joined (a)
	case dk.Prefill > 0:
		dec := decodeOf(dk)
		od, err := s.option(dec)
		if err != nil {
			return nil, err
		}
		sets = []string{sets[0], "deployment_mode=[disagg]",
			fmt.Sprintf("parallel_configs=[{prefill: %s, decode: %s}]", shape(l, dk.Prefill), shape(od.layout, dk.Replicas-dk.Prefill)),
			fmt.Sprintf("prefill_max_num_batched_tokens=[%d]", dk.MaxBatchedTokens), fmt.Sprintf("prefill_max_num_seqs=[%d]", dk.MaxSeqs),
			fmt.Sprintf("decode_max_num_batched_tokens=[%d]", dec.MaxBatchedTokens), fmt.Sprintf("decode_max_num_seqs=[%d]", dec.MaxSeqs)}
	}
	sets = append(sets, s.conditionalSets(dk)...)
	if k.Speedup > 0 && k.Speedup != f.Workload.ArrivalSpeedupRatio {
		sets = append(sets, "workload.arrival_speedup_ratio="+strconv.FormatFloat(k.Speedup, 'g', -1, 64))
	}
	if dk.KVCacheDtype != "" {
		sets = append(sets, fmt.Sprintf("%s=[%s]", config.KeyKVCacheDtype, dk.KVCacheDtype))
	}
	if dk.Model != "" {
		sets = append(sets, "model_name="+dk.Model)
	}
	if dk.GPU != "" {
		sets = append(sets, fmt.Sprintf("%s=[%s]", config.KeyHardwareSKU, dk.GPU))
	}
	sets = append(sets, "async_scheduling="+strconv.FormatBool(dk.Async))
	switch {
	case o.quant == f.Quantization:
	case o.quant == "":
		return nil, fmt.Errorf("explorer: layout %s serves the checkpoint's own precision, which no --set can ask for over the file's quantization %s", dk.Layout, f.Quantization)
	default:
		sets = append(sets, "quantization="+o.quant)
	}
	if o.version != f.BackendVersion {
		sets = append(sets, "backend_version="+o.version)
	}
	if c := s.contextLength(s.modelOf(dk)); c != f.ContextLength {
		sets = append(sets, "context_length="+strconv.Itoa(c))
	}
	return append(sets, s.loadSets(k.Load)...), nil
}

// modelOf is the model a deployment of the knobs serves.
func (s *Sim) modelOf(d tui.Deployment) string { return cmp.Or(d.Model, s.base.Worker.ModelName) }

// option is the catalogue's entry for the knobs' deployment.
func (s *Sim) option(d tui.Deployment) (fleetOption, error) {
	return s.catalog.option(s.modelOf(d), cmp.Or(d.GPU, s.base.Worker.HardwareSKU), d.Layout)
}

// ReplaySets are the --set overrides with which `routerlab replay --requests N` on the same
// experiment runs point k: only what differs from the point a bare replay runs (the
// explorer's first), so the command stays short — the router knobs as values, the fleet as
// replicas and layout, and what a model or GPU change brings with it.
func (s *Sim) ReplaySets(k tui.Knobs) ([]string, error) {
	init := s.Initial()
	var sets []string
	num := func(key string, v, was float64) {
		if v != was {
			sets = append(sets, key+"="+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	if k.Mode != init.Mode {
		sets = append(sets, config.KeyRouterMode+"="+k.Mode)
	}
	num(config.KeyOverlapScoreCredit, k.Credit, init.Credit)
	num(config.KeyPrefillLoadScale, k.Scale, init.Scale)
	num(config.KeyRouterTemperature, k.Temperature, init.Temperature)
	sets = append(sets, indexSets(k.Index, init.Index)...)
	if k.Concurrency != init.Concurrency {
		sets = append(sets, "replay_concurrency="+strconv.Itoa(k.Concurrency))
	}

	all, err := s.deploymentSets(k)
	if err != nil {
		return nil, err
	}
	was, err := s.deploymentSets(init)
	if err != nil {
		return nil, err
	}
	for _, set := range all {
		key, _, _ := strings.Cut(set, "=")
		switch {
		case slices.Contains(was, set), key == "workload.replay_concurrency":
		case key == "parallel_configs" && k.Deployment.Prefill > 0:
			sets = append(sets, set) // both pools' shapes
		case key == "parallel_configs":
			if k.Deployment.Replicas != init.Deployment.Replicas {
				sets = append(sets, "replicas="+strconv.Itoa(k.Deployment.Replicas))
			}
			o, err := s.option(k.Deployment)
			if err != nil {
				return nil, err
			}
			// The layout alone, in the words --set reads (a dense model's without experts).
			l := layoutName(o.layout, s.catalog.moe[s.modelOf(k.Deployment)], "")
			if l != layoutName(s.base.Worker.Layout(), s.catalog.moe[s.base.Worker.ModelName], "") {
				sets = append(sets, "layout="+l)
			}
		default: // one-value lists as plain values, once (conditional disaggregation's router_mode may be set above)
			if plain := strings.NewReplacer("=[", "=", "]", "").Replace(set); !slices.Contains(sets, plain) {
				sets = append(sets, plain)
			}
		}
	}
	return sets, nil
}

// knobs reads a sweep configuration (search-dimension values by key) as explorer knobs, the
// knobs it does not name as at.
func knobs(cfg map[string]string, at tui.Knobs) tui.Knobs {
	k := at
	num := func(key string, dst *float64) {
		if v, ok := cfg[key]; ok {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				*dst = x
			}
		}
	}
	if v, ok := cfg[config.KeyRouterMode]; ok {
		if m, err := router.ParseMode(v); err == nil {
			k.Mode = string(m)
		}
	}
	num(config.KeyOverlapScoreCredit, &k.Credit)
	num(config.KeyPrefillLoadScale, &k.Scale)
	num(config.KeyRouterTemperature, &k.Temperature)
	loadFromConfig(cfg, &k.Load)
	return k
}

// Sweep runs the search and the validation at knobs at, turning the sweep's progress events
// into the explorer's.
func (s *Sweeper) Sweep(ctx context.Context, at tui.Knobs, emit func(tui.SweepEvent)) error {
	s.wg.Add(1)
	defer s.wg.Done()
	out := s.dir()
	f, err := s.File(at)
	if err != nil {
		return err
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		return err
	}
	space, err := sweep.NewSpace(ctx, f)
	if err != nil {
		return err
	}
	runs := func(key string) int {
		if c, ok := space.Index(key); ok && space.Candidates[c].Stochastic {
			return sweep.StochasticSeeds
		}
		return 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	progress := make(chan sweep.Event)
	type outcome struct {
		res *sweep.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := sweep.Run(ctx, f, exp, sweep.Options{Out: out, Experiment: exp.Fingerprint(), Progress: progress})
		done <- outcome{res, err}
	}()
	for {
		select {
		case ev := <-progress:
			se := tui.SweepEvent{Progress: ev.Progress, Dir: out}
			if ev.Phase == sweep.PhaseSearch && ev.Key != "" {
				k, pools := evalKnobs(ev.Config, at, ev.Runs)
				se.Eval = &tui.SweepEval{Round: ev.Round, Candidate: ev.Candidate, Knobs: k, Value: ev.Value, Runs: runs(ev.Key), Pools: pools}
			}
			emit(se)
		case res := <-done:
			if res.err != nil {
				return res.err
			}
			final := tui.SweepEvent{Progress: res.res.Search.Progress(), Dir: out}
			if v := res.res.Validation; v != nil {
				for _, r := range v.Runs {
					final.Validation = append(final.Validation, tui.ValidationRow{Name: r.Name, Knobs: knobs(r.Config, at), Metrics: metrics(r.Metrics)})
				}
			}
			emit(final)
			return nil
		}
	}
}
