package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

// cancelSim ends the sweep's context as its first simulation starts, as a signal would.
type cancelSim struct {
	Simulator
	cancel context.CancelFunc
}

func (s cancelSim) Run(ctx context.Context, _ engine.Config, _ int) (*engine.Report, error) {
	s.cancel()
	return nil, ctx.Err()
}

// TestInterruptKeepsTheLedgerError: the ledger is created behind the first round, so a
// failure to create it is still the sweep's error when a signal ends the round first, not an
// *Interrupted saying the sweep can be continued.
func TestInterruptKeepsTheLedgerError(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, LedgerName+".tmp"), 0o755); err != nil { // the ledger cannot be created
		t.Fatal(err)
	}
	f := seedFile(t, "workload.search_requests=100", "sweep.max_rounds=1", "sweep.candidates_per_round=2")
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = RunSearch(ctx, f, cancelSim{Simulator: exp, cancel: cancel}, Options{Out: dir})
	var stopped *Interrupted
	if err == nil || errors.As(err, &stopped) || !strings.Contains(err.Error(), LedgerName+".tmp") {
		t.Fatalf("error %v, want the ledger's", err)
	}
}
