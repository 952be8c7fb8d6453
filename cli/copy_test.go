package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/internal/shellwords"
	"github.com/routerlab/routerlab/tui"
	"github.com/routerlab/routerlab/tui/backend"
)

// The command the explorer's `y` copies replays the point the explorer shows: run as
// printed (its quoting read back as a shell would), it gives the explorer's figures, for a
// point off the seed in every knob.
func TestExplorerCopyCommandReplaysThePoint(t *testing.T) {
	exp, err := config.NewExperiment(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	sim, err := backend.NewSim(exp, 300)
	if err != nil {
		t.Fatal(err)
	}
	k := sim.Initial()
	k.Credit, k.Scale, k.Temperature, k.Concurrency = 0.5, 8, 0, 16
	k.Deployment.Replicas, k.Deployment.MaxBatchedTokens, k.Deployment.Async = 128, 8192, true
	shown, err := sim.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := sim.ReplaySets(k)
	if err != nil {
		t.Fatal(err)
	}
	line := replayCommand(nil)(sim.Requests(), sets)
	args := shellSplit(t, line)
	if args[0] != "routerlab" || args[1] != "replay" {
		t.Fatalf("command %q", line)
	}
	out, _, err := runCmd(t, newReplayCmd(), append(args[2:], "--format", "json")...)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	var rep struct {
		Summary struct {
			Completed int     `json:"requests_completed"`
			E2E       float64 `json:"mean_e2e_latency_ms"`
			TTFT      float64 `json:"mean_ttft_ms"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep.Summary); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	got := fmt.Sprintf("%d %.3f %.3f", rep.Summary.Completed, rep.Summary.E2E, rep.Summary.TTFT)
	want := fmt.Sprintf("%d %.3f %.3f", shown.Metrics.Completed, shown.Metrics.E2E.Mean, shown.Metrics.TTFT.Mean)
	if got != want {
		t.Fatalf("%s\nreplays requests/e2e/TTFT %s; the explorer shows %s", line, got, want)
	}
}

// shellSplit reads a command line of shellJoin's quoting.
func shellSplit(t *testing.T, s string) []string {
	t.Helper()
	words, err := shellwords.Split(s)
	if err != nil {
		t.Fatal(err)
	}
	return words
}
