package engine

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/specdec"
	"github.com/routerlab/routerlab/trace"
)

// routerAPI is what the simulation needs of a router; *router.Router implements it.
type routerAPI interface {
	Route(req *router.Request) int
	FirstToken(id int64)
	Finished(id int64)
	Apply(ev router.KVEvent)
}

// request is what the simulation keeps of one trace request for the whole run (56 bytes,
// so a trace of millions of requests costs little beyond the trace itself). What only an
// in-flight request needs is its flight, taken at arrival and recycled at completion.
type request struct {
	isl, out  int32
	worker    int32
	cached    int32 // prefix-hit tokens at first admission
	preempted int32
	finished  bool

	arrival, firstTok, done int64

	fl *flight // nil before arrival and after completion
}

// flight is the state of a request between its arrival and its completion.
type flight struct {
	tokens    int32 // prompt plus generated tokens
	computed  int32 // tokens whose KV is in the worker's cache
	generated int32
	stored    int32 // leading prompt blocks registered in (or hit from) the prefix cache
	admitted  bool
	lastTok   int64
	queued    int64 // when the engine received it: arrival, or the end of its tokenisation
	loadUntil int64 // lower-tier blocks still arriving until then (tiers.go)

	// hashes: per full engine block of the prompt, its group key (blockKeys): its trace
	// block's key, or its own hash when engine blocks do not group into trace blocks.
	hashes []uint64
	blocks []int32 // block table: per block the cache entry it holds (entryRef), or 0 (plain)
}

// Sim is one simulated replay. It is single-threaded and not safe for concurrent use; the
// values it hands out (Snapshots, Report) are copies.
type Sim struct {
	cfg        Config
	timer      model.StepTimer
	rt         routerAPI
	rc         router.Config // rt's configuration
	tr         *trace.Trace
	blockSize  int32
	blockShift int8 // log2(blockSize), or -1 when it is not a power of two

	// specs: the pools' scheduling limits and timers, one per pool, which workers point to;
	// dis: the decode stage of a disaggregated fleet (disagg.go), nil when aggregated.
	specs [2]poolSpec
	dis   *disagg

	reqs    []request
	workers []worker
	heap    eventHeap

	now       int64
	nextReq   int // next trace request to send
	completed int
	lastDone  int64

	stepwise bool      // tests: disable the decode fast path
	ranks    rankSteps // attention data parallelism's lockstep ranks (dprank.go)
	dynosim  bool      // schedule as Dynamo's mocker (model.ReferenceDynosim)
	// tokenizeNS is the API server's tokenisation cost per prompt token (ns); 0: prompts
	// reach the engine as tokens (apiserver.go).
	tokenizeNS int64
	// requestPathUS delays every sent request's arrival at the server (its TTFT counts from
	// the send); streamEndUS delays a closed loop's next send after a completion
	// (Deployment.RequestPathUS, StreamEndUS).
	requestPathUS, streamEndUS int64
	// tokenizeParallel: a batch's prompts are encoded in parallel, so the tokenizer's call
	// lasts as long as its longest prompt (model.TokenizeParallel); else one after another.
	// tokenizeEach: no batch window, each prompt on its own as it comes (model.TokenizeEach).
	tokenizeParallel, tokenizeEach bool

	itl       gapHist
	snapshots []Snapshot
	snapFlat  []WorkerSnapshot
	wall      time.Duration

	rreq    router.Request
	flights []*flight // completed requests' flights, reused with their buffers

	onKV   func(router.KVEvent) // tests: observe every KV event
	onDone func(*request)       // tests: see each request as it completes

	sink uint64 // what the pools' prefetch loaded, kept so the loads are not dropped

	traceIndex []int       // position in the caller's trace of each simulated request (nil: the same)
	rejected   []Rejection // requests refused before routing

	// Admission by the router (admission.go): nil adm when the router's load config is the
	// default. refused counts requests rejected during the run (busyRejected of them because
	// every worker was busy, the first busyFirst); routerQueued the ones the router queued.
	adm                     admitter
	aic, publish, outputs   bool
	rechecking              bool // a phaseRouterRecheck event is queued
	refused, busyRejected   int
	busyFirst, routerQueued int

	stalls stallAccounts // Config.LoadReport (stall.go)

	// The workers' scheduler (sched.go) and its state: SGLang's per worker and its
	// arguments, its LPM sort's buffers; TensorRT-LLM's blocks contributed in a step and
	// each worker's steps its contexts have been held back (batch waiting).
	kind       schedKind
	sg         []sglangWorker
	sgp        sglangParams
	lpmBuf     []lpmEntry
	lpmSeen    map[uint64]struct{}
	trtContrib map[uint64]struct{}
	trtWaited  []int
	trtADP     []adpCounts // attention-DP balancing's counters, at each worker's first rank
	trtRanks   []trtPlan   // a lockstep step's ranks between their generation and context phases
	// spec draws the accepted drafts of MTP speculative decoding (specdec.go); nil without.
	spec *specdec.Sampler

	sess  *sessionSchedule // the trace's sessions and dependencies (sessions.go); nil: independent rows
	tiers *tierState       // Config.KVTiers (tiers.go); nil without lower tiers

	fleet *fleetState // Config.Fleet: workers that start, drain and fail (fleet.go)
	gone  int         // requests lost with their worker (fleet.go)
}

