package engine

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"math"
	"slices"
)

// Report is the outcome of a replay.
type Report struct {
	Summary   Summary         `json:"summary"`
	Requests  []RequestRecord `json:"requests,omitempty"`  // when Config.RecordRequests
	Snapshots []Snapshot      `json:"snapshots,omitempty"` // when Config.SnapshotEveryUS > 0
}

// Summary is the replay's headline numbers. Times are milliseconds rounded to the
// microsecond; percentiles use the nearest-rank rule (the smallest value with at least p %
// of the values at or below it).
//
//   - TTFT: arrival to first token. E2E latency: arrival to last token.
//   - TPOT: per request (e2e − ttft)/(output_length − 1), over requests with ≥ 2 output
//     tokens; mean and percentiles across those requests.
//   - ITL: every gap between two consecutive tokens of a request, over all requests (one
//     value per output token after the first), so long outputs weigh more than in TPOT and
//     the tail shows individual slow steps (a prefill sharing the step, a preemption).
//   - Throughputs: total output (input) tokens ÷ duration, where duration runs from the
//     first arrival to the last completion.
//   - prefix_cache_reused_ratio: Σ prefix-hit tokens at each request's first admission ÷
//     Σ input tokens (recomputes after preemption are not counted again).
type Summary struct {
	RequestsCompleted int `json:"requests_completed"`
	// RequestsRejected were refused before routing (Rejections says why), as vLLM refuses a
	// request longer than its context.
	RequestsRejected int     `json:"requests_rejected"`
	DurationMS       float64 `json:"duration_ms"`
	WallTimeMS       float64 `json:"wall_time_ms"`

	MeanTTFTMS float64 `json:"mean_ttft_ms"`
	P50TTFTMS  float64 `json:"p50_ttft_ms"`
	P90TTFTMS  float64 `json:"p90_ttft_ms"`
	P99TTFTMS  float64 `json:"p99_ttft_ms"`

	MeanTPOTMS float64 `json:"mean_tpot_ms"`
	P50TPOTMS  float64 `json:"p50_tpot_ms"`
	P90TPOTMS  float64 `json:"p90_tpot_ms"`
	P99TPOTMS  float64 `json:"p99_tpot_ms"`

	MeanITLMS float64 `json:"mean_itl_ms"`
	P50ITLMS  float64 `json:"p50_itl_ms"`
	P90ITLMS  float64 `json:"p90_itl_ms"`
	P99ITLMS  float64 `json:"p99_itl_ms"`

	// MeanOutputTokPerUser is the mean over inter-token gaps of 1 ÷ gap, tokens per second:
	// the rate a streaming user sees, as Dynamo's replay reports
	// output_token_throughput_per_user. A harmonic mean of the gaps, it follows the typical
	// decode step and barely moves with the rare long stalls that weigh in TPOT.
	MeanOutputTokPerUser float64 `json:"mean_output_tok_s_per_user"`

	MeanE2EMS float64 `json:"mean_e2e_latency_ms"`
	P50E2EMS  float64 `json:"p50_e2e_latency_ms"`
	P90E2EMS  float64 `json:"p90_e2e_latency_ms"`
	P99E2EMS  float64 `json:"p99_e2e_latency_ms"`

	// RequestThroughput is completed requests ÷ duration.
	RequestThroughput      float64 `json:"request_throughput_req_s"`
	OutputThroughput       float64 `json:"output_throughput_tok_s"`
	InputThroughput        float64 `json:"input_throughput_tok_s"`
	PrefixCacheReusedRatio float64 `json:"prefix_cache_reused_ratio"`

	// Goodput is set when the replay had an SLO.
	Goodput *Goodput `json:"goodput,omitempty"`
	// Load is set with Config.LoadReport: decode stall and load balance (stall.go).
	Load *LoadSummary `json:"load,omitempty"`
	// KVTiers is set with Config.KVTiers: per-tier hit ratios and transfers (tiers.go).
	KVTiers *TierSummary `json:"kv_tiers,omitempty"`
	// Disagg is set for a disaggregated fleet: each pool's share and the TTFT's parts
	// (disaggreport.go).
	Disagg *DisaggSummary `json:"disagg,omitempty"`

	Workers    []WorkerSummary `json:"workers"`
	Rejections []Rejection     `json:"rejections,omitempty"`
	// Fleet is set when workers start, drain and fail (Config.Fleet): replicas over time,
	// scaling events, GPU-hours, requests migrated and lost (fleet.go).
	Fleet *FleetSummary `json:"fleet,omitempty"`
}

