package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/engine"
)

// splitSets run the seed's eight TEP4 workers as prefill 3 + decode 5 (or prefill × p +
// decode × 8−p) at the KV router's default point.
func splitSets(prefill int) []string {
	shape := func(n int) string { return "{tp: 4, moe_ep: 4, replicas: " + string(rune('0'+n)) + "}" }
	return []string{"--set", "deployment_mode=disagg",
		"--set", "parallel_configs=[{prefill: " + shape(prefill) + ", decode: " + shape(8-prefill) + "}]",
		"--set", "prefill_max_num_seqs=512", "--set", "decode_max_num_batched_tokens=16384", "--set", "decode_max_num_seqs=512"}
}

// A disaggregated replay's JSON carries its pools and handoffs and reads back unchanged; its
// report.html has the pools' section and labels the heatmaps' rows by pool; `compare` of two
// splits lists every per-pool figure; an aggregated replay's JSON has none of them.
func TestDisaggReplayJSONReportAndCompare(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "p3"), filepath.Join(dir, "p4")
	for _, run := range []struct {
		dir     string
		prefill int
	}{{a, 3}, {b, 4}} {
		args := append([]string{"replay", "--requests", "300", "--out", run.dir}, splitSets(run.prefill)...)
		if _, stderr, code := execute(args...); code != 0 {
			t.Fatalf("replay: %s", stderr)
		}
	}
	data, err := os.ReadFile(filepath.Join(a, "replay.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s engine.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	d := s.Disagg
	if d == nil || d.Prefill.Workers != 3 || d.Decode.Workers != 5 || d.P95TransferMS < d.MeanTransferMS || d.PrefillTTFTShare <= 0 || d.PrefillTTFTShare >= 1 {
		t.Fatalf("replay.json's disagg: %+v", d)
	}
	again, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var back engine.Summary
	if err := json.Unmarshal(again, &back); err != nil || !reflect.DeepEqual(back, s) {
		t.Fatalf("the summary does not survive a round trip (%v):\n%+v\n%+v", err, back.Disagg, s.Disagg)
	}
	recs, err := os.ReadFile(filepath.Join(a, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(recs), `"handoff":{"prefill_worker":`); n != 300 {
		t.Errorf("%d of 300 request records name their handoff", n)
	}

	page := checkHTMLReport(t, filepath.Join(a, "report.html"), "replay: prefix-hit ratio per worker")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`<h2[^>]*>Disaggregated pools</h2>`),
		regexp.MustCompile(`<td[^>]*>prefill</td>\s*<td[^>]*>3</td>`),
		regexp.MustCompile(`<td[^>]*>decode</td>\s*<td[^>]*>5</td>`),
		regexp.MustCompile(`mean \d+\.\d ms, p95 \d+\.\d ms; \d+\.\d GB`),
		regexp.MustCompile(`>p2<`), regexp.MustCompile(`>d4<`),
	} {
		if !want.MatchString(page) {
			t.Errorf("replay report.html lacks %s", want)
		}
	}

	stdout, stderr, code := execute("compare", a, b)
	if code != 0 {
		t.Fatalf("compare: %s", stderr)
	}
	for _, key := range []string{"disagg.prefill.workers", "disagg.decode.workers", "disagg.prefill.prefix_hit_ratio", "disagg.decode.peak_block_share",
		"disagg.prefill.request_imbalance", "disagg.mean_transfer_ms", "disagg.p95_transfer_ms", "disagg.prefill_ttft_share", "disagg.transfer_gb"} {
		if !regexp.MustCompile(`(?m)^ *` + regexp.QuoteMeta(key) + ` +[0-9.]+ +[0-9.]+ `).MatchString(stdout) {
			t.Errorf("compare lacks the row %s:\n%s", key, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^ *disagg.prefill.workers +3 +4 +1 +\+33.33 %`).MatchString(stdout) {
		t.Errorf("compare's prefill pool row is not 3 → 4 workers:\n%s", stdout)
	}

	agg := filepath.Join(dir, "agg")
	if _, stderr, code := execute("replay", "--requests", "300", "--out", agg); code != 0 {
		t.Fatalf("replay: %s", stderr)
	}
	for _, f := range []string{"replay.json", "requests.jsonl"} {
		data, err := os.ReadFile(filepath.Join(agg, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "disagg") || strings.Contains(string(data), "handoff") {
			t.Errorf("the aggregated replay's %s has disaggregated figures", f)
		}
	}
}

// A sweep over both deployment modes: report.md and report.html rank the modes and give the
// best split's pools, the same rows in both, and Chromium renders the page without a request.
func TestDisaggSweepReports(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	args := append([]string{"--requests", "300", "--set", "deployment_mode=[agg, disagg]",
		"--set", "parallel_configs=[{tp: 4, moe_ep: 4, replicas: 8}, {prefill: {tp: 4, moe_ep: 4, replicas: 3}, decode: {tp: 4, moe_ep: 4, replicas: 5}}]",
		"--set", "router_mode=kv_router", "--set", "overlap_score_credit=1.0", "--set", "prefill_load_scale=1.0", "--set", "router_temperature=0.0",
		"--set", "validate.enabled=false", "--set", "sweep.algorithm=grid", "--out", dir}, splitSets(3)[6:]...)
	if _, stderr, err := runSweepCmd(t, args...); err != nil {
		t.Fatalf("sweep: %v\n%s", err, stderr)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := checkHTMLReport(t, filepath.Join(dir, "report.html"), "Search convergence")
	mdRow := regexp.MustCompile(`(?m)^\| (disagg|agg|prefill|decode|KV transfer) \| (.*) \|$`)
	rows := mdRow.FindAllStringSubmatch(string(md), -1)
	if len(rows) != 5 {
		t.Fatalf("report.md has %d mode and pool rows, want 2 modes, 2 pools and the transfer:\n%s", len(rows), md)
	}
	for _, want := range []string{"## Best per deployment_mode", "## Disaggregated pools", "| prefill | 3 | peak KV ", "| decode | 5 | peak KV ", "| KV transfer |  |  |  | mean "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{">Best per deployment_mode<", ">Disaggregated pools<"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// Every cell of report.md's rows is a cell of report.html's.
	for _, r := range rows {
		for _, cell := range append([]string{r[1]}, strings.Split(r[2], " | ")...) {
			if cell != "" && !strings.Contains(page, ">"+htmlEscape(cell)+"<") {
				t.Errorf("report.html lacks report.md's cell %q", cell)
			}
		}
	}
	// A page of tables and one chart without validation: less ink than screenshot asks of a
	// page of charts, but not a blank one.
	img := shoot(t, filepath.Join(dir, "report.html"), filepath.Join(t.TempDir(), "disagg-sweep-report.png"))
	if share := inkShare(img); share < 0.02 {
		t.Errorf("the rendered report is %.1f %% ink: it looks empty", 100*share)
	}
}

// htmlEscape is text as html/template writes it inside an element.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "+", "&#43;", "'", "&#39;", `"`, "&#34;").Replace(s)
}
