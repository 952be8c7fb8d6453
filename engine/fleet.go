package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/planner"
	"github.com/routerlab/routerlab/router"
)

// Workers that come and go. With Config.Fleet set, the simulation allocates Fleet.Slots
// workers and the first Config.Workers of them serve from the start; the others are off
// until the planner asks for them. A worker's life:
//
//	off → starting (startup_time: the pod and engine come up, holding their GPUs) → serving
//	serving → draining (scale-down: no new requests, in-flight ones finish) → off
//	serving/draining → failed: its in-flight requests migrate or are lost, and the pod
//	restarts (starting again), as Kubernetes restarts a failed pod of the deployment
//
// A worker that starts has an empty prefix cache, and the router sees it only once it serves,
// as Dynamo's router sees an instance once it registers its endpoint; when a worker stops,
// the router drops every block of it from its index (discovery removes the instance and the
// KV router removes the worker: lib/llm/src/discovery/watcher.rs and lib/kv-router's
// remove_worker, read at 057096c3).
//
// A request whose worker fails is migrated as Dynamo's frontend migrates a disconnected
// stream (lib/llm/src/migration.rs, read at 0135b9a5): the prompt plus the tokens generated
// so far is sent again through the router, at most migration_limit times; past the limit
// the request fails and is counted lost. Dynamo's default limit is 0.

// Fleet is the worker lifecycle and the planner of Config.Fleet.
type Fleet struct {
	// Slots is how many workers may exist at once (the planner's most replicas); at least
	// Config.Workers.
	Slots         int
	GPUsPerWorker int
	// DecodeSlots and DecodeGPUsPerWorker are a disaggregated fleet's decode pool's
	// (Config.Disagg); Slots and GPUsPerWorker are then its prefill pool's.
	DecodeSlots         int       `json:",omitempty"`
	DecodeGPUsPerWorker int       `json:",omitempty"`
	StartupUS           int64     `json:",omitempty"` // startup_time
	MigrationLimit      int       `json:",omitempty"`
	Failures            []Failure `json:",omitempty"` // at given times
	// FailuresPerHour fails each live worker at this seeded Poisson rate (per hour of
	// simulated time).
	FailuresPerHour float64        `json:",omitempty"`
	Planner         planner.Config `json:",omitzero"`
}

// Failure fails worker Worker at AtUS (a worker that is not live then is left alone).
type Failure struct {
	AtUS   int64
	Worker int
}

// slot states
const (
	slotOff uint8 = iota
	slotStarting
	slotServing
	slotDraining
)

// fleet event kinds (event.gen of a phaseFleet event)
const (
	fleetReady uint32 = iota
	fleetFail
	fleetRandomFail
	fleetTick
)

// fleetState is a run's lifecycle: slot states, the planner, and what the report shows.
type fleetState struct {
	cfg     Fleet
	state   []uint8
	readyAt []int64 // a starting slot's end of start-up; a ready event at another time is stale
	// first: slots [0, first) are the aggregated or prefill pool, [first, len) the decode pool.
	first   int
	serving [2]int // per pool
	live    int    // starting, serving or draining: holding GPUs
	held    deque  // requests waiting for a worker of pool 0 to serve
	// heldDecode: prefilled requests waiting for a decode worker to serve.
	heldDecode deque
	rng        *rand.Rand

	pl   *planner.Planner
	tick planner.Tick

	// The frontend's traffic since the last throughput tick.
	winReq, winISL, winOSL int64
	hitBase, promptBase    int64

	lastT  int64
	marked int     // live GPUs at lastT: every change of live at t is marked at t
	gpuUS  float64 // ∫ live GPUs dt
	points []FleetPoint
	events []ScalingEvent
	ticks  int
	// A disaggregated fleet's per pool: live workers, those marked at lastT, ∫ live GPUs dt,
	// and the pool's timeline.
	poolLive, poolMarked [2]int
	poolGPUUS            [2]float64
	poolPoints           [2][]FleetPoint

	migrated, lost, failures int
	migrations               []uint8 // per request
	failedSince              []bool  // per slot: failed since the last snapshot
}