// Goodput is how many completed requests met the SLO, as vLLM's benchmark_serving reports
// it: Good of the completed requests met every bound; Attainment = Good ÷ completed;
// RequestsPerS = Good ÷ duration.
type Goodput struct {
	SLO          SLO     `json:"slo"`
	Good         int     `json:"good_requests"`
	Attainment   float64 `json:"slo_attainment"`
	RequestsPerS float64 `json:"request_goodput_req_s"`
}

// WorkerSummary is one worker's share of the replay.
type WorkerSummary struct {
	Requests     int   `json:"requests"`      // completed on this worker
	PromptTokens int64 `json:"prompt_tokens"` // Σ input tokens admitted
	ReusedTokens int64 `json:"reused_tokens"` // Σ prefix-hit tokens at first admission
	PeakBlocks   int   `json:"peak_blocks"`   // most KV blocks held by running requests
	Preemptions  int   `json:"preemptions"`
}

// RequestRecord is one completed request. ID is its 0-based position in the trace.
type RequestRecord struct {
	ID           int     `json:"id"`
	Worker       int     `json:"worker"`
	ArrivalMS    float64 `json:"arrival_ms"`
	TTFTMS       float64 `json:"ttft_ms"`
	E2EMS        float64 `json:"e2e_latency_ms"`
	InputLength  int     `json:"input_length"`
	OutputLength int     `json:"output_length"`
	CachedTokens int     `json:"cached_tokens"`
	Preemptions  int     `json:"preemptions"`
	// With Config.LoadReport: the time its decode tokens waited behind prompt chunks in mixed
	// steps, and in its worker's queue after a preemption (stall.go); absent otherwise.
	DecodeStallMS float64 `json:"decode_stall_ms,omitempty"`
	QueueStallMS  float64 `json:"queue_stall_ms,omitempty"`
	// With Config.KVTiers: prompt tokens onboarded from G2 or G3 at first admission.
	TierCachedTokens int `json:"tier_cached_tokens,omitempty"`
	// Handoff: in a disaggregated fleet, its prefill worker and KV transfer (Worker is the
	// decode worker); absent otherwise.
	Handoff *Handoff `json:"handoff,omitempty"`
}