// New builds a simulation of cfg replaying tr with step times from timer.
func New(cfg Config, timer model.StepTimer, tr *trace.Trace) (*Sim, error) {
	return build(nil, cfg, timer, tr)
}

// build is New in sc's memory (sc nil: fresh memory).
func build(sc *Scratch, cfg Config, timer model.StepTimer, tr *trace.Trace) (*Sim, error) {
	rc, err := cfg.validate(timer, tr)
	if err != nil {
		return nil, err
	}
	ranks, err := cfg.setupRanks(timer)
	if err != nil {
		return nil, err
	}
	cfg.applyRanks(&ranks)
	if cfg.Disagg != nil {
		if err := cfg.validateDisagg(timer); err != nil {
			return nil, err
		}
		rc = prefillRouterConfig(rc)
	}
	initial, initialDecode := cfg.Workers, 0
	if cfg.Fleet != nil {
		cfg.Workers = cfg.Fleet.Slots // every worker that may exist; the first initial serve
		if cfg.Disagg != nil {
			dg := *cfg.Disagg // the caller's stays as it was
			initialDecode, dg.DecodeWorkers = dg.DecodeWorkers, cfg.Fleet.DecodeSlots
			cfg.Disagg = &dg
		}
	}
	served, rejected, err := cfg.Admit(tr)
	if err != nil {
		return nil, err
	}
	if err := cfg.checkCacheBudget(tr, served); err != nil {
		return nil, err
	}
	if err := cfg.checkSessions(tr); err != nil {
		return nil, err
	}
	var prev *router.Router
	if sc != nil {
		prev, sc.rt = sc.rt, nil
	}
	rt, err := newRouter(prev, rc, cfg.Workers, int(groupSize(cfg.Worker.BlockSize, tr.BlockSize)), cfg.Seed)
	if err != nil {
		return nil, err
	}
	if len(rejected) == 0 {
		s, err := newSimIn(sc, cfg, timer, tr, rt, rc)
		if err != nil {
			return nil, err
		}
		s.ranks = ranks
		if cfg.Fleet == nil {
			return s, nil
		}
		return s, s.setupFleet(initial, initialDecode)
	}
	// Rejected requests are neither routed nor simulated: the fleet replays the others.
	kept := &trace.Trace{Name: tr.Name, BlockSize: tr.BlockSize, Digest: tr.Digest, Requests: make([]trace.Request, len(served))}
	for k, i := range served {
		kept.Requests[k] = tr.Requests[i]
	}
	if tr.Sessions != nil {
		kept.Sessions = keptSessions(tr, served)
	}
	s, err := newSimIn(sc, cfg, timer, kept, rt, rc)
	if err != nil {
		return nil, err
	}
	s.ranks = ranks
	s.traceIndex, s.rejected = served, rejected
	if cfg.Fleet != nil {
		return s, s.setupFleet(initial, initialDecode)
	}
	return s, nil
}

// clocked is a router that reads the simulation's clock (router_replicas, KV events off or
// delayed); the engine lends it s.now.
type clocked interface{ SetClock(now *int64) }

// newRouter builds the router of rc: one in prev's memory, or several routers sharing the
// fleet (router_replicas).
func newRouter(prev *router.Router, rc router.Config, workers, subBlocks int, seed uint64) (routerAPI, error) {
	if rc.Replicas > 1 {
		return router.NewReplicas(rc, workers, subBlocks, seed)
	}
	return router.NewGroupedReusing(prev, rc, workers, subBlocks, seed)
}

