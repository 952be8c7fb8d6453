package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/sweep"
)

// The example sweep over the router's load-accounting and admission knobs runs from its YAML
// and validates, and its ledger names the knobs it searched.
func TestLoadSweepExampleRunsAndValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep")
	}
	dir := filepath.Join(t.TempDir(), "out")
	_, stderr, err := runSweepCmd(t, "--config", "../examples/router-load-sweep.yaml", "--requests", "200",
		"--set", "sweep.max_rounds=1", "--set", "sweep.candidates_per_round=4", "--set", "validate.requests=200",
		"--parallel", "2", "--out", dir)
	if err != nil {
		t.Fatalf("sweep: %v\n%s", err, stderr)
	}
	sum, err := sweep.ReadSummary(dir)
	if err != nil || sum == nil {
		t.Fatalf("summary: %v", err)
	}
	if sum.Evaluations != 4 || len(sum.Validation) != 3 {
		t.Fatalf("%d evaluations, %d validation runs; want 4 and 3", sum.Evaluations, len(sum.Validation))
	}
	for _, v := range sum.Validation {
		if v.Metrics.RequestsCompleted+v.Metrics.RequestsRejected != 200 {
			t.Errorf("validation %s: %d completed + %d rejected, want 200", v.Name, v.Metrics.RequestsCompleted, v.Metrics.RequestsRejected)
		}
	}
	ledger, err := os.ReadFile(filepath.Join(dir, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"router_queue_threshold", "router_queue_policy", "router_assume_kv_reuse", "router_track_output_blocks",
		"router_active_sequence_stride", "router_prefill_load_model", "active_prefill_tokens_threshold_frac"} {
		if !strings.Contains(string(ledger), k) {
			t.Errorf("the ledger never names %s", k)
		}
	}
}
