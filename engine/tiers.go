package engine

import (
	"fmt"

	"github.com/routerlab/routerlab/kvtier"
	"github.com/routerlab/routerlab/router"
)

// KV tiers below the GPU cache (Config.KVTiers; package kvtier). The engine's part: a step's
// evictions go to the worker's tier manager before their "removed" event, which offloads
// them; a waiting request whose prefix continues in a lower tier beyond its GPU hit is
// admitted with G1 blocks reserved for those blocks and waits aside, as vLLM's KV connector
// keeps a request whose external blocks are loading (the mocker's swap-in,
// lib/mocker/src/kv_manager/kvbm_backend.rs @ 4343a8e0), until the onboard transfer ends;
// its blocks then count as computed and it prefills the rest. The tiers' changes reach the
// router as KV events naming the tier. Replays with tiers run step by step (the decode fast
// path plans steps without looking at loads).

// tierState is the simulation's per-worker tier managers and the prompt tokens each tier
// served.
type tierState struct {
	m                []*kvtier.Manager
	g2Tokens         []int64 // per worker: prompt tokens onboarded from G2 at first admission
	g3Tokens         []int64
	scratch          kvBlocks // an event's blocks
	reqTok           []int32  // per request: prompt tokens onboarded at first admission
	load             []int32  // per request: its onboard's handle while r.fl.loadUntil > 0
	onboardRequests  int64
	onboardedReloads int64 // onboards of preempted requests (not first admissions)
}

// setupTiers builds one tier manager per worker when the config has tiers.
func (s *Sim) setupTiers() {
	c := s.cfg.KVTiers
	if c == nil {
		return
	}
	n := len(s.workers)
	s.tiers = &tierState{m: make([]*kvtier.Manager, n), g2Tokens: make([]int64, n), g3Tokens: make([]int64, n),
		reqTok: make([]int32, len(s.reqs)), load: make([]int32, len(s.reqs))}
	for i := range n {
		s.tiers.m[i] = kvtier.New(*c)
	}
	s.stepwise = true
}

// offload hands the blocks w's pool evicted in this step to its tiers.
func (s *Sim) offload(w *worker, t int64) {
	m := s.tiers.m[w.id]
	rm := &w.pool.removed
	for i := range rm.keys {
		m.Evicted(kvtier.Key{Group: rm.keys[i], Sub: rm.subs[i]})
	}
	m.Flush(t)
	s.emitTiers(w.id, m)
}

// emitTiers publishes w's tier changes to the router, each as a KV event naming its tier.
func (s *Sim) emitTiers(w int, m *kvtier.Manager) {
	for _, e := range m.Events() {
		b := &s.tiers.scratch
		b.reset()
		for _, k := range e.Keys {
			b.add(subBlockHash(k.Group, int32(k.Sub)), k.Group, int32(k.Sub))
		}
		ev := router.KVEvent{Worker: w, Kind: router.BlocksRemoved, Hashes: b.hashes, Keys: b.keys, Subs: b.subs, Tier: router.TierHost}
		if e.Stored {
			ev.Kind = router.BlocksStored
		}
		if e.Tier == kvtier.G3 {
			ev.Tier = router.TierDisk
		}
		s.rt.Apply(ev)
		if s.onKV != nil {
			s.onKV(ev)
		}
	}
}

// onboard admits waiting request ri, whose first hit blocks are in w's GPU cache (w.hit)
// and whose next n2 + n3 blocks the last Lookup found in G2 and G3: the hit blocks are
// taken, n2 + n3 new ones reserved, and the request waits in running, scheduled for
// nothing, until the transfer ends. It reports false, admitting nothing, when the pool
// cannot hold the reserved blocks.
func (s *Sim) onboard(w *worker, ri int32, t int64, hitFree, n2, n3 int) bool {
	k := n2 + n3
	if k > w.pool.available()-hitFree {
		return false
	}
	r := &s.reqs[ri]
	w.waiting.popFront()
	if s.stalls.on && s.stalls.preemptedAt[ri] > 0 {
		s.stalls.queueStall[ri] += t - s.stalls.preemptedAt[ri]
		s.stalls.preemptedAt[ri] = 0
	}
	hit := int32(len(w.hit))
	w.pool.touchAll(w.hit)
	r.fl.blocks = append(r.fl.blocks, w.hit...)
	r.fl.blocks = w.pool.alloc(r.fl.blocks, k)
	r.fl.computed = (hit + int32(k)) * s.blockSize
	r.fl.stored = hit
	ts := s.tiers
	m := ts.m[w.id]
	ts.load[ri] = m.Onboard(t)
	due, ok := m.Loaded(ts.load[ri], t)
	r.fl.loadUntil = 0 // > 0: loading until Loaded says it ended
	if !ok {
		r.fl.loadUntil = due
	}
	due = max(due, t)
	ts.onboardRequests++
	if !r.fl.admitted {
		r.fl.admitted = true
		r.cached = hit * s.blockSize
		w.promptTokens += int64(r.isl)
		w.reusedTokens += int64(r.cached)
		w.winPrompt += int64(r.isl)
		w.winCached += int64(r.cached)
		ts.g2Tokens[w.id] += int64(n2) * int64(s.blockSize)
		ts.g3Tokens[w.id] += int64(n3) * int64(s.blockSize)
		ts.reqTok[ri] = int32(k) * s.blockSize
	} else {
		ts.onboardedReloads++
	}
	w.running = append(w.running, ri)
	// Wake the worker when the blocks are due, should it be idle then.
	s.heap.push(event{time: due, phase: phaseStepStart, id: int32(w.id)})
	return true
}