// newSim builds the simulation around any router (tests use scripted ones). cfg is valid.
func newSim(cfg Config, timer model.StepTimer, tr *trace.Trace, rt routerAPI) *Sim {
	s, err := newSimIn(nil, cfg, timer, tr, rt, cfg.Router)
	if err != nil {
		panic(err) // tests' fleets are aggregated: nothing to fail
	}
	return s
}

// newSimIn is newSim in sc's memory (sc nil: fresh memory).
func newSimIn(sc *Scratch, cfg Config, timer model.StepTimer, tr *trace.Trace, rt routerAPI, rc router.Config) (*Sim, error) {
	d := cfg.Worker
	if sc == nil {
		sc = &Scratch{}
	}
	s := &Sim{
		cfg:        cfg,
		timer:      timer,
		rt:         rt,
		rc:         rc,
		tr:         tr,
		blockSize:  int32(d.BlockSize),
		blockShift: -1,
		reqs:       slices.Grow(sc.reqs[:0], len(tr.Requests))[:len(tr.Requests)],
		workers:    slices.Grow(sc.workers[:0], cfg.fleetSize())[:cfg.fleetSize()],
		heap:       sc.heap[:0],
		flights:    sc.flights,
		itl:        gapHist{dense: sc.itl},
		dynosim:    d.Dynosim(),
		tokenizeNS: int64(d.APIServerTokenizeNS),

		requestPathUS: int64(d.RequestPathUS),
		streamEndUS:   int64(d.StreamEndUS),
	}
	for _, c := range s.itl.dense {
		if c != nil {
			clear(c[:])
		}
	}
	*sc = Scratch{rt: sc.rt} // the memory is s's now
	if c, ok := rt.(clocked); ok {
		c.SetClock(&s.now)
	}
	s.tokenizeParallel = d.TokenizeBatching() == model.TokenizeParallel
	s.tokenizeEach = d.TokenizeBatching() == model.TokenizeEach
	if d.BlockSize&(d.BlockSize-1) == 0 {
		s.blockShift = int8(bits.TrailingZeros(uint(d.BlockSize)))
	}
	s.setupAdmission()
	s.setupScheduler()
	s.setupTiers()
	if cfg.LoadReport {
		n := len(tr.Requests)
		s.stalls = stallAccounts{on: true, stall: make([]int64, n), queueStall: make([]int64, n), preemptedAt: make([]int64, n)}
	}
	if err := s.setupPools(timer, groupSize(d.BlockSize, tr.BlockSize), len(tr.Requests)); err != nil {
		return nil, err
	}
	for i := range tr.Requests {
		r := &tr.Requests[i]
		s.reqs[i] = request{isl: int32(r.InputLength), out: int32(r.OutputLength), worker: -1}
	}
	n := len(tr.Requests)
	if tr.Sessions != nil {
		s.startSessions()
	} else if cfg.ReplayConcurrency > 0 {
		for i := range min(cfg.ReplayConcurrency, n) {
			s.heap.push(event{time: 0, phase: phaseArrival, id: int32(i)})
		}
		s.nextReq = min(cfg.ReplayConcurrency, n)
	} else if n > 0 {
		s.heap.push(event{time: s.arrivalTime(0), phase: phaseArrival, id: 0})
		s.nextReq = 1
	}
	if cfg.SnapshotEveryUS > 0 && n > 0 {
		s.heap.push(event{time: cfg.SnapshotEveryUS, phase: phaseSnapshot})
	}
	return s, nil
}

// arrivalTime is request i's open-loop arrival: its timestamp divided by the speedup.
func (s *Sim) arrivalTime(i int) int64 {
	ratio := s.cfg.ArrivalSpeedupRatio
	if ratio == 0 {
		ratio = 1
	}
	return int64(math.Round(float64(s.tr.Requests[i].TimestampMS) * 1000 / ratio))
}

// Now is the simulated clock in microseconds.
func (s *Sim) Now() int64 { return s.now }

// Done reports whether every request has completed.
func (s *Sim) Done() bool { return s.completed+s.refused+s.gone == len(s.reqs) }

// RunUntil processes every event up to and including time tUS and reports whether all
// requests have completed. The run ends with the last completion: snapshots are taken
// every SnapshotEveryUS while requests remain.
func (s *Sim) RunUntil(tUS int64) bool {
	start := time.Now()
	for !s.Done() && s.heap[0].time <= tUS {
		s.process(s.heap.pop())
	}
	if !s.Done() && tUS > s.now {
		s.now = tUS
	}
	s.wall += time.Since(start)
	return s.Done()
}

