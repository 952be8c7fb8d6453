package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/trace"
)

// overLongTrace writes the first 400 built-in requests with lines 6, 78 and 251 made longer
// than the seed's 131,072-token context.
func overLongTrace(t *testing.T) string {
	t.Helper()
	tr, err := trace.Synthesize("toolagent", 1, 400)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{5, 77, 250} {
		r := &tr.Requests[i]
		r.InputLength = 140000
		r.HashIDs = make([]int64, (r.InputLength+trace.DefaultBlockSize-1)/trace.DefaultBlockSize)
		for j := range r.HashIDs {
			r.HashIDs[j] = int64(1_000_000*i + j)
		}
	}
	path := filepath.Join(t.TempDir(), "long.jsonl")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := trace.Write(fh, tr.Requests); err != nil {
		t.Fatal(err)
	}
	return path
}

// A trace with requests longer than the context replays and sweeps to completion, counting
// them as vLLM would reject them; --strict makes the first one an error naming its line.
func TestOverLongRequestsAreRejectedAndCounted(t *testing.T) {
	path := overLongTrace(t)
	out, _, err := runCmd(t, newReplayCmd(), "--trace", path, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	rej, _ := js["rejections"].([]any)
	if js["requests_rejected"] != 3.0 || js["requests_completed"] != 397.0 || len(rej) != 1 ||
		!strings.Contains(out, `"first": "`+path+`:6"`) || !strings.Contains(out, "exceeds context_length 131072") {
		t.Errorf("replay JSON: want 397 completed, 3 rejected with the reason and first line 6:\n%s", out)
	}
	table, _, err := runCmd(t, newReplayCmd(), "--trace", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "rejected 3 requests before routing: input_length + output_length exceeds context_length 131072 (first: "+path+":6)") {
		t.Errorf("replay table does not report the rejections:\n%s", table)
	}

	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"--trace", path, "--requests", "200", "--algorithm", "grid", "--set", "router_temperature=[0.0]",
		"--set", "overlap_score_credit=[1.0]", "--set", "prefill_load_scale=[1.0, 8.0]", "--out", dir}
	if _, stderr, err := runSweepCmd(t, args...); err != nil {
		t.Fatalf("sweep: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum sweep.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Best.Metrics.RequestsRejected != 2 || len(sum.Validation) != 3 || sum.Validation[2].Metrics.RequestsRejected != 3 {
		t.Errorf("summary.json: search rejected %d (want 2 of 200), validation %+v (want 3 of 400)", sum.Best.Metrics.RequestsRejected, sum.Validation)
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"3 of the 400 validation requests, input_length + output_length exceeds context_length 131072 (first: " + path + ":6)",
		"2 of the 200 search requests"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}

	for _, cmd := range [][]string{{"replay", "--trace", path, "--strict"}, {"sweep", "--trace", path, "--set", "workload.strict=true", "--out", filepath.Join(t.TempDir(), "s")}} {
		c := newReplayCmd()
		if cmd[0] == "sweep" {
			c = newSweepCmd()
		}
		_, _, err := runCmd(t, c, cmd[1:]...)
		if err == nil || !strings.Contains(err.Error(), path+":6: input_length 140000 + output_length") {
			t.Errorf("%v: error %v, want one naming line 6", cmd, err)
		}
	}
	// Rejections are checked on the whole trace before the first evaluation: a sweep whose
	// validation set would be all rejected fails before searching.
	_, stderr, err := runSweepCmd(t, "--set", "context_length=100", "--requests", "50", "--out", filepath.Join(t.TempDir(), "s"))
	if err == nil || !strings.Contains(err.Error(), "all 50 requests rejected") || strings.Contains(stderr, "sweep round") {
		t.Errorf("all-rejected sweep: error %v after\n%s\nwant a refusal before any evaluation", err, stderr)
	}
}