// WriteRequests writes records as JSON lines.
func WriteRequests(w io.Writer, recs []RequestRecord) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Report summarises the requests completed so far (the whole replay once Run returns).
func (s *Sim) Report() *Report {
	tpot := make([]float64, 0, s.completed)
	var inTok, outTok, hitTok int64
	good := 0
	var firstArrival int64 = math.MaxInt64
	var recs []RequestRecord
	if s.cfg.RecordRequests && s.completed > 0 {
		// Sized once: grown by append, a million-request trace's records are copied (and
		// their fresh memory faulted in) several times over.
		recs = make([]RequestRecord, 0, s.completed)
	}
	for i := range s.reqs {
		r := &s.reqs[i]
		if r.worker >= 0 {
			firstArrival = min(firstArrival, r.arrival)
		}
		if !r.finished {
			continue
		}
		t, e := r.firstTok-r.arrival, r.done-r.arrival
		var tp float64 // microseconds; 0 with one output token, as vLLM counts it
		if r.out >= 2 {
			tp = float64(e-t) / float64(r.out-1)
			tpot = append(tpot, tp)
		}
		if s.cfg.SLO.Good(ms(float64(t)), ms(tp), ms(float64(e))) {
			good++
		}
		inTok += int64(r.isl)
		outTok += int64(r.out)
		hitTok += int64(r.cached)
		if s.cfg.RecordRequests {
			id := i
			if s.traceIndex != nil {
				id = s.traceIndex[i]
			}
			rec := RequestRecord{
				ID: id, Worker: int(r.worker), ArrivalMS: ms(float64(r.arrival)),
				TTFTMS: ms(float64(t)), E2EMS: ms(float64(e)),
				InputLength: int(r.isl), OutputLength: int(r.out),
				CachedTokens: int(r.cached), Preemptions: int(r.preempted),
			}
			if s.stalls.on {
				rec.DecodeStallMS, rec.QueueStallMS = ms(float64(s.stalls.stall[i])), ms(float64(s.stalls.queueStall[i]))
			}
			if s.tiers != nil {
				rec.TierCachedTokens = int(s.tiers.reqTok[i])
			}
			if s.dis != nil {
				rec.Handoff = s.handoffOf(i)
			}
			recs = append(recs, rec)
		}
	}
	rejections := slices.Clone(s.rejected)
	if s.busyRejected > 0 {
		rejections = append(rejections, Rejection{Reason: busyReason, Requests: s.busyRejected, First: s.where(s.busyFirst)})
	}
	sum := Summary{
		RequestsCompleted: s.completed,
		Rejections:        rejections,
		RequestsRejected:  rejectedCount(rejections),
		WallTimeMS:        round(float64(s.wall.Microseconds())/1000, 3),
		Workers:           make([]WorkerSummary, len(s.workers)),
	}
	if s.completed > 0 {
		dur := s.lastDone - firstArrival
		sum.DurationMS = ms(float64(dur))
		if dur > 0 {
			sum.RequestThroughput = round(float64(s.completed)*1e6/float64(dur), 3)
			sum.OutputThroughput = round(float64(outTok)*1e6/float64(dur), 3)
			sum.InputThroughput = round(float64(inTok)*1e6/float64(dur), 3)
		}
		if inTok > 0 {
			sum.PrefixCacheReusedRatio = round(float64(hitTok)/float64(inTok), 6)
		}
		if s.cfg.SLO.Set() {
			sum.Goodput = &Goodput{SLO: s.cfg.SLO, Good: good, Attainment: round(float64(good)/float64(s.completed), 6)}
			if dur > 0 {
				sum.Goodput.RequestsPerS = round(float64(good)*1e6/float64(dur), 3)
			}
		}
	}
	// TTFT and e2e take turns in one buffer: on a trace of millions of requests the
	// report's arrays are a good part of the replay's memory.
	vals := make([]int64, 0, s.completed)
	collect := func(since func(r *request) int64) []int64 {
		vals = vals[:0]
		for i := range s.reqs {
			if r := &s.reqs[i]; r.finished {
				vals = append(vals, since(r)-r.arrival)
			}
		}
		return vals
	}
	sum.MeanTTFTMS, sum.P50TTFTMS, sum.P90TTFTMS, sum.P99TTFTMS = intStats(collect(func(r *request) int64 { return r.firstTok }))
	sum.MeanE2EMS, sum.P50E2EMS, sum.P90E2EMS, sum.P99E2EMS = intStats(collect(func(r *request) int64 { return r.done }))
	sum.MeanTPOTMS, sum.P50TPOTMS, sum.P90TPOTMS, sum.P99TPOTMS = floatStats(tpot)
	sum.MeanITLMS, sum.P50ITLMS, sum.P90ITLMS, sum.P99ITLMS = s.itl.stats()
	sum.MeanOutputTokPerUser = round(s.itl.perUser(), 3)
	if s.stalls.on {
		var dur int64
		if s.completed > 0 {
			dur = s.lastDone - firstArrival
		}
		sum.Load = s.loadSummary(dur, sum.MeanTPOTMS)
	}
	if s.tiers != nil {
		sum.KVTiers = s.tierSummary()
	}
	for i := range s.workers {
		w := &s.workers[i]
		sum.Workers[i] = WorkerSummary{
			Requests: w.requests, PromptTokens: w.promptTokens, ReusedTokens: w.reusedTokens,
			PeakBlocks: w.peakBlocks, Preemptions: w.preemptions,
		}
	}
	if s.dis != nil {
		sum.Disagg = s.disaggSummary(sum.Workers)
	}
	if s.fleet != nil {
		sum.Fleet = s.fleetSummary(s.now) // the last completion, or the loss that ended the run
	}
	return &Report{Summary: sum, Requests: recs, Snapshots: s.Snapshots()}
}

// ms converts microseconds to milliseconds rounded to the microsecond.
func ms(us float64) float64 { return round(us/1000, 3) }

func round(x float64, digits int) float64 {
	p := math.Pow10(digits)
	return math.Round(x*p) / p
}

// rank is the 0-based index of the p-quantile in n sorted values (nearest rank).
func rank(p float64, n int) int {
	return min(max(int(math.Ceil(p*float64(n)))-1, 0), n-1)
}

func intStats(v []int64) (mean, p50, p90, p99 float64) {
	if len(v) == 0 {
		return
	}
	slices.Sort(v)
	var sum int64
	for _, x := range v {
		sum += x
	}
	q := func(p float64) float64 { return ms(float64(v[rank(p, len(v))])) }
	return ms(float64(sum) / float64(len(v))), q(0.5), q(0.9), q(0.99)
}

