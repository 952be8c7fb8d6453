package sweep

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

// Simulator runs simulations of an experiment. *config.Experiment implements it; tests use
// cheap synthetic ones.
type Simulator interface {
	// EngineConfig returns the simulation of search point p.
	EngineConfig(p config.Point) (engine.Config, error)
	// Run replays the first `requests` requests of the trace (0 = all) under cfg.
	Run(ctx context.Context, cfg engine.Config, requests int) (*engine.Report, error)
	// CheckRequests fails when the first n requests (for each n; 0 = all) cannot be
	// replayed under some deployment of the space (config.Experiment.CheckRequests).
	CheckRequests(ns ...int) error
}

// Remote is implemented by a Simulator whose runs use other machines' CPUs (the NATS
// work queue of package natsweep): the sweep then keeps up to Slots runs in flight instead of
// at most one per local CPU. Results and their order do not depend on it.
type Remote interface {
	Slots() int
	// Status is one line on the remote fleet ("nats: 2 workers connected, 20 tasks in
	// flight, 18 results"), carried in every progress event of the sweep.
	Status() string
}

// StochasticSeeds is how many simulation seeds (workload.seed, +1, +2) a stochastic
// candidate is evaluated over; its metrics are the means. The seeds do not depend on the
// sweep's own seed, so every algorithm and sweep seed optimises the same function.
const StochasticSeeds = 3

// Options are a sweep's run-time settings; what to search and how is in the config.File.
type Options struct {
	// Out is the output directory: ledger.jsonl, summary.json, report.md, evaluations.csv.
	// Empty: no files (the explorer's in-memory sweeps).
	Out string
	// Resume continues the sweep whose ledger is in Out; it is refused when the ledger's
	// experiment differs from Experiment.
	Resume bool
	// Experiment is the fingerprint of what is swept (config.Experiment.Fingerprint); nil
	// means the file's own, which cannot name the trace's content or the timing tables.
	Experiment config.Fingerprint
	// Progress, when set, receives an Event as each evaluation finishes. Sends block (until
	// the context ends), so the receiver must keep draining it; Run does not close it.
	Progress chan<- Event

	record *progressFile // progress.json of Out, set by Run
	remote Remote        // the simulator when its runs are remote, set by Run, RunSearch, Validate
	spec   *speculator   // the slot pool with speculative validation replays, set by Run
}

// withRemote notes whether sim's runs are remote, so that events carry its status.
func (o Options) withRemote(sim Simulator) Options {
	o.remote, _ = sim.(Remote)
	return o
}

// Event reports one finished evaluation (or saturation/validation run), for progress
// displays; an event with an empty Key only says a phase began (Done 0) or the sweep is done.
// Events arrive in completion order, which differs between runs (results never depend on
// it); within a phase their Done counts go up by one.
type Event struct {
	Progress                    // where the sweep stands after this event
	Candidate int               // position within the round, 0-based
	Key       string            // canonical configuration, or validation name
	Config    map[string]string // its search-dimension values
	Value     float64           // the goal's target metric of this evaluation (its unit: Unit)
	Unit      string            // "ms" or "tok/s"
	Resumed   bool              // taken from the ledger, not simulated again
	BestKey   string            // best configuration finished so far in this phase
	BestValue float64
	// Runs are a search evaluation's simulations (Evaluation.Runs): a watcher reads a
	// disaggregated fleet's pools from them.
	Runs []engine.Summary
}

// Evaluation is one canonical configuration evaluated on the search requests; it is also one
// line of the ledger.
type Evaluation struct {
	Round     int               `json:"round"`     // 1-based
	Candidate int               `json:"candidate"` // position within the round, 0-based
	Key       string            `json:"key"`
	Config    map[string]string `json:"config"`
	Seeds     []uint64          `json:"seeds"`
	// Runs are the summaries of the simulations, one per seed.
	Runs []engine.Summary `json:"runs"`
	// Metrics are the means over Runs of what a goal can target.
	Metrics Metrics `json:"metrics"`
	// Value is the goal's target metric (Metrics' mean e2e latency, TTFT, TPOT or throughput).
	Value float64 `json:"value"`
	// WallTimeMS is the simulation time spent on this evaluation, summed over its runs: the
	// only field of a ledger line that differs between identical sweeps.
	WallTimeMS float64 `json:"wall_time_ms"`
}

