package sweep

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/internal/cputime"
)

// BenchmarkSeedSweep is the whole seed sweep (the search's 30 evaluations, saturation, the
// three full-trace validations, the bootstrap intervals and the output files) with one
// simulation slot and with two. The wall-time ratio of the two is what a second core buys;
// cpu-ms/op, the process's CPU per sweep, stays the same when speculation wastes nothing.
// One slot still leaves the garbage collector the second core: the acceptance figure pins
// the whole process with taskset instead (BENCHMARKS.md).
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
			cpu0 := cputime.Process()
			for b.Loop() {
				if _, err := Run(context.Background(), f, exp, Options{Out: b.TempDir()}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