// runChunk is how many events Run processes between cancellation checks.
const runChunk = 1 << 14

// Run simulates to the end, checking ctx between chunks of events (and reporting to its
// Progress, WithProgress), and returns the report.
func (s *Sim) Run(ctx context.Context) (*Report, error) {
	start := time.Now()
	progress := progressOf(ctx)
	for !s.Done() {
		if err := ctx.Err(); err != nil {
			s.wall += time.Since(start)
			return nil, err
		}
		for i := 0; i < runChunk && !s.Done(); i++ {
			s.process(s.heap.pop())
		}
		if progress != nil {
			progress(s.completed, len(s.reqs))
		}
	}
	s.wall += time.Since(start)
	return s.Report(), nil
}

// Replay builds a simulation and runs it to the end.
func Replay(ctx context.Context, cfg Config, timer model.StepTimer, tr *trace.Trace) (*Report, error) {
	s, err := New(cfg, timer, tr)
	if err != nil {
		return nil, err
	}
	return s.Run(ctx)
}

func (s *Sim) process(e event) {
	s.now = e.time
	switch e.phase {
	case phaseStepEnd:
		w := &s.workers[e.id]
		if e.gen != w.gen {
			return // superseded: the decode fast path was cut short
		}
		s.finishStep(w, e.time)
		if s.fleet != nil {
			s.drained(w.id, e.time)
		}
		s.startNext(w, e.time)
	case phaseArrival:
		s.arrive(int(e.id), e.time)
	case phaseReachServer:
		s.reachServer(int(e.id), e.time)
	case phaseTokenizerClose:
		if a := &s.workers[e.id].api; a.collecting && a.seq == e.gen {
			s.closeTokenizerBatch(a, e.time)
		}
	case phaseTokenized:
		s.enqueue(int(e.id), e.time)
	case phaseTransferDone:
		s.transferDone(e.id, e.time)
	case phaseStepStart:
		w := &s.workers[e.id]
		w.startPending = false
		if !w.busy {
			s.startStep(w, e.time)
		}
	case phaseSnapshot:
		s.snapshot(e.time)
		s.heap.push(event{time: e.time + s.cfg.SnapshotEveryUS, phase: phaseSnapshot})
	case phaseRouterRecheck:
		s.recheck(e.time)
	case phaseFleet:
		s.fleetEvent(e)
	}
}

// startNext starts w's next step at t: at once when no arrival or step end at t is still
// queued (their effects must be visible to the step), otherwise as a queued event.
func (s *Sim) startNext(w *worker, t int64) {
	if len(s.heap) == 0 || s.heap[0].time > t || s.heap[0].phase >= phaseStepStart {
		s.startStep(w, t)
		return
	}
	w.startPending = true
	s.heap.push(event{time: t, phase: phaseStepStart, id: int32(w.id)})
}

// arrive sends trace request i at time t (its TTFT counts from here); it reaches the server
// at once, or after the request path.
func (s *Sim) arrive(i int, t int64) {
	if s.cfg.ReplayConcurrency == 0 && s.nextReq < len(s.reqs) {
		s.heap.push(event{time: s.arrivalTime(s.nextReq), phase: phaseArrival, id: int32(s.nextReq)})
		s.nextReq++
	}
	s.reqs[i].arrival = t
	if s.fleet != nil {
		s.fleet.arrived(&s.reqs[i])
	}
	if s.requestPathUS > 0 {
		s.heap.push(event{time: t + s.requestPathUS, phase: phaseReachServer, id: int32(i)})
		return
	}
	s.reachServer(i, t)
}

// reachServer routes request i at time t and queues it on the chosen worker.
func (s *Sim) reachServer(i int, t int64) {
	r := &s.reqs[i]
	tr := &s.tr.Requests[i]
	r.fl = s.takeFlight(r.isl)
	r.fl.hashes = blockKeys(r.fl.hashes, tr.HashIDs, tr.IDOffset, tr.InputLength, int(s.blockSize), s.tr.BlockSize)
	if s.fleet != nil {
		s.route(i, t)
		return
	}
	s.toRouter(i, t)
}

