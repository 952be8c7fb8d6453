package engine

import (
	"context"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// Scratch is the memory of a replay kept for the next one: the per-request records, the
// event heap, the workers (block pools with their tables and slot chunks, queues, step
// buffers), the flights with their block tables, the inter-token histogram and the router's
// tables. A sweep runs dozens of replays one after another on each core; built in fresh
// memory, each grows its tables again and faults every page of them in anew — on a
// paravirtualised VM each fault is a trap to the hypervisor, and two replays at once fault
// in twice as much, which made the seed sweep use 10 % more CPU on two cores than on one
// (docs/benchmarks.md). Replays on one Scratch reuse the largest memory any of them grew.
//
// A replay on a Scratch is a new replay: every buffer it takes is emptied (or zeroed where a
// new one would be zero), so its report is byte-identical to Replay's
// (TestScratchReplaysAreNewOnes). A Scratch serves one replay at a time; the zero value is
// ready to use. It holds its memory until it is dropped.
type Scratch struct {
	reqs    []request
	workers []worker
	heap    eventHeap
	flights []*flight
	itl     [denseGapUS / gapChunk]*[gapChunk]int64 // gapHist.dense
	rt      *router.Router
}

// Replay is engine.Replay in sc's memory. The report shares none of it.
func (sc *Scratch) Replay(ctx context.Context, cfg Config, timer model.StepTimer, tr *trace.Trace) (*Report, error) {
	s, err := build(sc, cfg, timer, tr)
	if err != nil {
		return nil, err
	}
	defer s.giveBack(sc)
	return s.Run(ctx)
}

// giveBack hands s's memory to sc; s must not be used afterwards.
func (s *Sim) giveBack(sc *Scratch) {
	for i := range s.reqs {
		// A cancelled run leaves flights in flight.
		if fl := s.reqs[i].fl; fl != nil {
			s.flights = append(s.flights, fl)
		}
	}
	rt, _ := s.rt.(*router.Router)
	*sc = Scratch{reqs: s.reqs, workers: s.workers, heap: s.heap, flights: s.flights, itl: s.itl.dense, rt: rt}
	*s = Sim{}
}
