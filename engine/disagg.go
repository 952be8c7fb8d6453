package engine

import (
	"fmt"
	"math"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
)

// A disaggregated fleet, as Dynamo's frontend runs one (ai-dynamo/dynamo
// docs/components/router/router-disaggregated-serving.md at 2e4735e3): the frontend's KV
// router picks a prefill worker (Config.Router, every knob, with active-block tracking off as
// Dynamo forces it there); the prefill worker computes the prompt and stops at its first
// token; the decode stage is routed by a second router over the decode pool with Dynamo's
// decode-stage settings (no overlap credit, no KV-reuse assumption, no prefill-token
// tracking); the decode worker reserves the prompt's blocks and a sequence slot, the KV
// moves over the interconnect (the mocker's handoff, lib/mocker/src/common/handoff.rs at
// 0894f5c6: the source holds its blocks until the transfer completes, the destination is
// reserved before it starts and activated after), then the decode worker computes the
// prompt's last token — its first output token, as vLLM's NIXL connector leaves it — and
// decodes the rest, holding the KV until the request ends. Transfer time is
// tokens × KV bytes per token ÷ bandwidth, the mocker's formula
// (lib/mocker/src/common/protocols.rs at 04c3ab60: kv_transfer_bandwidth in GB/s, default 64,
// 0 disables the delay; kv_transfer_timing_mode full_prompt, the default, or
// destination_missing).

// Disagg is the decode pool of a disaggregated fleet and the KV transfer to it.
type Disagg struct {
	DecodeWorkers int
	// Decode is every decode worker's deployment (NumGPUBlocks resolved); its block size
	// must be the prefill pool's.
	Decode model.Deployment
	// TransferGBps is the interconnect bandwidth a prompt's KV moves at, in GB/s (10⁹
	// bytes); 0 makes the transfer instant.
	TransferGBps float64
	// KVBytesPerToken is the model's KV cache bytes per token over all its layers and KV
	// heads (model.Worker.KVBytesPerTokenModel): what one token's handoff moves.
	KVBytesPerToken int64
	// TransferMode is what a transfer moves: TransferFullPrompt ("" too) or
	// TransferDestinationMissing.
	TransferMode TransferMode `json:",omitempty"`
	// Conditional is the frontend's conditional disaggregation (conddisagg.go); nil: off,
	// Dynamo's default.
	Conditional *ConditionalDisagg `json:",omitempty"`
}

// TransferMode is the mocker's kv_transfer_timing_mode.
type TransferMode string

const (
	// TransferFullPrompt charges the whole prompt's KV (the mocker's default).
	TransferFullPrompt TransferMode = "full_prompt"
	// TransferDestinationMissing charges only the prompt blocks the decode worker's prefix
	// cache lacks.
	TransferDestinationMissing TransferMode = "destination_missing"
)

// TransferModes lists the transfer modes, the default first.
func TransferModes() []string {
	return []string{string(TransferFullPrompt), string(TransferDestinationMissing)}
}

// PoolTimers prices a disaggregated fleet's steps: each pool on its own deployment's table.
// As a StepTimer it is the prefill pool's, the pool the router's prefill-load model prices.
type PoolTimers struct{ Prefill, Decode model.StepTimer }

// StepTimeUS is the prefill pool's step time.
func (p PoolTimers) StepTimeUS(b *model.Batch) int64 { return p.Prefill.StepTimeUS(b) }

// poolSpec is what a worker's scheduling reads of its pool's deployment.
type poolSpec struct {
	timer       model.StepTimer
	decodeTimer model.DecodeStepTimer // timer when it prices decode stretches in one call
	batched     int
	seqs        int
	noPrefix    bool
	// prefill: a disaggregated prefill worker, whose requests leave at their first token;
	// decode: a disaggregated decode worker, whose requests arrive with their prompt's KV.
	prefill, decode bool
	// mockerPD: either pool priced as Dynamo's mocker prices it (timing_reference dynosim).
	// Its prefill worker samples a prompt's first token inside the prefill pass, with no
	// decode pass, and its decode worker takes a handed-off request with the whole prompt
	// computed, so the request's first token is one more decode in the decode pass, with no
	// prefill pass (lib/mocker/src/scheduler/vllm/core.rs: emit_ready_tokens skips the
	// decode prediction for WorkerType::Prefill; a decode worker prices no prefill).
	mockerPD bool
}

