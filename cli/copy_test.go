package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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
	_, sim := seedSim(t, 300)
	k := sim.Initial()
	k.Credit, k.Scale, k.Temperature, k.Concurrency = 0.5, 8, 0, 16
	k.Deployment.Replicas, k.Deployment.MaxBatchedTokens, k.Deployment.Async = 128, 8192, true
	k.Index = tui.IndexKnobs{NoKVEvents: true, TTLSecs: 30, Decay: 0.5, Routers: 4, Sync: true, SyncDelayMS: 1}
	replaysThePoint(t, sim, k)
}

// On another model and GPU the command carries what they bring — the model's own context
// length (Qwen3-32B: 40,960, so the toolagent's longest prompts are rejected, as the explorer
// counts them) and a dense layout in its own words — and nothing a bare replay runs anyway.
func TestExplorerCopyCommandOnAnotherModel(t *testing.T) {
	exp, sim := seedSim(t, 2000)
	k := sim.Initial()
	k.Deployment.Model, k.Deployment.GPU, k.Deployment.Layout, k.Deployment.Replicas = "Qwen/Qwen3-32B", "h100_sxm", "tp2", 16
	sets, err := sim.ReplaySets(k)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"replicas=16", "layout=tp2", "model_name=Qwen/Qwen3-32B", "hardware_sku=h100_sxm", "context_length=40960"}
	if fmt.Sprint(sets) != fmt.Sprint(want) {
		t.Fatalf("sets %q, want %q", sets, want)
	}
	long := 0 // counted from the trace itself
	for _, r := range exp.Trace.First(2000).Requests {
		if r.InputLength+r.OutputLength > 40960 {
			long++
		}
	}
	shown := replaysThePoint(t, sim, k)
	if long != 19 || shown.Metrics.Rejected != long || shown.Metrics.Completed != 2000-long ||
		!strings.HasPrefix(shown.Metrics.RejectedWhy, "input_length + output_length exceeds context_length 40960 (first: builtin:toolagent:") {
		t.Fatalf("%d served, %d rejected (%s); the trace has %d (want 19) longer than 40,960 tokens",
			shown.Metrics.Completed, shown.Metrics.Rejected, shown.Metrics.RejectedWhy, long)
	}
}

// A layout at another precision than the checkpoint's carries it as quantization.
func TestExplorerCopyCommandAtAnotherPrecision(t *testing.T) {
	_, sim := seedSim(t, 300)
	k := sim.Initial()
	k.Deployment.Layout = "tp2·ep2 nvfp4"
	sets, err := sim.ReplaySets(k)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"layout=tp2·ep2", "quantization=nvfp4"}; fmt.Sprint(sets) != fmt.Sprint(want) {
		t.Fatalf("sets %q, want %q", sets, want)
	}
	replaysThePoint(t, sim, k)
}

// seedSim is the explorer's simulator on the seed experiment's first requests.
func seedSim(t *testing.T, requests int) (*config.Experiment, *backend.Sim) {
	t.Helper()
	exp, err := config.NewExperiment(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	sim, err := backend.NewSim(exp, requests)
	if err != nil {
		t.Fatal(err)
	}
	return exp, sim
}

// replaysThePoint runs the replay command the explorer copies for k, as a shell reads it,
// and checks it gives the explorer's figures; it returns the explorer's result.
func replaysThePoint(t *testing.T, sim *backend.Sim, k tui.Knobs) tui.Result {
	t.Helper()
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
	return shown
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
