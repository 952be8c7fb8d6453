package engine

// Snapshot is the fleet's state at one instant, for the TUI's heatmaps and charts.
type Snapshot struct {
	TimeUS    int64            `json:"time_us"`
	Completed int              `json:"completed"`
	Workers   []WorkerSnapshot `json:"workers"`
}

// WorkerSnapshot is one worker's state at the snapshot's instant.
type WorkerSnapshot struct {
	ActiveBlocks int `json:"active_blocks"` // KV blocks held by running requests
	// QueuedPrefillTokens: prompt tokens still to compute, of waiting requests (whole
	// prompt, before any prefix hit) and of running requests mid-prefill.
	QueuedPrefillTokens int64 `json:"queued_prefill_tokens"`
	Running             int   `json:"running"`
	Decoding            int   `json:"decoding,omitempty"` // running requests past their first token
	Waiting             int   `json:"waiting"`
	// PrefixHitRatio: prefix-hit tokens ÷ prompt tokens of the requests first admitted
	// since the previous snapshot (0 when none were).
	PrefixHitRatio float64 `json:"prefix_hit_ratio"`
	// State is a changing fleet's worker state (Config.Fleet): "" serving, "starting",
	// "draining", "off", or "failed" when it failed since the previous snapshot.
	State string `json:"state,omitempty"`
}

// snapshot records the state after every event at t.
func (s *Sim) snapshot(t int64) {
	s.settleAll(t)
	nw := len(s.workers)
	if len(s.snapFlat) < nw {
		// One backing array for many snapshots: fewer allocations on long runs.
		s.snapFlat = make([]WorkerSnapshot, nw*256)
	}
	ws := s.snapFlat[:nw:nw]
	s.snapFlat = s.snapFlat[nw:]
	for i := range s.workers {
		w := &s.workers[i]
		var queued int64
		for j := range w.waiting.len() {
			r := &s.reqs[w.waiting.at(j)]
			queued += int64(r.fl.tokens)
		}
		for _, ri := range w.running {
			r := &s.reqs[ri]
			if r.fl.generated == 0 || r.fl.tokens-r.fl.computed > 1 {
				queued += int64(r.fl.tokens - r.fl.computed)
			}
		}
		decoding := 0
		for _, ri := range w.running {
			if s.reqs[ri].fl.generated > 0 {
				decoding++
			}
		}
		ratio := 0.0
		if w.winPrompt > 0 {
			ratio = float64(w.winCached) / float64(w.winPrompt)
		}
		w.winPrompt, w.winCached = 0, 0
		ws[i] = WorkerSnapshot{
			ActiveBlocks:        w.pool.inUse,
			QueuedPrefillTokens: queued,
			Running:             len(w.running),
			Decoding:            decoding,
			Waiting:             w.waiting.len(),
			PrefixHitRatio:      ratio,
		}
		if s.fleet != nil {
			ws[i].State = s.fleet.stateName(i)
		}
	}
	s.snapshots = append(s.snapshots, Snapshot{TimeUS: t, Completed: s.completed, Workers: ws})
}

// Snapshots returns a copy of the snapshots taken so far.
func (s *Sim) Snapshots() []Snapshot {
	out := make([]Snapshot, len(s.snapshots))
	for i, sn := range s.snapshots {
		out[i] = sn
		out[i].Workers = append([]WorkerSnapshot(nil), sn.Workers...)
	}
	return out
}