func specOf(d model.Deployment, timer model.StepTimer) poolSpec {
	dt, _ := timer.(model.DecodeStepTimer)
	seqs := d.MaxNumSeqs
	if l, ok := timer.(model.RunningLimiter); ok {
		seqs = l.RunningLimit(seqs)
	}
	return poolSpec{timer: timer, decodeTimer: dt, batched: d.MaxNumBatchedTokens, seqs: seqs, noPrefix: d.NoPrefixCaching}
}

// disagg is a disaggregated fleet's state beside the workers: workers [0, first) are the
// prefill pool, [first, len) the decode pool.
type disagg struct {
	cfg   *Disagg
	rt    *router.Router // the decode stage's router; its worker ids are decode-pool indices
	first int
	// pending: per decode worker, requests routed to it waiting for blocks and a slot (the
	// slots of those in flight: worker.receiving).
	pending []deque
	// Per request: the prefill worker and its block table, held until the transfer ends.
	src       [][]int32
	srcWorker []int32
	spare     [][]int32 // block tables given back, for the next handoff
	// Per request, for the TTFT breakdown: prefill done, decode reservation, transfer end;
	// and the prompt blocks the decode worker had cached at the reservation.
	prefilled, reserved, landed []int64
	hit                         []int32
	// Per decode worker: prompt tokens received and of those already cached there.
	received, hitTokens []int64
	transferBytes       float64
	transfers           int
	// With conditional disaggregation, per request: 1 + the decode worker picked on
	// arrival (0: none yet), and whether it was prefilled there; the decode router's overlaps.
	pinned   []int32
	local    []bool
	overlaps []int
	bypassed int
	// pd: SGLang's flow (disagg_sglang.go); nil for vLLM's.
	pd *sglangPD
}

// decodeRouterConfig is the decode stage's router: the frontend's, with the settings Dynamo
// fixes for it (router-disaggregated-serving.md) and no admission (the prefill stage's).
// Under conditional disaggregation the decode pool is no plain decode pool: its router keeps
// the overlap credit, since a request may be prefilled on the worker it picks.
func decodeRouterConfig(rc router.Config, conditional bool) router.Config {
	if !conditional {
		rc.OverlapScoreCredit = 0
	}
	rc.Load = router.LoadConfig{NoAssumeKVReuse: true, NoTrackPrefillTokens: true, ActiveSequenceStride: rc.Load.ActiveSequenceStride}
	rc.Replicas, rc.ReplicaSync, rc.ReplicaSyncDelayUS = 1, false, 0
	return rc
}

// prefillRouterConfig is the frontend's router as Dynamo runs it over prefill workers: it
// never tracks active blocks, since prefill workers do not decode.
func prefillRouterConfig(rc router.Config) router.Config {
	rc.Load.NoTrackActiveBlocks = true
	return rc
}