// Search is the outcome of the search phase.
type Search struct {
	File      *config.File
	Space     *Space
	Objective Objective
	// Evaluations in evaluation order (round, then candidate within the round).
	Evaluations []Evaluation
	Best        int    // index into Evaluations
	Rounds      int    // round budget: max_rounds, or enough rounds for the whole grid
	Stop        string // why the search ended
	// Reason is Stop in a few words: "converged at round r of R", StopBudget or StopExhausted.
	Reason  string
	Resumed int // evaluations taken from the ledger
	// Experiment is the fingerprint of what was searched.
	Experiment config.Fingerprint
	// Notes are remarks for the user about the run, e.g. a ledger of another version resumed.
	Notes []string
}

// BestEvaluation returns the winner of the search.
func (s *Search) BestEvaluation() *Evaluation { return &s.Evaluations[s.Best] }

// RunSearch runs the search phase: rounds of candidates proposed by the file's algorithm and
// evaluated on sim, recorded in the ledger when opt.Out is set (whose lock the caller holds,
// as Run does). When ctx ends first the error is an *Interrupted.
func RunSearch(ctx context.Context, f *config.File, sim Simulator, opt Options) (*Search, error) {
	opt = opt.withRemote(sim)
	sim = withSlotMemory(sim)
	space, err := NewSpace(ctx, f)
	if ctx.Err() != nil {
		n := 0
		if opt.Out != "" {
			evals, _ := ReadLedger(opt.Out)
			n = len(evals)
		}
		return nil, &Interrupted{Evaluations: n, Err: ctx.Err()}
	}
	if err != nil {
		return nil, err
	}
	obj, err := NewObjective(f.Goal)
	if err != nil {
		return nil, err
	}
	prop, err := newProposer(f.Sweep.Algorithm, space, f.Sweep.Seed)
	if err != nil {
		return nil, err
	}
	s := &Search{File: f, Space: space, Objective: obj, Experiment: opt.Experiment}
	if s.Experiment == nil {
		s.Experiment = f.Fingerprint()
	}
	var led *ledger
	var prior []Evaluation
	if opt.Out != "" {
		led, prior, s.Notes, err = openLedger(opt.Out, ledgerHeader{Ledger: ledgerMagic, Experiment: s.Experiment}, opt.Resume)
		if err != nil {
			return nil, err
		}
		defer led.close()
		if err := removeOutputs(opt.Out); err != nil {
			return nil, err
		}
	}
	cands := space.Candidates
	done := make([]bool, len(cands))
	var obs []observation
	s.Rounds = s.rounds()
	total := min(s.Rounds*f.Sweep.CandidatesPerRound, len(cands))
	tr := &tracker{obj: obj, total: total}
	for round := 1; round <= s.Rounds; round++ {
		if len(s.Evaluations) == len(cands) {
			break
		}
		picks, err := prop.next(obs, done, f.Sweep.CandidatesPerRound)
		if err != nil {
			return nil, err
		}
		if len(picks) == 0 {
			s.Stop = "converged: no unevaluated configuration's lower confidence bound beats the best"
			s.Reason = converged(round-1, s.Rounds)
			break
		}
		evals, resumed, err := s.evaluateRound(ctx, sim, round, picks, prior, led, opt, tr)
		if err != nil {
			if ctx.Err() != nil {
				n := len(s.Evaluations) + resumed
				if led != nil {
					// A ledger that could not be written (its creation or a rewrite behind,
					// whose error only the next append or wait returns) is the sweep's error:
					// not an interruption that --resume continues.
					if err := led.wait(); err != nil {
						return nil, err
					}
					n = led.saved()
				}
				return nil, &Interrupted{Evaluations: n, Err: ctx.Err()}
			}
			return nil, err
		}
		s.Resumed += resumed
		for i, e := range evals {
			s.Evaluations = append(s.Evaluations, e)
			done[picks[i]] = true
			obs = append(obs, observation{cand: picks[i], score: obj.Score(e.Metrics)})
		}
		if opt.spec != nil && f.Validate.Enabled {
			opt.spec.wantDuringSearch(s, sim)
		}
		if led != nil {
			// Put the ledger in evaluation order (appends arrive in completion order), keeping
			// resumed evaluations of later rounds for their turn; the next round need not wait
			// for the disk.
			led.rewriteBehind(append(slices.Clone(s.Evaluations), unused(prior, s.Evaluations)...))
		}
	}
	if led != nil {
		if err := led.wait(); err != nil {
			return nil, err
		}
	}
	if len(s.Evaluations) == 0 {
		return nil, fmt.Errorf("sweep: nothing evaluated (%d rounds of %d candidates)", s.Rounds, f.Sweep.CandidatesPerRound)
	}
	switch {
	case s.Stop != "":
	case len(s.Evaluations) == len(cands):
		s.Stop, s.Reason = "every canonical configuration evaluated", StopExhausted
	default:
		s.Stop, s.Reason = fmt.Sprintf("budget: %d rounds × %d candidates", s.Rounds, f.Sweep.CandidatesPerRound), StopBudget
	}
	s.Best = s.bestSoFar()
	return s, nil
}

