package engine

import (
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/trace"
)

// A text prompt reaches the engine after the API server tokenised it: ⌈isl × ns / 1000⌉ µs
// after its arrival, from which TTFT still counts; with 0 ns it reaches the engine at once.
func TestAPIServerTokenizationDelaysTheEngine(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 64, Requests: []trace.Request{req(0, 1000, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)}}
	var firstStart []int64
	for _, ns := range []int{0, 1340} {
		cfg := Config{Workers: 1, Worker: deployment(64, 4096, 8), ReplayConcurrency: 1, RecordRequests: true}
		cfg.Worker.APIServerTokenizeNS = ns
		var start int64 = -1
		var s *Sim
		timer := timerFunc(func(b *model.Batch) int64 {
			if start < 0 {
				start = s.now
			}
			return 500
		})
		s = newSim(cfg, timer, tr, &fixedRouter{workers: 1})
		rep, err := s.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		firstStart = append(firstStart, start)
		// Prefill step then one decode: TTFT = tokenisation + 500 µs.
		if want := float64(start+500) / 1000; rep.Requests[0].TTFTMS != want {
			t.Fatalf("ns %d: TTFT %.3f ms, want %.3f", ns, rep.Requests[0].TTFTMS, want)
		}
	}
	if firstStart[0] != 0 || firstStart[1] != 1340 {
		t.Fatalf("first step starts at %v µs, want [0 1340]", firstStart)
	}
}