// toRouter routes request i (its flight set up: its prompt, or after a migration its prompt
// and the tokens generated so far) at t.
func (s *Sim) toRouter(i int, t int64) {
	r := &s.reqs[i]
	s.rreq = router.Request{ID: int64(i), InputLength: int(r.fl.tokens), BlockHashes: r.fl.hashes}
	if s.sess != nil {
		s.rreq.Session = s.sess.keys[i]
	}
	if s.dis != nil && s.dis.local != nil && s.conditional(i, t) {
		return
	}
	if s.adm != nil {
		if s.aic {
			s.adm.SetNow(t)
		}
		s.routed(i, s.rt.Route(&s.rreq), t)
		return
	}
	s.dispatch(i, s.rt.Route(&s.rreq), t)
}

// dispatch sends request i, routed to worker wi, on its way to that worker's engine at t.
func (s *Sim) dispatch(i, wi int, t int64) {
	s.reqs[i].worker = int32(wi)
	if s.tokenizeNS > 0 {
		s.tokenize(i, t)
		return
	}
	s.enqueue(i, t)
}

// enqueue hands request i to its worker's engine at t; under SGLang's disaggregated serving
// the decode worker pre-allocates first (disagg_sglang.go).
func (s *Sim) enqueue(i int, t int64) {
	if s.dis != nil && s.dis.pd != nil {
		s.bootstrap(i, t)
		return
	}
	s.toEngine(i, t)
}

// toEngine queues request i on its worker's engine at t.
func (s *Sim) toEngine(i int, t int64) {
	r := &s.reqs[i]
	r.fl.queued = t
	wi := int(r.worker)
	w := &s.workers[wi]
	w.waiting.pushBack(int32(i))
	switch {
	case w.fast:
		s.cutFast(w, t)
	case !w.busy && !w.startPending:
		w.startPending = true
		s.heap.push(event{time: t, phase: phaseStepStart, id: int32(wi)})
	}
}

// complete retires request ri at time t and, in closed loop, sends the next trace request.
func (s *Sim) complete(w *worker, ri int32, t int64) {
	r := &s.reqs[ri]
	r.done = t
	w.pool.freeAll(r.fl.blocks)
	if s.aic {
		s.adm.SetNow(t)
	}
	if w.spec.decode {
		s.dis.rt.Finished(int64(ri))
	} else {
		s.rt.Finished(int64(ri))
	}
	if s.onDone != nil {
		s.onDone(r)
	}
	s.flights = append(s.flights, r.fl)
	r.fl, r.finished = nil, true
	w.requests++
	s.completed++
	s.lastDone = t
	if s.sess != nil {
		s.turnDone(int(ri), t)
	}
	if s.cfg.ReplayConcurrency > 0 && s.nextReq < len(s.reqs) {
		s.heap.push(event{time: t + s.streamEndUS, phase: phaseArrival, id: int32(s.nextReq)})
		s.nextReq++
	}
	if s.adm != nil {
		s.release(t)
	}
}

// takeFlight returns a cleared flight for a prompt of isl tokens, reusing a completed
// request's flight and its buffers when there is one.
func (s *Sim) takeFlight(isl int32) *flight {
	k := len(s.flights)
	if k == 0 {
		return &flight{tokens: isl}
	}
	fl := s.flights[k-1]
	s.flights = s.flights[:k-1]
	*fl = flight{tokens: isl, hashes: fl.hashes[:0], blocks: fl.blocks[:0]}
	return fl
}

// emit publishes a KV event to the router (and the test observer): the blocks' hashes and
// where each sits in its trace block.
func (s *Sim) emit(w int, kind router.KVEventKind, b *kvBlocks) {
	ev := router.KVEvent{Worker: w, Kind: kind, Hashes: b.hashes, Keys: b.keys, Subs: b.subs}
	if s.dis != nil && w >= s.dis.first {
		s.emitDecode(ev)
	} else {
		s.rt.Apply(ev)
	}
	if s.onKV != nil {
		s.onKV(ev)
	}
}

// blocksFor is how many blocks hold n tokens. Block sizes are powers of two in practice,
// and this runs for every request of every step, so it shifts instead of dividing then.
func (s *Sim) blocksFor(n int32) int32 {
	if s.blockShift >= 0 {
		return (n + s.blockSize - 1) >> s.blockShift
	}
	return (n + s.blockSize - 1) / s.blockSize
}

// fullBlocks is how many blocks n tokens fill completely.
func (s *Sim) fullBlocks(n int32) int32 {
	if s.blockShift >= 0 {
		return n >> s.blockShift
	}
	return n / s.blockSize
}
