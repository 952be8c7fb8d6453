package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The planner example end to end: the replay's JSON carries the fleet's account and its
// report draws the replicas timeline; twice the same run gives the same bytes.
func TestReplayWithPlanner(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--config", "../examples/planner-sla.yaml", "--set", "startup_time=30",
		"--set", "worker_failures=[{at_s: 60, worker: 0}]", "--set", "migration_limit=1"}
	a := replayJSONOut(t, append(args, "--requests", "3000")...)
	b := replayJSONOut(t, append(args, "--requests", "3000")...)
	if a != b {
		t.Fatal("two replays of the planner example differ")
	}
	var rep struct {
		Fleet struct {
			GPUHours      float64 `json:"gpu_hours"`
			ScalingEvents int     `json:"scaling_events"`
			Failures      int     `json:"failures"`
			Migrated      int     `json:"requests_migrated"`
			Timeline      []struct {
				Serving int `json:"serving"`
			} `json:"timeline"`
		} `json:"fleet"`
	}
	if err := json.Unmarshal([]byte(a), &rep); err != nil {
		t.Fatal(err)
	}
	f := rep.Fleet
	if f.GPUHours <= 0 || f.ScalingEvents == 0 || f.Failures != 1 || f.Migrated == 0 || len(f.Timeline) < 2 {
		t.Fatalf("fleet account %+v", f)
	}
	if _, _, err := runCmd(t, newReplayCmd(), append(args, "--requests", "1000", "--out", dir)...); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Replicas", "TTFT of each minute", "GPU-hours"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
