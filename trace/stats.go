package trace

import (
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Distribution summarizes one per-request quantity.
type Distribution struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// CachePoint is the prefix-hit ratio of an LRU block cache of a given size replaying the trace.
type CachePoint struct {
	CapacityBlocks int     `json:"capacity_blocks"`
	CapacityTokens int64   `json:"capacity_tokens"`
	HitRatio       float64 `json:"hit_ratio"`
}

// Sharing describes how requests share prefixes: system-prompt families and session turns.
//
// A request continues a session when the deepest block of its cached prefix had at most two
// distinct continuations before it (a private conversation history, perhaps edited once); when
// that block had branched three or more ways it is a shared prompt, and the request starts a
// new session on it.
type Sharing struct {
	DistinctFirstBlocks  int     `json:"distinct_first_blocks"`
	TopFirstBlockShare   float64 `json:"top_first_block_share"` // requests starting with the most common first block
	Sessions             int     `json:"sessions"`
	ContinuationRequests int     `json:"continuation_requests"`
	MeanTurnsPerSession  float64 `json:"mean_turns_per_session"`
	// Session starts whose prefix hits a prompt shared with other sessions, and that prompt's mean length.
	SharedPromptStarts      int     `json:"shared_prompt_starts"`
	MeanSharedPromptBlocks  float64 `json:"mean_shared_prompt_blocks"`
	MeanContinuationHitFrac float64 `json:"mean_continuation_hit_fraction"` // cached share of a continuation's input blocks
}

// Statistics describes a trace. Prefix-cache ratios count blocks: a request's hit is the
// longest leading run of its hash ids already seen (unbounded cache) or still cached (LRU).
type Statistics struct {
	Name             string       `json:"name"`
	BlockSize        int          `json:"block_size"`
	Requests         int          `json:"requests"`
	SpanMS           int64        `json:"span_ms"`
	MeanInputLength  float64      `json:"mean_input_length"`
	MeanOutputLength float64      `json:"mean_output_length"`
	MaxInputLength   int          `json:"max_input_length"`
	MaxOutputLength  int          `json:"max_output_length"`
	InputLength      Distribution `json:"input_length"`
	OutputLength     Distribution `json:"output_length"`
	InputBlocks      int64        `json:"input_blocks"`
	UniqueBlocks     int          `json:"unique_blocks"`
	PrefixCacheRatio float64      `json:"prefix_cache_ratio"`
	CacheCurve       []CachePoint `json:"cache_curve"`
	Sharing          Sharing      `json:"sharing"`
	// SessionStructure is what a session-format trace declares (absent for plain rows).
	SessionStructure *SessionStats `json:"session_structure,omitempty"`
}

// cacheCurveBlocks are the LRU capacities (in trace blocks) of the hit-ratio curve:
// from a fraction of one worker's KV cache to a whole fleet's.
func cacheCurveBlocks() []int { return []int{1 << 9, 1 << 11, 1 << 13, 1 << 15, 1 << 17} }

// Stats computes the statistics of a trace in a few passes over its requests.
func Stats(t *Trace) Statistics {
	s := Statistics{Name: t.Name, BlockSize: t.BlockSize, Requests: len(t.Requests)}
	if t.Sessions != nil {
		s.SessionStructure = sessionStats(t.Sessions)
	}
	n := len(t.Requests)
	if n == 0 {
		return s
	}
	s.SpanMS = t.Requests[n-1].TimestampMS - t.Requests[0].TimestampMS
	in := make([]float64, n)
	out := make([]float64, n)
	for i, r := range t.Requests {
		in[i] = float64(r.InputLength)
		out[i] = float64(r.OutputLength)
		s.InputBlocks += int64(len(r.HashIDs))
	}
	s.InputLength = distribution(in)
	s.OutputLength = distribution(out)
	s.MeanInputLength, s.MeanOutputLength = s.InputLength.Mean, s.OutputLength.Mean
	s.MaxInputLength, s.MaxOutputLength = int(s.InputLength.Max), int(s.OutputLength.Max)

	dense, unique := denseBlocks(t.Requests)
	s.UniqueBlocks = unique
	s.PrefixCacheRatio, s.Sharing = prefixSharing(dense, unique)
	for _, c := range cacheCurveBlocks() {
		s.CacheCurve = append(s.CacheCurve, CachePoint{
			CapacityBlocks: c,
			CapacityTokens: int64(c) * int64(t.BlockSize),
			HitRatio:       lruHitRatio(dense, unique, c, s.InputBlocks),
		})
	}
	return s
}

func distribution(x []float64) Distribution {
	sorted := slices.Clone(x)
	slices.Sort(sorted)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, sorted, nil) }
	return Distribution{Mean: stat.Mean(x, nil), P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: sorted[len(sorted)-1]}
}

