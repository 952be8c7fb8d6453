package trace

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// Four requests, block size 4, worked by hand:
//
//	r0 [1 2 3]    hits 0         new session
//	r1 [1 2 4]    hits 2 (1 2)   continues r0 (block 2 had one continuation)
//	r2 [1 2 3 5]  hits 3 (1 2 3) continues r0 (block 3 had none)
//	r3 [9]        hits 0         new session
//
// Unbounded: 5 of 11 blocks. LRU of 3 blocks: r1 hits 2 and evicts 3 (the least recent),
// so r2 hits only 1 2; r3 misses: 4 of 11.
func handTrace() *Trace {
	return &Trace{Name: "hand", BlockSize: 4, Requests: []Request{
		{TimestampMS: 0, InputLength: 12, OutputLength: 2, HashIDs: []int64{1, 2, 3}},
		{TimestampMS: 10, InputLength: 10, OutputLength: 4, HashIDs: []int64{1, 2, 4}},
		{TimestampMS: 25, InputLength: 16, OutputLength: 6, HashIDs: []int64{1, 2, 3, 5}},
		{TimestampMS: 40, InputLength: 1, OutputLength: 100, HashIDs: []int64{9}},
	}}
}

func TestStatsHandTrace(t *testing.T) {
	s := Stats(handTrace())
	if s.Requests != 4 || s.SpanMS != 40 || s.BlockSize != 4 || s.InputBlocks != 11 || s.UniqueBlocks != 6 {
		t.Fatalf("counts: %+v", s)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("mean input", s.MeanInputLength, 39.0/4)
	near("mean output", s.MeanOutputLength, 112.0/4)
	near("input p50", s.InputLength.P50, 10)
	near("input p90", s.InputLength.P90, 16)
	near("output max", s.OutputLength.Max, 100)
	if s.MaxInputLength != 16 || s.MaxOutputLength != 100 {
		t.Errorf("max input %d output %d", s.MaxInputLength, s.MaxOutputLength)
	}
	near("prefix ratio", s.PrefixCacheRatio, 5.0/11)
	if got := lruHitRatio(mustDense(handTrace()), 6, 3, 11); math.Abs(got-4.0/11) > 1e-12 {
		t.Errorf("LRU(3) hit ratio %v, want 4/11", got)
	}
	for _, c := range s.CacheCurve {
		// Every curve capacity exceeds the 6 unique blocks: it equals the unbounded ratio.
		near("large LRU", c.HitRatio, 5.0/11)
		if c.CapacityTokens != int64(c.CapacityBlocks)*4 {
			t.Errorf("capacity tokens %d for %d blocks", c.CapacityTokens, c.CapacityBlocks)
		}
	}
	sh := s.Sharing
	if sh.DistinctFirstBlocks != 2 || sh.Sessions != 2 || sh.ContinuationRequests != 2 || sh.SharedPromptStarts != 0 {
		t.Errorf("sharing %+v", sh)
	}
	near("top first block share", sh.TopFirstBlockShare, 0.75)
	near("turns per session", sh.MeanTurnsPerSession, 2)
	near("continuation hit fraction", sh.MeanContinuationHitFrac, (2.0/3+3.0/4)/2)
}

// A prompt that three sessions branch off is shared; a fourth request hitting it starts a
// new session rather than continuing one.
func TestStatsSharedPrompt(t *testing.T) {
	tr := &Trace{Name: "fam", BlockSize: 1, Requests: []Request{
		{TimestampMS: 0, InputLength: 3, OutputLength: 1, HashIDs: []int64{1, 2, 10}},
		{TimestampMS: 0, InputLength: 3, OutputLength: 1, HashIDs: []int64{1, 2, 11}},
		{TimestampMS: 0, InputLength: 3, OutputLength: 1, HashIDs: []int64{1, 2, 12}},
		{TimestampMS: 0, InputLength: 4, OutputLength: 1, HashIDs: []int64{1, 2, 13, 14}},
	}}
	sh := Stats(tr).Sharing
	if sh.Sessions != 2 || sh.ContinuationRequests != 2 || sh.SharedPromptStarts != 1 || sh.MeanSharedPromptBlocks != 2 {
		t.Fatalf("sharing %+v", sh)
	}
}

func TestStatsEmpty(t *testing.T) {
	s := Stats(&Trace{Name: "empty", BlockSize: 512})
	if s.Requests != 0 || s.PrefixCacheRatio != 0 || s.CacheCurve != nil {
		t.Fatalf("%+v", s)
	}
	// Built in code rather than parsed, a request may lack hash ids: no panic, no NaN.
	s = Stats(&Trace{Name: "no ids", BlockSize: 512, Requests: []Request{{TimestampMS: 0, InputLength: 1, OutputLength: 1, HashIDs: nil}}})
	if s.PrefixCacheRatio != 0 || s.CacheCurve[0].HitRatio != 0 || s.Sharing.DistinctFirstBlocks != 0 {
		t.Fatalf("%+v", s)
	}
}

func mustDense(t *Trace) [][]int32 {
	d, _ := denseBlocks(t.Requests)
	return d
}

// The LRU hit ratio never exceeds the unbounded one and grows with capacity.
func TestLRUCurveMonotone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := &Trace{Name: "r", BlockSize: 1}
		n := rapid.IntRange(1, 40).Draw(t, "n")
		for range n {
			k := rapid.IntRange(1, 12).Draw(t, "blocks")
			ids := make([]int64, k)
			for j := range ids {
				// Chained ids as in Mooncake: a block id implies its prefix.
				if j == 0 {
					ids[j] = rapid.Int64Range(0, 3).Draw(t, "root")
				} else {
					ids[j] = ids[j-1]*5 + 1 + rapid.Int64Range(0, 2).Draw(t, "branch")
				}
			}
			tr.Requests = append(tr.Requests, Request{InputLength: k, OutputLength: 1, HashIDs: ids})
		}
		s := Stats(tr)
		dense, unique := denseBlocks(tr.Requests)
		prev := 0.0
		for c := 1; c <= unique+1; c++ {
			h := lruHitRatio(dense, unique, c, s.InputBlocks)
			if h < prev-1e-12 || h > s.PrefixCacheRatio+1e-12 {
				t.Fatalf("capacity %d: hit ratio %v (previous %v, unbounded %v)", c, h, prev, s.PrefixCacheRatio)
			}
			prev = h
		}
		if math.Abs(prev-s.PrefixCacheRatio) > 1e-12 {
			t.Fatalf("a cache holding every block should match the unbounded ratio: %v vs %v", prev, s.PrefixCacheRatio)
		}
		if s.Sharing.Sessions+s.Sharing.ContinuationRequests != n {
			t.Fatalf("sessions %d + continuations %d != %d requests", s.Sharing.Sessions, s.Sharing.ContinuationRequests, n)
		}
	})
}

func BenchmarkStatsToolagent(b *testing.B) {
	tr, err := Builtin("toolagent")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Stats(tr)
	}
}
