package sweep

import (
	"context"
	"testing"

	"github.com/routerlab/routerlab/config"
)

// BenchmarkSeedReport measures what report.html adds to the seed sweep: the charts and the
// page (HTML), and the bootstrap intervals of the three validation runs' means (Intervals).
func BenchmarkSeedReport(b *testing.B) {
	f := config.Default()
	exp, err := config.NewExperiment(f)
	if err != nil {
		b.Fatal(err)
	}
	res, err := Run(context.Background(), f, exp, Options{Out: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("HTML", func(b *testing.B) {
		for b.Loop() {
			if _, err := res.HTML(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Intervals", func(b *testing.B) {
		e2e := make([][]float64, 3)
		for j, rep := range res.Validation.Reports {
			for _, r := range rep.Requests {
				e2e[j] = append(e2e[j], r.E2EMS)
			}
		}
		for b.Loop() {
			bootstrapMeans(e2e, 1)
		}
	})
}
