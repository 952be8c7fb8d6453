package sweep

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/internal/cputime"
)

// BenchmarkSeedSweep is the whole seed sweep (the search's 30 evaluations, saturation, the
// three full-trace validations, the bootstrap intervals and the output files) with one
// simulation slot and with two. The wall-time ratio of the two is what a second core buys;
// cpu-ms/op, the process's CPU per sweep, stays the same when speculation wastes nothing.
// One slot still leaves the garbage collector the second core: the acceptance figure pins
// the whole process with taskset instead (docs/benchmarks.md).
//
// Where the slots wait, from every simulation's start and end: start-ms before the first
// simulation, tail-ms after the last (bootstraps, charts, files), and while simulations run,
// how long all slots were busy (full-ms) and how long fewer were (short-ms, the round
// boundaries and a last replay alone). idle-core-ms is slots × wall − CPU: the core time no
// goroutine used.
func BenchmarkSeedSweep(b *testing.B) {
	f := config.Default()
	exp, err := config.NewExperiment(f)
	if err != nil {
		b.Fatal(err)
	}
	for _, slots := range []int{1, 2} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			if runtime.GOMAXPROCS(0) < slots {
				b.Skipf("GOMAXPROCS %d: fewer cores than slots", runtime.GOMAXPROCS(0))
			}
			f.Sweep.ParallelEvals = slots
			var tl timeline
			cpu0, wall0 := cputime.Process(), time.Now()
			for b.Loop() {
				sim := &timedSim{Experiment: exp, start: time.Now()}
				if _, err := Run(context.Background(), f, sim, Options{Out: b.TempDir()}); err != nil {
					b.Fatal(err)
				}
				tl.add(sim.timeline(time.Since(sim.start), slots))
			}
			cpu, wall := cputime.Process()-cpu0, time.Since(wall0)
			n := float64(b.N)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
			b.ReportMetric(ms(cpu), "cpu-ms/op")
			b.ReportMetric(ms(time.Duration(slots)*wall-cpu), "idle-core-ms/op")
			b.ReportMetric(ms(tl.start), "start-ms/op")
			b.ReportMetric(ms(tl.full), "full-ms/op")
			b.ReportMetric(ms(tl.short), "short-ms/op")
			b.ReportMetric(ms(tl.tail), "tail-ms/op")
		})
	}
}

// timedSim is the experiment recording when each simulation ran.
type timedSim struct {
	*config.Experiment
	start time.Time
	mu    sync.Mutex
	runs  [][2]time.Duration // start, end since start
}

func (s *timedSim) RunIn(ctx context.Context, sc *engine.Scratch, cfg engine.Config, requests int) (*engine.Report, error) {
	from := time.Since(s.start)
	rep, err := s.Experiment.RunIn(ctx, sc, cfg, requests)
	to := time.Since(s.start)
	s.mu.Lock()
	s.runs = append(s.runs, [2]time.Duration{from, to})
	s.mu.Unlock()
	return rep, err
}

func (s *timedSim) Run(ctx context.Context, cfg engine.Config, requests int) (*engine.Report, error) {
	return s.RunIn(ctx, nil, cfg, requests)
}

// timeline is a sweep's time before, between and after its simulations.
type timeline struct{ start, full, short, tail time.Duration }

func (t *timeline) add(u timeline) {
	t.start, t.full, t.short, t.tail = t.start+u.start, t.full+u.full, t.short+u.short, t.tail+u.tail
}

// timeline splits a sweep of the given length by how many of its slots were simulating.
func (s *timedSim) timeline(total time.Duration, slots int) timeline {
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	for _, r := range s.runs {
		edges = append(edges, edge{r[0], 1}, edge{r[1], -1})
	}
	if len(edges) == 0 {
		return timeline{start: total}
	}
	slices.SortFunc(edges, func(a, b edge) int { return int(a.at - b.at) })
	t := timeline{start: edges[0].at, tail: total - edges[len(edges)-1].at}
	busy := 0
	for i, e := range edges {
		if i > 0 {
			d := e.at - edges[i-1].at
			if busy >= slots {
				t.full += d
			} else {
				t.short += d
			}
		}
		busy += e.delta
	}
	return t
}