// denseBlocks renumbers hash ids 0..unique-1 in order of first appearance, so the passes
// below can use slices instead of maps.
func denseBlocks(reqs []Request) ([][]int32, int) {
	ids := make(map[int64]int32)
	dense := make([][]int32, len(reqs))
	for i, r := range reqs {
		d := make([]int32, len(r.HashIDs))
		for j := range r.HashIDs {
			id := r.ID(j)
			k, ok := ids[id]
			if !ok {
				k = int32(len(ids))
				ids[id] = k
			}
			d[j] = k
		}
		dense[i] = d
	}
	return dense, len(ids)
}

// prefixSharing replays the trace against an unbounded prefix cache and classifies each
// request as a session start or a continuation (see Sharing).
func prefixSharing(dense [][]int32, unique int) (float64, Sharing) {
	seen := make([]bool, unique)
	// The first two distinct blocks seen after each block, and how many distinct ones (up to 3).
	next1 := make([]int32, unique)
	next2 := make([]int32, unique)
	branches := make([]uint8, unique)
	var sh Sharing
	first := make(map[int32]int)
	var hits, total int64
	var sharedBlocks int64
	var contFrac float64
	for _, d := range dense {
		if len(d) > 0 {
			first[d[0]]++
		}
		h := 0
		for h < len(d) && seen[d[h]] {
			h++
		}
		hits += int64(h)
		total += int64(len(d))
		switch {
		case h == 0:
			sh.Sessions++
		case branches[d[h-1]] <= 2:
			sh.ContinuationRequests++
			contFrac += float64(h) / float64(len(d))
		default:
			sh.Sessions++
			sh.SharedPromptStarts++
			sharedBlocks += int64(h)
		}
		for j, b := range d {
			seen[b] = true
			if j+1 < len(d) {
				nb := d[j+1]
				switch {
				case branches[b] == 0:
					next1[b], branches[b] = nb, 1
				case branches[b] == 1 && nb != next1[b]:
					next2[b], branches[b] = nb, 2
				case branches[b] == 2 && nb != next1[b] && nb != next2[b]:
					branches[b] = 3 // three or more is all the classification needs
				}
			}
		}
	}
	sh.DistinctFirstBlocks = len(first)
	top := 0
	for _, c := range first {
		top = max(top, c)
	}
	sh.TopFirstBlockShare = float64(top) / float64(len(dense))
	if sh.Sessions > 0 {
		sh.MeanTurnsPerSession = float64(len(dense)) / float64(sh.Sessions)
	}
	if sh.SharedPromptStarts > 0 {
		sh.MeanSharedPromptBlocks = float64(sharedBlocks) / float64(sh.SharedPromptStarts)
	}
	if sh.ContinuationRequests > 0 {
		sh.MeanContinuationHitFrac = contFrac / float64(sh.ContinuationRequests)
	}
	return ratio(hits, total), sh
}

// lruHitRatio replays the trace against an LRU cache of capBlocks blocks. A request's blocks
// are touched last-to-first so its prefix is the most recently used part: like vLLM, the
// tail of a prompt is evicted before its head.
func lruHitRatio(dense [][]int32, unique, capBlocks int, totalBlocks int64) float64 {
	const none = -1
	prev := make([]int32, unique)
	next := make([]int32, unique)
	in := make([]bool, unique)
	head, tail := int32(none), int32(none) // head: most recent
	size := 0
	unlink := func(b int32) {
		if prev[b] != none {
			next[prev[b]] = next[b]
		} else {
			head = next[b]
		}
		if next[b] != none {
			prev[next[b]] = prev[b]
		} else {
			tail = prev[b]
		}
	}
	pushFront := func(b int32) {
		prev[b], next[b] = none, head
		if head != none {
			prev[head] = b
		}
		head = b
		if tail == none {
			tail = b
		}
	}
	var hits int64
	for _, d := range dense {
		h := 0
		for h < len(d) && in[d[h]] {
			h++
		}
		hits += int64(h)
		for j := len(d) - 1; j >= 0; j-- {
			b := d[j]
			if in[b] {
				unlink(b)
			} else {
				in[b] = true
				size++
			}
			pushFront(b)
		}
		for size > capBlocks {
			t := tail
			unlink(t)
			in[t] = false
			size--
		}
	}
	return ratio(hits, totalBlocks)
}

// ratio is hits/total, 0 for an empty total.
func ratio(hits, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(hits) / float64(total)
}