// validateDisagg checks the decode pool and the transfer against the prefill pool.
func (c *Config) validateDisagg(timer model.StepTimer) error {
	dg := c.Disagg
	d := dg.Decode
	pt, ok := timer.(PoolTimers)
	switch {
	case !ok || pt.Prefill == nil || pt.Decode == nil:
		return fmt.Errorf("engine: a disaggregated fleet needs PoolTimers with both pools' step timers")
	case dg.DecodeWorkers < 1:
		return fmt.Errorf("decode workers: %d must be at least 1", dg.DecodeWorkers)
	case d.BlockSize != c.Worker.BlockSize:
		return fmt.Errorf("decode_block_size: %d differs from prefill_block_size %d (a handoff moves whole blocks; routerlab keeps one block size per fleet)", d.BlockSize, c.Worker.BlockSize)
	case d.NumGPUBlocks <= 0:
		return fmt.Errorf("decode num_gpu_blocks: %d must be positive", d.NumGPUBlocks)
	case d.MaxNumBatchedTokens <= 0:
		return fmt.Errorf("decode_max_num_batched_tokens: %d must be positive", d.MaxNumBatchedTokens)
	case d.MaxNumSeqs <= 0:
		return fmt.Errorf("decode_max_num_seqs: %d must be positive", d.MaxNumSeqs)
	case math.IsNaN(dg.TransferGBps) || math.IsInf(dg.TransferGBps, 0) || dg.TransferGBps < 0:
		return fmt.Errorf("kv_transfer_bandwidth: %v must be a finite number of GB/s >= 0", dg.TransferGBps)
	case dg.TransferGBps > 0 && dg.KVBytesPerToken <= 0:
		return fmt.Errorf("kv_bytes_per_token: %d must be positive to time a transfer", dg.KVBytesPerToken)
	case dg.TransferMode != "" && dg.TransferMode != TransferFullPrompt && dg.TransferMode != TransferDestinationMissing:
		return fmt.Errorf("kv_transfer_timing_mode: %q (want full_prompt or destination_missing)", dg.TransferMode)
	case d.Backend.OrDefault() != c.Worker.Backend.OrDefault() || c.Worker.Backend.OrDefault() == model.BackendTRTLLM:
		return fmt.Errorf("backend: %s prefill, %s decode: disaggregated fleets are modelled for vLLM and SGLang workers, one backend for both pools (Dynamo's replay rejects TensorRT-LLM disaggregation)", c.Worker.Backend.OrDefault(), d.Backend.OrDefault())
	case c.Router.Load.TrackOutputBlocks:
		return fmt.Errorf("router_track_output_blocks: Dynamo's prefill router tracks no active blocks, so output blocks cannot be tracked in a disaggregated fleet")
	case dg.Conditional != nil && c.Worker.Backend.OrDefault() == model.BackendSGLang:
		return fmt.Errorf("router_conditional_disagg: not modelled with backend sglang (SGLang's decode worker pre-allocates before any prefill; prefilling on it is not modelled)")
	case dg.Conditional != nil && c.Router.Mode != router.ModeKV:
		return fmt.Errorf("router_conditional_disagg: router_mode %s; Dynamo's conditional disaggregation needs kv_router", c.Router.Mode)
	case dg.Conditional != nil && dg.Conditional.check() != nil:
		return dg.Conditional.check()
	case c.Workers+dg.DecodeWorkers > router.MaxWorkers:
		return fmt.Errorf("workers: %d prefill + %d decode is more than %d", c.Workers, dg.DecodeWorkers, router.MaxWorkers)
	}
	return nil
}

// fleetSize is how many workers the fleet has: both pools when disaggregated.
func (c *Config) fleetSize() int {
	if c.Disagg != nil {
		return c.Workers + c.Disagg.DecodeWorkers
	}
	return c.Workers
}