func floatStats(v []float64) (mean, p50, p90, p99 float64) {
	if len(v) == 0 {
		return
	}
	slices.Sort(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	q := func(p float64) float64 { return ms(v[rank(p, len(v))]) }
	return ms(sum / float64(len(v))), q(0.5), q(0.9), q(0.99)
}

// gapHist is an exact histogram of inter-token gaps in microseconds: dense counts below
// denseGapUS (most step durations), a map for the longer ones (long prefill steps, waits
// after a preemption). The dense counts live in page-sized chunks made when a gap first
// falls in them: a replay's gaps cluster around its step times, and a full-length array
// (512 KB, faulted in and walked at report time) cost a short replay — the simulator digest
// runs seven — more than its steps did.
type gapHist struct {
	dense [denseGapUS / gapChunk]*[gapChunk]int64
	over  map[int64]int64
	n     int64
	sum   int64
}

const (
	denseGapUS = 1 << 16
	gapChunk   = 512 // counts per chunk: 4 KB
)

func (h *gapHist) add(gap, count int64) {
	h.n += count
	h.sum += gap * count
	if gap < denseGapUS {
		c := h.dense[gap/gapChunk]
		if c == nil {
			c = new([gapChunk]int64)
			h.dense[gap/gapChunk] = c
		}
		c[gap%gapChunk] += count
		return
	}
	if h.over == nil {
		h.over = map[int64]int64{}
	}
	h.over[gap] += count
}

// count is how many gaps of exactly gap microseconds were added.
func (h *gapHist) count(gap int64) int64 {
	if gap >= denseGapUS {
		return h.over[gap]
	}
	if c := h.dense[gap/gapChunk]; c != nil {
		return c[gap%gapChunk]
	}
	return 0
}

// counts yields each gap added with its count, shortest first.
func (h *gapHist) counts(yield func(gap, count int64) bool) {
	for i, c := range h.dense {
		if c == nil {
			continue
		}
		for j, n := range c {
			if n > 0 && !yield(int64(i*gapChunk+j), n) {
				return
			}
		}
	}
	for _, g := range slices.Sorted(maps.Keys(h.over)) {
		if !yield(g, h.over[g]) {
			return
		}
	}
}

func (h *gapHist) stats() (mean, p50, p90, p99 float64) {
	if h.n == 0 {
		return
	}
	q := func(p float64) float64 {
		k := int64(rank(p, int(h.n))) // 0-based rank
		for g, c := range h.counts {
			if k < c {
				return ms(float64(g))
			}
			k -= c
		}
		return 0 // unreachable: the counts sum to n
	}
	return ms(float64(h.sum) / float64(h.n)), q(0.5), q(0.9), q(0.99)
}

// perUser is the mean of 1e6 ÷ gap over the gaps longer than zero (tokens per second), summed
// in a fixed order so that reports stay byte-identical.
func (h *gapHist) perUser() float64 {
	var rate float64
	var n int64
	for g, c := range h.counts {
		if g > 0 {
			rate += float64(c) * 1e6 / float64(g)
			n += c
		}
	}
	if n == 0 {
		return 0
	}
	return rate / float64(n)
}

// where is "file:line" of simulated request i in the caller's trace.
func (s *Sim) where(i int) string {
	if s.traceIndex != nil {
		i = s.traceIndex[i]
	}
	return s.tr.Where(i)
}

func rejectedCount(rs []Rejection) int {
	n := 0
	for _, r := range rs {
		n += r.Requests
	}
	return n
}

// GoodputOf counts goodput under slo from per-request records, exactly as a replay's summary
// counts it (the records keep TTFT and e2e latency to the microsecond), over a run of
// durationMS: for a run that kept its records but ran without that SLO.
func GoodputOf(recs []RequestRecord, slo SLO, durationMS float64) *Goodput {
	if len(recs) == 0 {
		return nil
	}
	good := 0
	for _, r := range recs {
		t, e := math.Round(r.TTFTMS*1000), math.Round(r.E2EMS*1000)
		var tp float64
		if r.OutputLength >= 2 {
			tp = (e - t) / float64(r.OutputLength-1)
		}
		if slo.Good(ms(t), ms(tp), ms(e)) {
			good++
		}
	}
	g := &Goodput{SLO: slo, Good: good, Attainment: round(float64(good)/float64(len(recs)), 6)}
	if dur := math.Round(durationMS * 1000); dur > 0 {
		g.RequestsPerS = round(float64(good)*1e6/dur, 3)
	}
	return g
}
