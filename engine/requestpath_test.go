package engine

import (
	"testing"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/trace"
)

// The client's request path: a request reaches the server RequestPathUS after it is sent, and
// its TTFT, which counts from the send, carries that; in a closed loop the next request is
// sent StreamEndUS after the previous one's last token, which no TTFT carries.
func TestRequestPathDelaysTheServer(t *testing.T) {
	tr := &trace.Trace{Name: "t", BlockSize: 1024, Requests: []trace.Request{req(0, 1000, 2, 1), req(0, 1000, 2, 2)}}
	type run struct {
		ttft, secondSent []float64
		starts           []int64
	}
	replay := func(path, end int) run {
		cfg := Config{Workers: 1, Worker: deployment(4096, 8192, 8), ReplayConcurrency: 1, RecordRequests: true}
		cfg.Worker.RequestPathUS, cfg.Worker.StreamEndUS = path, end
		var s *Sim
		var r run
		timer := timerFunc(func(b *model.Batch) int64 {
			if len(b.Prefill) > 0 {
				r.starts = append(r.starts, s.now)
			}
			return 500
		})
		s = newSim(cfg, timer, tr, &fixedRouter{workers: 1})
		rep, err := s.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range rep.Requests {
			r.ttft = append(r.ttft, q.TTFTMS)
		}
		r.secondSent = append(r.secondSent, rep.Requests[1].ArrivalMS)
		return r
	}
	base, path := replay(0, 0), replay(3000, 0)
	// Prefill then one decode (500 µs each): the first request completes at 1 ms.
	if base.starts[0] != 0 || path.starts[0] != 3000 {
		t.Fatalf("first prefill at %d µs, with a 3 ms request path %d; want 0 and 3000", base.starts[0], path.starts[0])
	}
	for i := range base.ttft {
		if path.ttft[i] != base.ttft[i]+3 {
			t.Fatalf("request %d: TTFT %.3f ms with the request path, %.3f without; want 3 ms more", i, path.ttft[i], base.ttft[i])
		}
	}
	end := replay(0, 2000)
	if base.secondSent[0] != 1 || end.secondSent[0] != 3 || end.ttft[1] != base.ttft[1] {
		t.Fatalf("second request sent at %.3f ms (stream end 2 ms: %.3f), TTFT %.3f against %.3f; want 1, 3 and the same TTFT",
			base.secondSent[0], end.secondSent[0], end.ttft[1], base.ttft[1])
	}
}