// stateName is slot w's state for a snapshot; a failure since the previous snapshot shows
// once as "failed".
func (fs *fleetState) stateName(w int) string {
	if fs.failedSince[w] {
		fs.failedSince[w] = false
		return "failed"
	}
	return [...]string{"off", "starting", "", "draining"}[fs.state[w]]
}

// validate checks the fleet against the rest of the configuration.
func (f *Fleet) validate(c *Config) error {
	switch {
	case f.Slots < c.Workers || f.Slots > router.MaxWorkers:
		return fmt.Errorf("fleet slots: %d must be in [workers %d, %d]", f.Slots, c.Workers, router.MaxWorkers)
	case f.GPUsPerWorker < 1:
		return fmt.Errorf("fleet: GPUs per worker %d must be positive", f.GPUsPerWorker)
	case f.StartupUS < 0:
		return fmt.Errorf("startup_time: %d µs must be >= 0", f.StartupUS)
	case f.MigrationLimit < 0 || f.MigrationLimit > 255:
		return fmt.Errorf("migration_limit: %d must be in [0, 255]", f.MigrationLimit)
	case !(f.FailuresPerHour >= 0) || math.IsInf(f.FailuresPerHour, 0):
		return fmt.Errorf("worker_failures rate: %v must be a number >= 0", f.FailuresPerHour)
	case !router.RestrictableMode(c.Router):
		return fmt.Errorf("router_mode %s (overlap_score_credit_decay %g): a fleet that changes routes with kv_router (no credit decay), round_robin, random, least_loaded or power_of_two_choices", c.Router.Mode, c.Router.OverlapScoreCreditDecay)
	case c.Router.Replicas > 1:
		return fmt.Errorf("router_replicas: %d; a fleet that changes is simulated behind one router", c.Router.Replicas)
	case c.Worker.Backend.OrDefault() != model.BackendVLLM:
		return fmt.Errorf("backend %s: a fleet that changes is simulated with vLLM workers (a restarted SGLang or TensorRT-LLM scheduler's state is not modelled)", c.Worker.Backend)
	case c.Disagg != nil && (f.DecodeSlots < c.Disagg.DecodeWorkers || f.Slots+f.DecodeSlots > router.MaxWorkers):
		return fmt.Errorf("fleet decode slots: %d must be in [decode workers %d, %d − %d prefill slots]", f.DecodeSlots, c.Disagg.DecodeWorkers, router.MaxWorkers, f.Slots)
	case c.Disagg != nil && f.DecodeGPUsPerWorker < 1:
		return fmt.Errorf("fleet: decode GPUs per worker %d must be positive", f.DecodeGPUsPerWorker)
	case c.Disagg != nil && c.Disagg.Conditional != nil:
		return fmt.Errorf("router_conditional_disagg with a fleet that changes: a request pinned to a decode worker that drains or has not started is not modelled")
	case c.Disagg != nil && (len(f.Failures) > 0 || f.FailuresPerHour > 0):
		return fmt.Errorf("worker_failures with deployment_mode disagg: a failed prefill worker's KV in flight to a decode worker, and a failed decode worker's requests, are not modelled (migration re-runs a request through the aggregated path)")
	case c.Disagg == nil && (f.DecodeSlots != 0 || f.DecodeGPUsPerWorker != 0):
		return fmt.Errorf("fleet decode slots %d, decode GPUs %d: an aggregated fleet has no decode pool", f.DecodeSlots, f.DecodeGPUsPerWorker)
	case c.KVTiers != nil:
		return fmt.Errorf("num_g2_blocks: %d; a fleet that changes is simulated without KV tiers (a leaving worker's host and disk blocks are not modelled)", c.KVTiers.NumG2Blocks)
	case c.Router.SessionAffinityTTLSecs > 0:
		return fmt.Errorf("router_session_affinity_ttl_secs: %g; a fleet that changes routes without session affinity (a session pinned to a worker that leaves is not modelled)", c.Router.SessionAffinityTTLSecs)
	case c.Worker.APIServerTokenizeNS > 0:
		return fmt.Errorf("api_server_tokenize_ns: %d; a fleet that changes goes through Dynamo's frontend (token ids), so tokenisation must be off", c.Worker.APIServerTokenizeNS)
	}
	for i, fl := range f.Failures {
		if fl.AtUS < 0 || fl.Worker < 0 || fl.Worker >= f.Slots {
			return fmt.Errorf("worker_failures[%d]: at %d µs, worker %d: want a time >= 0 and a worker in [0, %d)", i, fl.AtUS, fl.Worker, f.Slots)
		}
	}
	if f.Planner.On() {
		if err := f.Planner.Validate(); err != nil {
			return err
		}
		if f.Planner.MaxGPUBudget < (f.GPUsPerWorker+f.DecodeGPUsPerWorker)*f.Planner.MinEndpoint {
			pools := ""
			if c.Disagg != nil {
				pools = fmt.Sprintf(" of prefill and %d of decode", f.DecodeGPUsPerWorker)
			}
			return fmt.Errorf("max_gpu_budget: %d GPUs cannot hold min_endpoint %d workers of %d GPUs%s", f.Planner.MaxGPUBudget, f.Planner.MinEndpoint, f.GPUsPerWorker, pools)
		}
	}
	return nil
}