// bestSoFar is the index of the best evaluation so far (the first of equals).
func (s *Search) bestSoFar() int {
	best := 0
	for i := range s.Evaluations {
		if s.Objective.Better(s.Evaluations[i].Metrics, s.Evaluations[best].Metrics) {
			best = i
		}
	}
	return best
}

// rounds is the round budget: max_rounds, except that a grid search always covers the whole
// space (in rounds of candidates_per_round).
func (s *Search) rounds() int {
	if s.File.Sweep.Algorithm == Grid {
		per := s.File.Sweep.CandidatesPerRound
		return (len(s.Space.Candidates) + per - 1) / per
	}
	return s.File.Sweep.MaxRounds
}

// unused returns the prior evaluations whose keys are not among used, in prior order.
func unused(prior, used []Evaluation) []Evaluation {
	seen := map[string]bool{}
	for _, e := range used {
		seen[e.Key] = true
	}
	var out []Evaluation
	for _, e := range prior {
		if !seen[e.Key] {
			out = append(out, e)
		}
	}
	return out
}

// seedsFor returns the simulation seeds of a candidate.
func seedsFor(c *Candidate, workloadSeed uint64) []uint64 {
	n := 1
	if c.Stochastic {
		n = StochasticSeeds
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = workloadSeed + uint64(i)
	}
	return seeds
}

// tracker keeps the best-so-far and counts of a phase for progress events.
type tracker struct {
	obj       Objective
	total     int
	done      int
	best      Metrics
	bestKey   string
	haveBest  bool
	bestValue float64
}

func (t *tracker) add(key string, m Metrics) {
	t.done++
	if !t.haveBest || t.obj.Better(m, t.best) {
		t.best, t.bestKey, t.bestValue, t.haveBest = m, key, t.obj.Value(m), true
	}
}