// setupPools gives every worker its pool's spec and blocks (groups of g per trace block),
// and builds the decode stage when the fleet is disaggregated.
func (s *Sim) setupPools(timer model.StepTimer, g int32, n int) error {
	cfg := &s.cfg
	if cfg.Disagg == nil {
		s.specs[0] = specOf(cfg.Worker, timer)
		for i := range s.workers {
			s.workers[i].reuse(i, cfg.Worker.NumGPUBlocks, g)
			s.workers[i].pool.shareActive = s.dynosim
			s.workers[i].spec = &s.specs[0]
		}
		return nil
	}
	dg := cfg.Disagg
	pt := timer.(PoolTimers)
	s.specs[0] = specOf(cfg.Worker, pt.Prefill)
	s.specs[0].prefill = true
	s.specs[0].mockerPD = cfg.Worker.Dynosim()
	s.specs[1] = specOf(dg.Decode, pt.Decode)
	s.specs[1].decode = true
	s.specs[1].mockerPD = dg.Decode.Dynosim()
	for i := range s.workers {
		k, blocks := 0, cfg.Worker.NumGPUBlocks
		if i >= cfg.Workers {
			k, blocks = 1, dg.Decode.NumGPUBlocks
		}
		s.workers[i].reuse(i, blocks, g)
		s.workers[i].pool.shareActive = s.dynosim
		s.workers[i].spec = &s.specs[k]
	}
	rt, err := router.NewGrouped(decodeRouterConfig(s.rc, dg.Conditional != nil), dg.DecodeWorkers, int(g), cfg.Seed^decodeRouterSeed)
	if err != nil {
		return err
	}
	rt.SetClock(&s.now)
	s.dis = &disagg{
		cfg: dg, rt: rt, first: cfg.Workers,
		pending: make([]deque, dg.DecodeWorkers),
		src:     make([][]int32, n), srcWorker: make([]int32, n),
		prefilled: make([]int64, n), reserved: make([]int64, n), landed: make([]int64, n), hit: make([]int32, n),
		received: make([]int64, dg.DecodeWorkers), hitTokens: make([]int64, dg.DecodeWorkers),
	}
	if dg.Conditional != nil {
		s.dis.pinned, s.dis.local, s.dis.overlaps = make([]int32, n), make([]bool, n), make([]int, dg.DecodeWorkers)
	}
	if s.kind == schedSGLang {
		s.dis.pd = newSGLangPD(n, dg.DecodeWorkers)
	}
	return nil
}

// decodeRouterSeed separates the decode router's random stream from the prefill router's.
const decodeRouterSeed = 0x9e3779b97f4a7c15

// handoff moves request ri, whose prompt w (a prefill worker) has just computed, to the
// decode stage at t: the prefill router forgets it, w keeps its blocks until the transfer
// ends, and the decode router picks the worker that will reserve room for it.
func (s *Sim) handoff(w *worker, ri int32, t int64) {
	d := s.dis
	if d.pd != nil {
		s.handoffPD(w, ri, t)
		return
	}
	r := &s.reqs[ri]
	w.requests++
	s.rt.Finished(int64(ri))
	d.src[ri], d.srcWorker[ri] = r.fl.blocks, int32(w.id)
	r.fl.blocks = nil
	if k := len(d.spare); k > 0 {
		r.fl.blocks, d.spare = d.spare[k-1][:0], d.spare[:k-1]
	}
	d.prefilled[ri] = t
	// The decode worker starts from the prompt alone: the prefill's token is not streamed.
	r.fl.tokens, r.fl.generated, r.fl.computed, r.fl.stored = r.isl, 0, 0, 0
	s.routeDecode(ri, t)
}

// routeDecode has the decode router pick the worker that will reserve room for prefilled
// request ri at t, or holds ri while no decode worker serves (a changing fleet).
func (s *Sim) routeDecode(ri int32, t int64) {
	if s.fleet != nil && s.fleet.serving[1] == 0 {
		s.fleet.heldDecode.pushBack(ri)
		return
	}
	d := s.dis
	r := &s.reqs[ri]
	s.rreq = router.Request{ID: int64(ri), InputLength: int(r.isl), BlockHashes: r.fl.hashes}
	var dw int
	if d.pinned != nil && d.pinned[ri] > 0 {
		dw = int(d.pinned[ri] - 1) // booked on the decode router at arrival
	} else {
		dw = d.rt.Route(&s.rreq)
	}
	r.worker = int32(d.first + dw)
	d.pending[dw].pushBack(ri)
	s.reserve(&s.workers[d.first+dw], t)
}