// setupFleet starts the lifecycle: the first initial slots of the aggregated (or prefill)
// pool serve, and the first initialDecode of a disaggregated fleet's decode pool; the rest
// are off.
func (s *Sim) setupFleet(initial, initialDecode int) error {
	f := s.cfg.Fleet
	fs := &fleetState{
		cfg:         *f,
		state:       make([]uint8, len(s.workers)),
		readyAt:     make([]int64, len(s.workers)),
		failedSince: make([]bool, len(s.workers)),
		first:       len(s.workers),
		rng:         rand.New(rand.NewPCG(s.cfg.Seed, 0x666c656574)), // "fleet"
		migrations:  make([]uint8, len(s.reqs)),
	}
	if s.dis != nil {
		fs.first = s.dis.first
	}
	s.fleet = fs
	for w := range s.workers {
		if w < initial || w >= fs.first && w < fs.first+initialDecode {
			fs.state[w] = slotServing
			fs.serving[fs.poolOf(w)]++
			fs.live++
			fs.poolLive[fs.poolOf(w)]++
		} else {
			s.setServing(w, false)
		}
	}
	fs.mark(0)
	for _, fl := range f.Failures {
		s.heap.push(event{time: fl.AtUS, phase: phaseFleet, gen: fleetFail, id: int32(fl.Worker)})
	}
	if f.FailuresPerHour > 0 {
		s.scheduleRandomFailure(0)
	}
	if !f.Planner.On() {
		return nil
	}
	caps := func(d model.Deployment, gpus int) planner.Capabilities {
		return planner.Capabilities{
			MaxNumBatchedTokens: d.MaxNumBatchedTokens, MaxKVTokens: d.NumGPUBlocks * d.BlockSize,
			MaxNumSeqs: d.MaxNumSeqs, ContextLength: d.ContextLength, GPUs: gpus,
		}
	}
	var pl *planner.Planner
	var err error
	if s.dis != nil {
		pl, err = planner.NewDisagg(f.Planner, caps(s.cfg.Worker, f.GPUsPerWorker), caps(s.dis.cfg.Decode, f.DecodeGPUsPerWorker),
			pricer(s.specs[0].timer), pricer(s.specs[1].timer))
	} else {
		pl, err = planner.New(f.Planner, caps(s.cfg.Worker, f.GPUsPerWorker), pricer(s.timer))
	}
	if err != nil {
		return err
	}
	fs.pl = pl
	fs.tick = pl.First(0)
	s.heap.push(event{time: secondsUS(fs.tick.AtS), phase: phaseFleet, gen: fleetTick})
	return nil
}

// poolOf is slot w's pool: 0 aggregated or prefill, 1 decode.
func (fs *fleetState) poolOf(w int) int {
	if w < fs.first {
		return 0
	}
	return 1
}

// gpus is a worker of pool k's GPUs.
func (fs *fleetState) gpus(k int) int {
	if k == 0 {
		return fs.cfg.GPUsPerWorker
	}
	return fs.cfg.DecodeGPUsPerWorker
}

