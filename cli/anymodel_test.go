package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A sweep over hardware_sku prices each GPU from its own tables and its report names the
// winning GPU and by how much.
func TestSweepOverHardwareSKU(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	_, stderr, err := runSweepCmd(t, "--requests", "200", "--set", "hardware_sku=[h200_sxm, b200_sxm]",
		"--set", "router_mode=[kv_router]", "--set", "overlap_score_credit=[1.0]", "--set", "prefill_load_scale=[1.0]",
		"--set", "router_temperature=[0.0]", "--set", "validate.enabled=false", "--algorithm", "grid", "--out", dir)
	if err != nil {
		t.Fatalf("sweep: %v\n%s", err, stderr)
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`hardware_sku (\w+) won: ([0-9.]+) ms against ([0-9.]+) for (\w+) \((-[0-9.]+) %\)`).FindStringSubmatch(string(report))
	if m == nil || m[1] == m[4] || !strings.Contains("b200_sxm h200_sxm", m[1]) || !strings.Contains("b200_sxm h200_sxm", m[4]) {
		t.Fatalf("report does not name the winning GPU:\n%s", report)
	}
	if m[2] == m[3] {
		t.Fatalf("both GPUs priced alike (%s ms): the tables are not per GPU", m[2])
	}
}

// The replays run offline from the embedded tables: dense layouts without MoE keys,
// each model on its GPU.
func TestReplayAnyModelAnyGPU(t *testing.T) {
	for _, c := range [][]string{
		{"model_name=meta-llama/Llama-3.1-70B", "hardware_sku=h200_sxm", "parallel_configs=[{tp: 4, replicas: 8}]"},
		{"model_name=Qwen/Qwen3-32B", "hardware_sku=h100_sxm", "parallel_configs=[{tp: 2, replicas: 8}]"},
		{"model_name=MiniMaxAI/MiniMax-M2.5", "hardware_sku=h200_sxm", "parallel_configs=[{tp: 4, replicas: 8}]"},
		{"model_name=openai/gpt-oss-120b", "hardware_sku=b200_sxm", "parallel_configs=[{tp: 1, replicas: 8}]"},
		{"model_name=moonshotai/Kimi-K2.5", "hardware_sku=h200_sxm", "parallel_configs=[{tp: 8, replicas: 4}]"},
	} {
		args := []string{"--requests", "100"}
		for _, s := range c {
			args = append(args, "--set", s)
		}
		out, stderr, err := runCmd(t, newReplayCmd(), args...)
		if err != nil || !strings.Contains(out, "TTFT") {
			t.Fatalf("%v: %v\n%s\n%s", c, err, out, stderr)
		}
	}
	_, _, err := runCmd(t, newReplayCmd(), "--requests", "10", "--set", "model_name=meta-llama/Llama-3.1-70B", "--set", "hardware_sku=h200_sxm",
		"--set", "parallel_configs=[{tp: 4, moe_ep: 4}]")
	if err == nil || !strings.Contains(err.Error(), "no step-time table") || !strings.Contains(err.Error(), "model list") {
		t.Fatalf("a dense model with expert parallelism: %v", err)
	}
	// Kimi-K2.5 is embedded at TP 8 on H200 (its INT4 checkpoint): TP 4 names what there is.
	_, _, err = runCmd(t, newReplayCmd(), "--requests", "10", "--set", "model_name=moonshotai/Kimi-K2.5", "--set", "hardware_sku=h200_sxm",
		"--set", "parallel_configs=[{tp: 4, moe_tp: 4, replicas: 8}]")
	if err == nil || !strings.Contains(err.Error(), "no step-time table") || !strings.Contains(err.Error(), "tp8-adp1-moetp8-moeep1") {
		t.Fatalf("Kimi-K2.5 at an unembedded layout: %v", err)
	}
}