// reserve gives decode worker w's pending requests, in order, their prompt's blocks and a
// sequence slot while both are free, and starts each one's transfer.
func (s *Sim) reserve(w *worker, t int64) {
	d := s.dis
	if d.pd != nil {
		s.preallocate(w, t)
		return
	}
	k := w.id - d.first
	q := &d.pending[k]
	if q.len() > 0 && w.fast {
		// A decode stretch planned its blocks from the free ones: it ends at the step in
		// progress before a reservation takes any.
		s.settleFast(w, t, false)
	}
	for q.len() > 0 && len(w.running)+w.receiving < w.spec.seqs {
		ri := q.front()
		r := &s.reqs[ri]
		hitFree := 0
		w.hit = w.hit[:0]
		if !w.spec.noPrefix {
			hitFree = s.prefixHit(w, r, min(s.fullBlocks(r.isl-1), int32(len(r.fl.hashes))))
		}
		hit := int32(len(w.hit))
		need := int(s.blocksFor(r.isl) - hit)
		if need > w.pool.available()-hitFree {
			break
		}
		q.popFront()
		w.pool.touchAll(w.hit)
		r.fl.blocks = append(r.fl.blocks, w.hit...)
		r.fl.blocks = w.pool.alloc(r.fl.blocks, need)
		r.fl.stored = hit
		if w.pool.removed.len() > 0 {
			s.emit(w.id, router.BlocksRemoved, &w.pool.removed)
			w.pool.removed.reset()
		}
		w.peakBlocks = max(w.peakBlocks, w.pool.inUse)
		w.receiving++
		moved := int64(r.isl)
		if d.cfg.TransferMode == TransferDestinationMissing {
			moved -= int64(hit * s.blockSize)
		}
		d.received[k] += int64(r.isl)
		d.hitTokens[k] += int64(hit * s.blockSize)
		bytes := float64(moved) * float64(d.cfg.KVBytesPerToken)
		d.transferBytes += bytes
		d.transfers++
		var us int64
		if d.cfg.TransferGBps > 0 {
			us = int64(math.Ceil(bytes / (d.cfg.TransferGBps * 1e3)))
		}
		d.reserved[ri], d.hit[ri] = t, hit
		s.heap.push(event{time: t + us, phase: phaseTransferDone, id: ri})
	}
}

// transferDone lands request ri's KV on its decode worker at t: the prefill worker frees
// its copy, and the decode worker runs the request from its prompt's last token.
func (s *Sim) transferDone(ri int32, t int64) {
	d := s.dis
	if d.pd != nil {
		s.landPD(ri, t)
		return
	}
	r := &s.reqs[ri]
	s.releaseSource(ri, t)
	w := &s.workers[r.worker]
	if w.fast {
		// The stretch's steps up to t are applied and the stretch ends there: its steps
		// decode only the requests that were running when it was planned.
		s.settleFast(w, t, false)
	}
	w.receiving--
	r.fl.computed = r.isl - 1
	w.stored.reset()
	s.storeFull(w, r, r.fl.computed)
	if w.stored.len() > 0 {
		s.emit(w.id, router.BlocksStored, &w.stored)
		w.stored.reset()
	}
	w.running = append(w.running, ri)
	s.wake(w, t)
}

// releaseSource notes request ri's KV landed at t and frees the prefill worker's copy.
func (s *Sim) releaseSource(ri int32, t int64) {
	d := s.dis
	d.landed[ri] = t
	src := &s.workers[d.srcWorker[ri]]
	src.pool.freeAll(d.src[ri])
	d.spare = append(d.spare, d.src[ri][:0])
	d.src[ri] = nil
	s.wake(src, t)
	if s.fleet != nil {
		s.drained(src.id, t) // a draining prefill worker stops once the KV it held has moved
	}
}

// wake starts idle worker w's next step at t when it has something to schedule.
func (s *Sim) wake(w *worker, t int64) {
	if !w.busy && !w.startPending && (len(w.running) > 0 || w.waiting.len() > 0) {
		w.startPending = true
		s.heap.push(event{time: t, phase: phaseStepStart, id: int32(w.id)})
	}
}

// routerOf is the router that books requests on worker w.
func (s *Sim) routerOf(w *worker) routerAPI {
	if w.spec.decode {
		return s.dis.rt
	}
	return s.rt
}

// emitDecode publishes a decode worker's KV event to the decode router, which numbers the
// decode pool from 0.
func (s *Sim) emitDecode(ev router.KVEvent) {
	ev.Worker -= s.dis.first
	s.dis.rt.Apply(ev)
}