// setServing tells the router of slot w's pool whether w takes new requests.
func (s *Sim) setServing(w int, on bool) {
	if s.dis != nil && w >= s.dis.first {
		s.dis.rt.SetServing(w-s.dis.first, on)
		return
	}
	s.rt.(*router.Router).SetServing(w, on) // validate refused router replicas
}

func secondsUS(s float64) int64 { return int64(math.Round(s * 1e6)) }

// pricer prices a forward pass of what f schedules on timer (seconds): a prefill chunk
// beside decodes holding f's decode KV (an aggregated engine's decodes taken as 2,048-token
// contexts by the planner's sweep). It seeds the planner's regressions as a rapid
// pre-deployment sweep would.
func pricer(timer model.StepTimer) planner.Pricer {
	return func(f planner.FPM) float64 {
		var b model.Batch
		if f.PrefillTokens > 0 {
			b.Prefill = []model.Chunk{{NewTokens: int(f.PrefillTokens)}}
			b.FirstTokens, b.FirstTokenContextTokens = 1, f.PrefillTokens
		}
		if f.DecodeKVTokens > 0 {
			b.Decodes = f.DecodeRequests
			b.DecodeContextTokens = f.DecodeKVTokens
		}
		return float64(stepTime(timer, &b)) / 1e6
	}
}

// mark closes the GPU integral up to t and records the fleet's state from t on (and each
// pool's, when disaggregated).
func (fs *fleetState) mark(t int64) {
	fs.gpuUS += float64(fs.marked) * float64(t-fs.lastT)
	disagg := fs.first < len(fs.state)
	var now [2]FleetPoint
	for w, st := range fs.state {
		p := &now[fs.poolOf(w)]
		switch st {
		case slotServing:
			p.Serving++
		case slotStarting:
			p.Starting++
		case slotDraining:
			p.Draining++
		}
	}
	fs.marked = 0
	for k := range 2 {
		fs.marked += fs.poolLive[k] * fs.gpus(k)
		if disagg {
			fs.poolGPUUS[k] += float64(fs.poolMarked[k]*fs.gpus(k)) * float64(t-fs.lastT)
			fs.poolMarked[k] = fs.poolLive[k]
			now[k].TimeMS = ms(float64(t))
			fs.poolPoints[k] = addPoint(fs.poolPoints[k], now[k])
		}
	}
	fs.lastT = t
	all := FleetPoint{TimeMS: ms(float64(t)), Serving: now[0].Serving + now[1].Serving,
		Starting: now[0].Starting + now[1].Starting, Draining: now[0].Draining + now[1].Draining}
	fs.points = addPoint(fs.points, all)
}

// addPoint appends p to a timeline, replacing a point at the same time.
func addPoint(pts []FleetPoint, p FleetPoint) []FleetPoint {
	if n := len(pts); n > 0 && pts[n-1].TimeMS == p.TimeMS {
		pts[n-1] = p
		return pts
	}
	return append(pts, p)
}

// target is the replica count pool k is heading for: serving plus starting workers.
func (fs *fleetState) target(k int) int {
	n := 0
	for w, st := range fs.state {
		if fs.poolOf(w) == k && (st == slotServing || st == slotStarting) {
			n++
		}
	}
	return n
}

// slots is pool k's slot range.
func (fs *fleetState) slots(k int) (lo, hi int) {
	if k == 0 {
		return 0, fs.first
	}
	return fs.first, len(fs.state)
}

// fleetEvent handles a phaseFleet event.
func (s *Sim) fleetEvent(e event) {
	fs := s.fleet
	switch e.gen {
	case fleetReady:
		if w := int(e.id); fs.state[w] == slotStarting && fs.readyAt[w] == e.time {
			s.ready(w, e.time)
		}
	case fleetFail:
		if w := int(e.id); fs.state[w] == slotServing || fs.state[w] == slotDraining {
			s.fail(w, e.time)
		}
	case fleetRandomFail:
		// Thinning: a candidate every Exp(rate × slots) fails a uniform slot if it is live,
		// which fails each live worker at the rate.
		if w := fs.rng.IntN(len(fs.state)); fs.state[w] == slotServing || fs.state[w] == slotDraining {
			s.fail(w, e.time)
		}
		s.scheduleRandomFailure(e.time)
	case fleetTick:
		s.plannerTick(e.time)
	}
}