// settleLoads checks, at the start of w's step at t, the onboards that were due by t.
// Transfers share their link, so one that started later puts an onboard's end off: one
// not ended is due again later (loadUntil > t), and the worker is woken then.
func (s *Sim) settleLoads(w *worker, m *kvtier.Manager, t int64) {
	for _, ri := range w.running {
		r := &s.reqs[ri]
		if r.fl.loadUntil == 0 || r.fl.loadUntil > t {
			continue
		}
		due, ok := m.Loaded(s.tiers.load[ri], t)
		if ok {
			r.fl.loadUntil = 0
			continue
		}
		r.fl.loadUntil = due
		s.heap.push(event{time: due, phase: phaseStepStart, id: int32(w.id)})
	}
}

// TierSummary is what the lower KV tiers did in a replay: the share of prompt tokens each
// tier served at first admission (G1: the GPU prefix cache, as prefix_cache_reused_ratio),
// the transfers, and how long requests waited for their onboards.
type TierSummary struct {
	G1HitRatio float64 `json:"g1_hit_ratio"`
	G2HitRatio float64 `json:"g2_hit_ratio"`
	G3HitRatio float64 `json:"g3_hit_ratio"`
	// Onboards: admissions that loaded blocks from a lower tier (OnboardReloads of them of
	// preempted requests); MeanOnboardMS: their mean wait for the transfer.
	Onboards       int64   `json:"onboards"`
	OnboardReloads int64   `json:"onboard_reloads,omitempty"`
	MeanOnboardMS  float64 `json:"mean_onboard_ms"`
	// Blocks moved, and each link's busy time summed over the workers (ms).
	OffloadedBlocks   int64   `json:"offloaded_blocks"`
	OnboardedG2Blocks int64   `json:"onboarded_g2_blocks"`
	OnboardedG3Blocks int64   `json:"onboarded_g3_blocks"`
	G2EvictedBlocks   int64   `json:"g2_evicted_blocks"`
	G3EvictedBlocks   int64   `json:"g3_evicted_blocks,omitempty"`
	OffloadTransferMS float64 `json:"offload_transfer_ms"`
	OnboardTransferMS float64 `json:"onboard_transfer_ms"`
	G3OffloadTransfer float64 `json:"g3_offload_transfer_ms,omitempty"`
	G3OnboardTransfer float64 `json:"g3_onboard_transfer_ms,omitempty"`
	OffloadSkipped    int64   `json:"offload_skipped_blocks"`
	OffloadDropped    int64   `json:"offload_dropped_blocks,omitempty"`
	G3DroppedBlocks   int64   `json:"g3_dropped_blocks,omitempty"`
	G2ResidentBlocks  int     `json:"g2_resident_blocks"`
	G3ResidentBlocks  int     `json:"g3_resident_blocks,omitempty"`
}

// tierSummary sums the workers' tiers; prompt is Σ input tokens of the served requests.
func (s *Sim) tierSummary() *TierSummary {
	ts := s.tiers
	var sum TierSummary
	var prompt, g1, g2, g3 int64
	var off, on, off3, on3, loaded, wait int64
	for i, m := range ts.m {
		w := &s.workers[i]
		prompt += w.promptTokens
		g1 += w.reusedTokens
		g2 += ts.g2Tokens[i]
		g3 += ts.g3Tokens[i]
		st := m.Stats()
		sum.OffloadedBlocks += st.Offloaded
		sum.OnboardedG2Blocks += st.OnboardG2
		sum.OnboardedG3Blocks += st.OnboardG3
		sum.G2EvictedBlocks += st.G2Evicted
		sum.G3EvictedBlocks += st.G3Evicted
		sum.OffloadSkipped += st.OffloadSkipped
		sum.OffloadDropped += st.OffloadDropped
		sum.G3DroppedBlocks += st.G3Dropped
		sum.G2ResidentBlocks += m.Len(kvtier.G2)
		sum.G3ResidentBlocks += m.Len(kvtier.G3)
		loaded, wait = loaded+st.Loaded, wait+st.OnboardWaitUS
		off, on, off3, on3 = off+st.OffloadBusyUS, on+st.OnboardBusyUS, off3+st.G3OffloadBusyUS, on3+st.G3OnboardBusyUS
	}
	if prompt > 0 {
		sum.G1HitRatio = round(float64(g1)/float64(prompt), 6)
		sum.G2HitRatio = round(float64(g2)/float64(prompt), 6)
		sum.G3HitRatio = round(float64(g3)/float64(prompt), 6)
	}
	sum.Onboards, sum.OnboardReloads = ts.onboardRequests, ts.onboardedReloads
	if loaded > 0 {
		sum.MeanOnboardMS = ms(float64(wait) / float64(loaded))
	}
	sum.OffloadTransferMS, sum.OnboardTransferMS = ms(float64(off)), ms(float64(on))
	sum.G3OffloadTransfer, sum.G3OnboardTransfer = ms(float64(off3)), ms(float64(on3))
	return &sum
}

// String is the summary in one line: where prompt tokens came from, onboards and the links'
// busy time.
func (t *TierSummary) String() string {
	return fmt.Sprintf("KV tiers: prompt tokens from G1 %.3f, G2 %.3f, G3 %.3f; %d onboards (mean wait %.1f ms); blocks offloaded %d, onboarded %d from G2 and %d from G3; links busy: offload %.0f ms, onboard %.0f ms",
		t.G1HitRatio, t.G2HitRatio, t.G3HitRatio, t.Onboards, t.MeanOnboardMS, t.OffloadedBlocks, t.OnboardedG2Blocks, t.OnboardedG3Blocks,
		t.OffloadTransferMS, t.OnboardTransferMS)
}
