package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The acceptance: two replays of the seed, default_kv and the sweep's best (credit 1,
// scale 4), written by replay --out and compared: the differences, the paired bootstrap
// interval and the changed setting are printed, and --fail-if sets the exit status.
func TestCompareTwoReplays(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "default_kv"), filepath.Join(dir, "best")
	if _, stderr, code := execute("replay", "--out", a); code != 0 {
		t.Fatalf("replay: %s", stderr)
	}
	if _, stderr, code := execute("replay", "--out", b, "--set", "prefill_load_scale=4", "--plots", "svg"); code != 0 {
		t.Fatalf("replay: %s", stderr)
	}
	page := checkHTMLReport(t, filepath.Join(b, "report.html"), "TTFT distribution", "TPOT distribution", "e2e latency distribution",
		"replay: active KV blocks per worker", "replay: prefix-hit ratio per worker")
	for _, want := range []string{"Experiment", "search_space.prefill_load_scale", "Workers"} {
		if !strings.Contains(page, want) {
			t.Errorf("replay report.html lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(b, "plots", "cdf-e2e.svg")); err != nil {
		t.Errorf("--plots svg: %v", err)
	}
	html := filepath.Join(dir, "compare.html")
	stdout, stderr, code := execute("compare", a, b, "--html", html, "--fail-if", "mean_e2e_latency_ms>+2%")
	if code != 0 {
		t.Fatalf("compare: status %d\n%s", code, stderr)
	}
	for _, want := range []string{"mean_e2e_latency_ms", "p99_ttft_ms", "prefix_cache_reused_ratio", "request_throughput_req_s",
		"paired per-request differences B − A:", "e2e_latency_ms: mean", "95 % bootstrap interval",
		"settings that differ (A → B):", "search_space.prefill_load_scale: 1 → 4"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	// The paired mean over the same requests is the difference of the runs' means.
	var sa, sb struct {
		E2E float64 `json:"mean_e2e_latency_ms"`
	}
	for _, x := range []struct {
		dir string
		dst any
	}{{a, &sa}, {b, &sb}} {
		data, err := os.ReadFile(filepath.Join(x.dir, "replay.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, x.dst); err != nil {
			t.Fatal(err)
		}
	}
	m := regexp.MustCompile(`e2e_latency_ms: mean ([+-][0-9.]+) ms, 95 % bootstrap interval \[([+-][0-9.]+), ([+-][0-9.]+)\]`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no paired e2e line:\n%s", stdout)
	}
	mean, _ := strconv.ParseFloat(m[1], 64)
	lo, _ := strconv.ParseFloat(m[2], 64)
	hi, _ := strconv.ParseFloat(m[3], 64)
	if math.Abs(mean-(sb.E2E-sa.E2E)) > 0.01 || !(lo <= mean && mean <= hi) {
		t.Errorf("paired mean %v [%v, %v], means differ by %v", mean, lo, hi, sb.E2E-sa.E2E)
	}
	checkHTMLReport(t, html, "TTFT distribution", "e2e latency distribution")
	screenshot(t, filepath.Join(b, "report.html"), filepath.Join(t.TempDir(), "replay-report.png"))
	// --fail-if: a condition that holds gives status 3 and names it; a bad one is an error.
	_, stderr, code = execute("compare", a, b, "--fail-if", "mean_e2e_latency_ms>+50%", "--fail-if", "prefix_cache_reused_ratio>0")
	if code != exitFailIf || !strings.Contains(stderr, "prefix_cache_reused_ratio>0: prefix_cache_reused_ratio changed") ||
		strings.Contains(stderr, "mean_e2e_latency_ms>+50%") {
		t.Errorf("status %d, stderr %q; want 3 naming only the reuse condition", code, stderr)
	}
	if _, stderr, code = execute("compare", a, b, "--fail-if", "mean_e2e>2%"); code != 1 || !strings.Contains(stderr, `no metric "mean_e2e"`) {
		t.Errorf("unknown metric: status %d, %q", code, stderr)
	}
	// A sweep directory and a replay JSON file are runs too.
	js := filepath.Join(dir, "a.json")
	out, _, code := execute("replay", "--format", "json", "--requests", "300")
	if code != 0 || os.WriteFile(js, []byte(out), 0o644) != nil {
		t.Fatal("replay --format json")
	}
	if stdout, stderr, code := execute("compare", js, a); code != 0 || !strings.Contains(stdout, "workload.requests: 300 → 23608") ||
		!strings.Contains(stdout, "no paired interval") {
		t.Errorf("compare JSON file with directory: status %d\n%s%s", code, stdout, stderr)
	}
}
