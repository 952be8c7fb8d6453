package backend

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
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
// deployment, in the experiment file's own keys (what every routerlab command accepts).
func (s *Sim) deploymentSets(k tui.Knobs) ([]string, error) {
	dk := k.Deployment
	i := slices.IndexFunc(s.layouts, func(l model.Layout) bool { return layoutName(l) == dk.Layout })
	if i < 0 {
		return nil, fmt.Errorf("explorer: unknown parallel layout %q", dk.Layout)
	}
	l := s.layouts[i]
	// parallel_configs given with --set raises gpu_budget to fit (config.File.Apply).
	sets := []string{
		"workload.replay_concurrency=" + strconv.Itoa(k.Concurrency),
		fmt.Sprintf("parallel_configs=[{tp: %d, attention_dp: %d, moe_tp: %d, moe_ep: %d, replicas: %d}]",
			l.TP, l.AttentionDP, l.MoETP, l.MoEEP, dk.Replicas),
		fmt.Sprintf("agg_max_num_batched_tokens=[%d]", dk.MaxBatchedTokens),
		fmt.Sprintf("agg_max_num_seqs=[%d]", dk.MaxSeqs),
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
	return append(sets, "async_scheduling="+strconv.FormatBool(dk.Async)), nil
}

// ReplaySets are the --set overrides with which `routerlab replay --requests N` on the same
// experiment runs point k: the deployment's, and each router knob as a one-value list.
func (s *Sim) ReplaySets(k tui.Knobs) ([]string, error) {
	sets, err := s.deploymentSets(k)
	if err != nil {
		return nil, err
	}
	return append(sets,
		fmt.Sprintf("%s=[%s]", config.KeyRouterMode, k.Mode),
		fmt.Sprintf("%s=[%s]", config.KeyOverlapScoreCredit, strconv.FormatFloat(k.Credit, 'g', -1, 64)),
		fmt.Sprintf("%s=[%s]", config.KeyPrefillLoadScale, strconv.FormatFloat(k.Scale, 'g', -1, 64)),
		fmt.Sprintf("%s=[%s]", config.KeyRouterTemperature, strconv.FormatFloat(k.Temperature, 'g', -1, 64))), nil
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
				se.Eval = &tui.SweepEval{Round: ev.Round, Knobs: knobs(ev.Config, at), Value: ev.Value, Runs: runs(ev.Key)}
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