func (s *Sim) scheduleRandomFailure(t int64) {
	fs := s.fleet
	perUS := fs.cfg.FailuresPerHour * float64(len(fs.state)) / 3.6e9
	s.heap.push(event{time: t + max(1, int64(math.Ceil(fs.rng.ExpFloat64()/perUS))), phase: phaseFleet, gen: fleetRandomFail})
}

// start brings slot w up at t: it serves once its start-up ends.
func (s *Sim) start(w int, t int64) {
	fs := s.fleet
	fs.state[w] = slotStarting
	fs.live++
	fs.poolLive[fs.poolOf(w)]++
	fs.readyAt[w] = t + fs.cfg.StartupUS
	s.heap.push(event{time: fs.readyAt[w], phase: phaseFleet, gen: fleetReady, id: int32(w)})
}

// ready makes slot w serve at t with an empty cache, and routes the requests its pool held
// while none of its workers served.
func (s *Sim) ready(w int, t int64) {
	fs := s.fleet
	s.resetWorker(w)
	fs.state[w] = slotServing
	fs.serving[fs.poolOf(w)]++
	s.setServing(w, true)
	fs.mark(t)
	if fs.poolOf(w) == 1 {
		for fs.heldDecode.len() > 0 {
			s.routeDecode(fs.heldDecode.popFront(), t)
		}
		return
	}
	for fs.held.len() > 0 {
		s.route(int(fs.held.popFront()), t)
	}
}

// resetWorker gives slot w a new engine: empty pool and queues, its counters kept for the
// report.
func (s *Sim) resetWorker(w int) {
	wk := &s.workers[w]
	keep := *wk
	blocks := s.cfg.Worker.NumGPUBlocks
	if s.fleet.poolOf(w) == 1 {
		blocks = s.dis.cfg.Decode.NumGPUBlocks
	}
	wk.reuse(w, blocks, groupSize(s.cfg.Worker.BlockSize, s.tr.BlockSize))
	wk.gen = keep.gen + 1 // a step event of the old engine is stale
	wk.spec = keep.spec   // the pool's limits and timer outlive an engine
	wk.requests, wk.promptTokens, wk.reusedTokens = keep.requests, keep.promptTokens, keep.reusedTokens
	wk.peakBlocks, wk.preemptions = keep.peakBlocks, keep.preemptions
}

// stop takes slot w out of the fleet at t: the router forgets its blocks and its GPUs are
// released (off) or held for a restart (starting).
func (s *Sim) stop(w int, t int64, next uint8) {
	fs := s.fleet
	wk := &s.workers[w]
	if wk.fast {
		s.settleFast(wk, t, true)
	}
	if wk.pool.removed.len() > 0 {
		s.emit(w, router.BlocksRemoved, &wk.pool.removed)
	}
	var gone kvBlocks
	wk.pool.cachedBlocks(&gone)
	if gone.len() > 0 {
		s.emit(w, router.BlocksRemoved, &gone)
	}
	if fs.state[w] == slotServing {
		fs.serving[fs.poolOf(w)]--
	}
	s.setServing(w, false)
	s.resetWorker(w)
	fs.state[w] = slotOff
	fs.live--
	fs.poolLive[fs.poolOf(w)]--
	if next == slotStarting {
		s.start(w, t)
	}
	fs.mark(t)
}

// drain stops new requests to slot w at t; it stops once its in-flight requests finish.
func (s *Sim) drain(w int, t int64) {
	fs := s.fleet
	fs.state[w] = slotDraining
	fs.serving[fs.poolOf(w)]--
	s.setServing(w, false)
	fs.mark(t)
	s.drained(w, t)
}

