package router

import (
	"math/rand/v2"
	"testing"
)

// benchWorkload mimics the toolagent replay the engine drives: 8 workers, prompts of 134
// engine blocks drawn from a few hundred shared prefixes (system prompt + tool context)
// with a private tail, and an indexer holding tens of thousands of cached blocks.
type benchWorkload struct {
	reqs []Request
}

const (
	benchWorkers  = 8
	benchBlocks   = 134
	benchFamilies = 300
	benchReqs     = 4096
)

func newBenchWorkload() *benchWorkload {
	rng := rand.New(rand.NewPCG(42, 42))
	fam := make([][]uint64, benchFamilies)
	for f := range fam {
		fam[f] = make([]uint64, 110)
		for i := range fam[f] {
			fam[f][i] = rng.Uint64()
		}
	}
	wl := &benchWorkload{reqs: make([]Request, benchReqs)}
	for i := range wl.reqs {
		f := fam[rng.IntN(benchFamilies)]
		shared := 20 + rng.IntN(len(f)-20)
		h := make([]uint64, benchBlocks)
		copy(h, f[:shared])
		for j := shared; j < benchBlocks; j++ {
			h[j] = rng.Uint64()
		}
		wl.reqs[i] = Request{ID: int64(i), InputLength: benchBlocks*64 + 17, BlockHashes: h}
	}
	return wl
}

// warm fills the indexer: every request's blocks cached on one or two workers.
func (wl *benchWorkload) warm(r *Router) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range wl.reqs {
		h := wl.reqs[i].BlockHashes
		r.Apply(KVEvent{Worker: rng.IntN(benchWorkers), Kind: BlocksStored, Hashes: h})
		if i%3 == 0 {
			r.Apply(KVEvent{Worker: rng.IntN(benchWorkers), Kind: BlocksStored, Hashes: h})
		}
	}
}

// BenchmarkRoute measures one request's life in the router with 32 in flight: Route,
// FirstToken, Finished of the request routed 32 earlier.
func BenchmarkRoute(b *testing.B) {
	wl := newBenchWorkload()
	r, err := New(DefaultConfig(), benchWorkers, 1)
	if err != nil {
		b.Fatal(err)
	}
	wl.warm(r)
	b.ReportMetric(float64(r.index.len()), "indexed_blocks")
	const inFlight = 32
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		req := &wl.reqs[i%benchReqs]
		req.ID = int64(i)
		r.Route(req)
		r.FirstToken(req.ID)
		if i >= inFlight {
			r.Finished(int64(i - inFlight))
		}
	}
}

// BenchmarkApply measures indexer updates: storing then evicting a 134-block prompt.
func BenchmarkApply(b *testing.B) {
	wl := newBenchWorkload()
	r, err := New(DefaultConfig(), benchWorkers, 1)
	if err != nil {
		b.Fatal(err)
	}
	wl.warm(r)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		h := wl.reqs[i%benchReqs].BlockHashes
		w := i % benchWorkers
		r.Apply(KVEvent{Worker: w, Kind: BlocksStored, Hashes: h})
		r.Apply(KVEvent{Worker: w, Kind: BlocksRemoved, Hashes: h})
	}
}
