package engine

import "slices"

// DisaggSummary is a disaggregated replay's per-pool figures and where its TTFT goes.
type DisaggSummary struct {
	Prefill PoolSummary `json:"prefill"`
	Decode  PoolSummary `json:"decode"`
	// TTFT's parts, means over completed requests that went through a prefill worker (ms): arrival to the prefill's end; its
	// wait for a decode worker's blocks and slot; the KV transfer; the decode worker's
	// first step. Under SGLang the wait comes first (the decode worker pre-allocates before
	// the prefill starts), the prefill part runs from that reservation, and the first step is
	// the wait for the decode worker's next scheduling point.
	MeanPrefillMS     float64 `json:"mean_prefill_ms"`
	MeanDecodeWaitMS  float64 `json:"mean_decode_wait_ms"`
	MeanTransferMS    float64 `json:"mean_transfer_ms"`
	MeanFirstDecodeMS float64 `json:"mean_first_decode_ms"`
	// P95TransferMS is those transfers' 95th percentile (nearest rank), the tail a slow
	// interconnect adds to TTFT.
	P95TransferMS float64 `json:"p95_transfer_ms"`
	// PrefillTTFTShare is MeanPrefillMS ÷ the sum of the four parts (those requests' mean
	// TTFT): how much of the wait for a first token the prefill pool accounts for.
	PrefillTTFTShare float64 `json:"prefill_ttft_share"`
	TransferGB       float64 `json:"transfer_gb"` // KV moved, 10⁹ bytes
	// Bypassed: requests conditional disaggregation prefilled on their decode worker; the
	// TTFT parts above are over the others.
	Bypassed int `json:"bypassed,omitempty"`
}

// Handoff is one request's passage through a disaggregated fleet's prefill worker and KV
// transfer (RequestRecord.Worker is then its decode worker).
type Handoff struct {
	PrefillWorker int `json:"prefill_worker"`
	// DecodeCachedTokens: prompt tokens the decode worker had cached at the reservation.
	DecodeCachedTokens int     `json:"decode_cached_tokens"`
	TransferMS         float64 `json:"transfer_ms"`
}

// handoffOf is request i's Handoff; nil when conditional disaggregation prefilled it on its
// decode worker (no prefill worker, no transfer).
func (s *Sim) handoffOf(i int) *Handoff {
	d := s.dis
	if d.local != nil && d.local[i] {
		return nil
	}
	return &Handoff{
		PrefillWorker:      int(d.srcWorker[i]),
		DecodeCachedTokens: int(d.hit[i] * s.blockSize),
		TransferMS:         ms(float64(d.transferTime(i))),
	}
}

// transferTime is how long request i's KV took to move: from its decode worker's booking
// (vLLM), or from the prefill's end (SGLang, which books the decode worker before the
// prefill starts), to its landing.
func (d *disagg) transferTime(i int) int64 {
	if d.pd != nil {
		return d.landed[i] - d.prefilled[i]
	}
	return d.landed[i] - d.reserved[i]
}

// PoolSummary is one pool's share of a disaggregated replay.
type PoolSummary struct {
	Workers  int `json:"workers"`
	Requests int `json:"requests"` // prefilled (prefill pool) or completed (decode pool)
	// PrefixHitRatio: prompt tokens found in the pool's prefix caches ÷ prompt tokens (on
	// the decode pool, at the reservation: what destination_missing transfers skip).
	PrefixHitRatio float64 `json:"prefix_hit_ratio"`
	// PeakBlockShare: the most KV blocks any worker of the pool held ÷ its blocks.
	PeakBlockShare float64 `json:"peak_block_share"`
	Preemptions    int     `json:"preemptions"`
	// RequestImbalance: the busiest worker's requests ÷ the pool's mean.
	RequestImbalance float64 `json:"request_imbalance"`
}

// disaggSummary is the report's disaggregated figures, from the per-worker summaries.
func (s *Sim) disaggSummary(ws []WorkerSummary) *DisaggSummary {
	d := s.dis
	pool := func(lo, hi, blocks int, hitTok, promptTok int64) PoolSummary {
		p := PoolSummary{Workers: hi - lo}
		most, peak := 0, 0
		for _, w := range ws[lo:hi] {
			p.Requests += w.Requests
			p.Preemptions += w.Preemptions
			most, peak = max(most, w.Requests), max(peak, w.PeakBlocks)
		}
		if promptTok > 0 {
			p.PrefixHitRatio = round(float64(hitTok)/float64(promptTok), 6)
		}
		p.PeakBlockShare = round(float64(peak)/float64(blocks), 6)
		if p.Requests > 0 {
			p.RequestImbalance = round(float64(most)*float64(p.Workers)/float64(p.Requests), 6)
		}
		return p
	}
	var hit, prompt, recv, dhit int64
	for _, w := range ws[:d.first] {
		hit += w.ReusedTokens
		prompt += w.PromptTokens
	}
	for k := range d.received {
		recv += d.received[k]
		dhit += d.hitTokens[k]
	}
	sum := &DisaggSummary{
		Prefill:    pool(0, d.first, s.cfg.Worker.NumGPUBlocks, hit, prompt),
		Decode:     pool(d.first, len(ws), d.cfg.Decode.NumGPUBlocks, dhit, recv),
		TransferGB: round(d.transferBytes/1e9, 6),
		Bypassed:   d.bypassed,
	}
	var pre, wait, move, first int64
	n := 0
	moves := make([]int64, 0, s.completed)
	for i := range s.reqs {
		r := &s.reqs[i]
		if !r.finished || d.local != nil && d.local[i] {
			continue
		}
		n++
		if d.pd != nil { // SGLang: the decode worker pre-allocates before the prefill starts
			wait += d.reserved[i] - r.arrival
			pre += d.prefilled[i] - d.reserved[i]
		} else {
			pre += d.prefilled[i] - r.arrival
			wait += d.reserved[i] - d.prefilled[i]
		}
		mv := d.transferTime(i)
		move += mv
		moves = append(moves, mv)
		first += r.firstTok - d.landed[i]
	}
	if n > 0 {
		k := float64(n)
		sum.MeanPrefillMS, sum.MeanDecodeWaitMS = ms(float64(pre)/k), ms(float64(wait)/k)
		sum.MeanTransferMS, sum.MeanFirstDecodeMS = ms(float64(move)/k), ms(float64(first)/k)
		slices.Sort(moves)
		sum.P95TransferMS = ms(float64(moves[rank(0.95, n)]))
		if pre > 0 {
			// From the unrounded sums: TTFT's mean is their total over n.
			sum.PrefillTTFTShare = round(float64(pre)/float64(pre+wait+move+first), 6)
		}
	}
	return sum
}