// evaluateRound evaluates the picks of one round, reusing prior (ledger) evaluations, on
// parallel goroutines; the result is in pick order whatever the completion order.
func (s *Search) evaluateRound(ctx context.Context, sim Simulator, round int, picks []int, prior []Evaluation,
	led *ledger, opt Options, tr *tracker) ([]Evaluation, int, error) {
	f := s.File
	evals := make([]Evaluation, len(picks))
	var jobs []runJob
	var owner []int // job → pick
	resumed := 0
	var events []Event
	for i, c := range picks {
		cand := &s.Space.Candidates[c]
		if j := slices.IndexFunc(prior, func(e Evaluation) bool { return e.Key == cand.Key }); j >= 0 {
			evals[i] = prior[j]
			evals[i].Round, evals[i].Candidate = round, i
			resumed++
			tr.add(cand.Key, evals[i].Metrics)
			events = append(events, s.event(round, i, &evals[i], tr, true))
			continue
		}
		cfg, err := sim.EngineConfig(cand.Point)
		if err != nil {
			return nil, 0, fmt.Errorf("sweep: %s: %w", cand.Key, err)
		}
		s.Objective.prepare(&cfg)
		seeds := seedsFor(cand, f.Workload.Seed)
		evals[i] = Evaluation{Round: round, Candidate: i, Key: cand.Key, Config: cand.Config, Seeds: seeds,
			Runs: make([]engine.Summary, len(seeds))}
		for _, seed := range seeds {
			c := cfg
			c.Seed = seed
			jobs = append(jobs, runJob{cfg: c, requests: f.Workload.SearchRequests})
			owner = append(owner, i)
		}
	}
	for _, ev := range events {
		if err := opt.send(ctx, ev); err != nil {
			return nil, 0, err
		}
	}
	left := make([]int, len(picks))
	for _, i := range owner {
		left[i]++
	}
	seedIdx := make([]int, len(jobs))
	for j := range jobs {
		seedIdx[j] = slices.Index(evals[owner[j]].Seeds, jobs[j].cfg.Seed)
	}
	runMetrics := make([][]Metrics, len(picks))
	for i := range evals {
		runMetrics[i] = make([]Metrics, len(evals[i].Seeds))
	}
	var mu sync.Mutex
	err := runAll(ctx, sim, f.Sweep.ParallelEvals, jobs, opt.spec, func(j int, rep *engine.Report, wall time.Duration) error {
		mu.Lock()
		i := owner[j]
		e := &evals[i]
		e.Runs[seedIdx[j]] = rep.Summary
		runMetrics[i][seedIdx[j]] = s.Objective.measure(jobs[j].cfg, rep)
		e.WallTimeMS += float64(wall.Microseconds()) / 1000
		left[i]--
		if left[i] > 0 {
			mu.Unlock()
			return nil
		}
		e.Metrics = meanMetrics(runMetrics[i])
		e.Value = s.Objective.Value(e.Metrics)
		tr.add(e.Key, e.Metrics)
		ev := s.event(round, i, e, tr, false)
		var err error
		if led != nil {
			err = led.append(e)
		}
		if err == nil {
			// Sent under the lock, so events leave in the order of their counts.
			err = opt.send(ctx, ev)
		}
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return evals, resumed, nil
}

func (s *Search) event(round, cand int, e *Evaluation, tr *tracker, resumed bool) Event {
	return Event{
		Progress:  Progress{Phase: PhaseSearch, Round: round, Rounds: s.Rounds, Done: tr.done, Total: tr.total},
		Candidate: cand, Key: e.Key, Config: e.Config, Value: e.Value, Unit: s.Objective.Unit(), Resumed: resumed,
		BestKey: tr.bestKey, BestValue: tr.bestValue, Runs: e.Runs,
	}
}

// runJob is one simulation.
type runJob struct {
	cfg      engine.Config
	requests int
}

// runAll runs jobs on `parallel` goroutines, but never more than GOMAXPROCS: a simulation
// is single-threaded and CPU-bound, so more at once only adds memory and cache pressure (a
// Remote simulator's Slots bound it instead). It calls done(j, report, wall time) as each
// finishes, one call at a time on a goroutine of its own, so that a simulating goroutine
// never waits for another's bookkeeping (the ledger line, progress.json, the progress
// receiver: on a busy disk these took longer than a search evaluation, with its core idle);
// the first error cancels the rest.
//
// With a speculator g, each simulation takes one of g's slots, and a job whose replay g ran
// speculatively takes that replay's report instead of simulating again.
func runAll(ctx context.Context, sim Simulator, parallel int, jobs []runJob, g *speculator, done func(int, *engine.Report, time.Duration) error) error {
	if len(jobs) == 0 {
		return nil
	}
	var started atomic.Int64
	if g != nil {
		g.enqueue(len(jobs))
		defer func() { g.enqueue(int(started.Load()) - len(jobs)) }()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	fail := func(err error) {
		once.Do(func() { firstErr = err; cancel() })
	}
	type finished struct {
		j    int
		rep  *engine.Report
		wall time.Duration
	}
	results := make(chan finished, len(jobs)) // never full: a simulating goroutine never blocks on it
	var collector sync.WaitGroup
	collector.Go(func() {
		for r := range results {
			if err := done(r.j, r.rep, r.wall); err != nil {
				fail(err)
			}
		}
	})
	n := min(parallel, runtime.GOMAXPROCS(0))
	if r, ok := sim.(Remote); ok {
		n = r.Slots()
	}
	for range max(1, min(n, len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				started.Add(1)
				start := time.Now()
				rep, err := run(ctx, sim, jobs[j], g)
				if err != nil {
					fail(err)
					continue
				}
				results <- finished{j, rep, time.Since(start)}
			}
		}()
	}
feed:
	for j := range jobs {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(results)
	collector.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// run runs one job of runAll: on a slot of g, or as g's speculative replay of it.
func run(ctx context.Context, sim Simulator, j runJob, g *speculator) (*engine.Report, error) {
	if g == nil {
		return sim.Run(ctx, j.cfg, j.requests)
	}
	if rep, ok, err := g.result(ctx, j); ok {
		g.enqueue(-1)
		return rep, err
	}
	g.acquire()
	defer g.release()
	return sim.Run(ctx, j.cfg, j.requests)
}