// drained stops a draining slot w whose last request has finished: in a disaggregated
// fleet, a prefill worker once the KV it holds for transfers has moved, a decode worker
// once the requests routed to it have arrived and finished.
func (s *Sim) drained(w int, t int64) {
	wk := &s.workers[w]
	if s.fleet.state[w] != slotDraining || len(wk.running) > 0 || wk.waiting.len() > 0 {
		return
	}
	if d := s.dis; d != nil {
		if k := w - d.first; k < 0 && wk.pool.inUse > 0 || k >= 0 && (d.pending[k].len() > 0 || wk.receiving > 0) {
			return
		}
	}
	s.stop(w, t, slotOff)
}

// fail kills slot w at t: its in-flight requests migrate or are lost, and the pod restarts.
func (s *Sim) fail(w int, t int64) {
	fs := s.fleet
	fs.failures++
	fs.failedSince[w] = true
	wk := &s.workers[w]
	if wk.fast {
		s.settleFast(wk, t, true)
	}
	inflight := slices.Concat(wk.running, make([]int32, 0, wk.waiting.len()))
	for wk.waiting.len() > 0 {
		inflight = append(inflight, wk.waiting.popFront())
	}
	wk.running = wk.running[:0]
	for _, ri := range inflight {
		wk.pool.freeAll(s.reqs[ri].fl.blocks)
		s.reqs[ri].fl.blocks = s.reqs[ri].fl.blocks[:0]
		s.rt.Finished(int64(ri))
	}
	restart := slotStarting
	if fs.state[w] == slotDraining {
		restart = slotOff // it was leaving anyway
	}
	s.stop(w, t, restart)
	for _, ri := range inflight {
		s.migrate(int(ri), t)
	}
}

// migrate sends request i again with its prompt and the tokens generated so far, or counts
// it lost past the migration limit.
func (s *Sim) migrate(i int, t int64) {
	fs := s.fleet
	r := &s.reqs[i]
	if int(fs.migrations[i]) >= fs.cfg.MigrationLimit {
		fs.lost++
		s.flights = append(s.flights, r.fl)
		r.fl = nil
		s.gone++
		if s.cfg.ReplayConcurrency > 0 && s.nextReq < len(s.reqs) {
			s.heap.push(event{time: t + s.streamEndUS, phase: phaseArrival, id: int32(s.nextReq)})
			s.nextReq++
		}
		return
	}
	fs.migrations[i]++
	fs.migrated++
	r.fl.computed, r.fl.stored = 0, 0
	s.route(i, t)
}

// route sends request i (its flight set up) to the router at t, or holds it while no
// worker serves.
func (s *Sim) route(i int, t int64) {
	if s.fleet.serving[0] == 0 {
		s.fleet.held.pushBack(int32(i))
		return
	}
	s.toRouter(i, t)
}

// scale moves pool k's replica target to n at t: new workers start, surplus ones stop
// starting (newest first) or drain (highest slot first).
func (s *Sim) scale(k, n int, t int64, reason string) {
	fs := s.fleet
	lo, hi := fs.slots(k)
	cur := fs.target(k)
	n = min(max(n, 0), hi-lo)
	if n == cur {
		return
	}
	ev := ScalingEvent{TimeMS: ms(float64(t)), From: cur, To: n, Reason: reason}
	if fs.first < len(fs.state) {
		ev.Pool = [...]string{"prefill", "decode"}[k]
	}
	fs.events = append(fs.events, ev)
	for w := lo; w < hi && cur < n; w++ {
		if fs.state[w] == slotOff {
			s.start(w, t)
			cur++
		}
	}
	for cur > n {
		w := -1
		for v := lo; v < hi; v++ {
			if fs.state[v] == slotStarting && (w < 0 || fs.readyAt[v] >= fs.readyAt[w]) {
				w = v
			}
		}
		if w >= 0 {
			fs.state[w] = slotOff
			fs.live--
			fs.poolLive[k]--
		} else {
			for v := hi - 1; v >= lo; v-- {
				if fs.state[v] == slotServing {
					w = v
					break
				}
			}
			s.drain(w, t)
		}
		cur--
	}
	fs.mark(t)
}

// arrived counts request i in the frontend's traffic window.
func (fs *fleetState) arrived(r *request) {
	fs.winReq++
	fs.winISL += int64(r.isl)
	fs.winOSL += int64(r.out)
}
