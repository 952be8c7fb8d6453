package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/sweep"
)

func runSweepCmd(t *testing.T, args ...string) (string, string, error) {
	return runCmd(t, newSweepCmd(), args...)
}

func TestSweepCommandWritesOutputsAndResumes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"--requests", "60", "--set", "router_temperature=[0.0]", "--set", "prefill_load_scale=[1.0, 8.0]",
		"--set", "overlap_score_credit=[0.0, 1.0]", "--set", "validate.requests=80",
		"--algorithm", "grid", "--seed", "3", "--parallel", "2", "--out", dir}
	stdout, stderr, err := runSweepCmd(t, args...)
	if err != nil {
		t.Fatalf("sweep: %v\n%s", err, stderr)
	}
	for _, want := range []string{"algorithm: grid, seed 3", "5 of 5 canonical configurations", "## Validation on 80 requests", "5 evaluations (0 from the ledger)",
		"SLO met | goodput req/s |", "SLO: TTFT ≤ 2000 ms, TPOT ≤ 30 ms for 90 % of requests (the default SLO; goal.sla sets another)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if n := strings.Count(stderr, "sweep round"); n != 5 {
		t.Errorf("%d progress lines for the search, want one per evaluation (5):\n%s", n, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var loose map[string]any
	if err := json.Unmarshal(data, &loose); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"experiment", "best", "evaluations", "validation", "search_requests"} {
		if _, ok := loose[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	var sum sweep.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Evaluations != 5 || sum.SearchRequests != 60 {
		t.Errorf("summary: %d evaluations on %d requests, want 5 on 60", sum.Evaluations, sum.SearchRequests)
	}
	if len(sum.Validation) != 3 || sum.Validation[0].Name != "round_robin" || sum.Validation[1].Name != "default_kv" || sum.Validation[2].Name != "best" {
		t.Fatalf("validation entries %+v", sum.Validation)
	}
	for _, v := range sum.Validation {
		if v.Metrics.RequestsCompleted != 80 || v.Metrics.MeanE2EMS <= 0 {
			t.Errorf("validation %s: %d requests, mean e2e %.1f ms; want 80 and a latency", v.Name, v.Metrics.RequestsCompleted, v.Metrics.MeanE2EMS)
		}
	}
	for _, name := range []string{"ledger.jsonl", "report.md", "evaluations.csv"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	if v, _ := sum.Experiment.Get("search_space.parallel_configs"); v != "tp4-dp1-moetp1-ep4-x8" {
		t.Errorf("summary.json experiment names replicas and layout as %q", v)
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"## Experiment", "| workload | trace_path=builtin:toolagent; ", "; replay_concurrency=32; ",
		"parallel_configs=tp4-dp1-moetp1-ep4-x8; ", "| sweep | algorithm=grid; max_rounds=6; candidates_per_round=10; seed=3 |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}

	if _, _, err := runSweepCmd(t, args...); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("second sweep into the same --out: error %v, want a hint at --resume", err)
	}
	stdout, _, err = runSweepCmd(t, append(args, "--resume")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "5 evaluations (5 from the ledger)") {
		t.Errorf("resumed sweep simulated again:\n%s", stdout)
	}
	changed := append(args, "--resume", "--set", "workload.replay_concurrency=8", "--set", "parallel_configs=[{tp: 4, moe_ep: 4, replicas: 4}]",
		"--trace", "builtin:conversation", "--set", "async_scheduling=true")
	_, _, err = runSweepCmd(t, changed...)
	for _, want := range []string{"different experiment", "workload.replay_concurrency: 32 → 8",
		"search_space.parallel_configs: tp4-dp1-moetp1-ep4-x8 → tp4-dp1-moetp1-ep4-x4", "workload.trace_path: builtin:toolagent → builtin:conversation",
		"search_space.async_scheduling: false → true"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume of a changed experiment: error %v, want it to list %q", err, want)
		}
	}
}

func TestSweepCommandRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--algorithm", "annealing", "--out", t.TempDir()}, "sweep.algorithm"},
		{[]string{"--resume"}, "--resume needs --out"},
		{[]string{"--set", "router_mode=[kv_router, carrier_pigeon]", "--out", t.TempDir()}, "router_mode"},
	} {
		_, _, err := runSweepCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.want)
		}
	}
}
