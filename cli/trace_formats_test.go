package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const agenticRows = `{"request_id":"r1","session_id":"s","timestamp":100,"input_length":1024,"output_length":10,"hash_ids":[1,2]}
{"request_id":"r3","session_id":"s","wait_for":["r1","r2"],"delay":10,"tool_wait_ms":1500,"input_length":1536,"output_length":10,"hash_ids":[1,2,3]}
{"request_id":"r2","timestamp":300,"input_length":512,"output_length":10,"hash_ids":[5]}
`

func TestTraceFormatsThroughTheCLI(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ag.jsonl")
	if err := os.WriteFile(path, []byte(agenticRows), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := execute("trace", "stats", path)
	for _, want := range []string{"declared structure  agentic_mooncake rows", "dependency depth    0.33  0    1", "tool waits          1"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("stats (code %d, %s) lacks %q:\n%s", code, errOut, want, out)
		}
	}
	// subset writes the format it read; the cut reads back with its dependency intact.
	sub := filepath.Join(dir, "sub.jsonl")
	if _, errOut, code := execute("trace", "subset", "--first", "3", path, "--out", sub); code != 0 {
		t.Fatal(errOut)
	}
	b, _ := os.ReadFile(sub)
	if !strings.Contains(string(b), `"wait_for": ["r1", "r2"], "tool_wait_ms": 1500}`) {
		t.Fatalf("subset:\n%s", b)
	}
	// mooncake-delta is only read when named; a wrong name is refused.
	if _, errOut, code := execute("trace", "stats", "--trace-format", "mooncake_delta", path); code == 0 || !strings.Contains(errOut, `--trace-format: "mooncake_delta" is not one of auto, mooncake, mooncake-delta`) {
		t.Fatalf("bad format name: %d %s", code, errOut)
	}
	if _, errOut, code := execute("trace", "stats", "--trace-format", "applied_compute_agentic", path); code == 0 || !strings.Contains(errOut, "ag.jsonl:1: request_id: unknown field (an applied_compute_agentic row has") {
		t.Fatalf("rows of another format: %d %s", code, errOut)
	}
	// Dynamo replays an agentic DAG on its own schedule, never under a replay concurrency.
	if _, errOut, code := execute("replay", "--trace", path, "--trace-format", "auto"); code == 0 || !strings.Contains(errOut, "ag.jsonl: replay_concurrency: an agentic_mooncake trace is replayed on its own schedule") {
		t.Fatalf("agentic under a concurrency (code %d):\n%s", code, errOut)
	}
	if _, errOut, code := execute("replay", "--trace", path, "--trace-format", "auto", "--set", "replay_concurrency=0"); code != 0 || errOut != "" {
		t.Fatalf("agentic replay (code %d):\n%s", code, errOut)
	}
}

// Experiments read the format workload.trace_format (or --trace-format) names: mooncake by
// default, as Dynamo's replay does; a delta trace replays its accumulated prompts.
func TestReplayTraceFormat(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.jsonl")
	rows := `{"session_id":"a","timestamp":0,"input_length":1024,"output_length":4,"hash_ids":[1,2]}
{"session_id":"a","delay":50,"input_length":512,"output_length":4,"hash_ids":[3]}
`
	if err := os.WriteFile(path, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	agentic := filepath.Join(dir, "ag.jsonl")
	if err := os.WriteFile(agentic, []byte(agenticRows), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := execute("replay", "--trace", agentic, "--trace-format", "mooncake"); code == 0 || !strings.Contains(errOut, "ag.jsonl:1: request_id: an agentic_mooncake field in a mooncake trace (use --trace-format agentic_mooncake)") {
		t.Fatalf("agentic rows as mooncake: %d %s", code, errOut)
	}
	if _, errOut, code := execute("replay", "--trace", path, "--trace-format", "delta"); code == 0 || !strings.Contains(errOut, `workload.trace_format: unsupported format "delta"`) {
		t.Fatalf("bad name: %d %s", code, errOut)
	}
	prompt := func(format string) int {
		out, errOut, code := execute("replay", "--trace", path, "--trace-format", format, "--format", "json")
		if code != 0 {
			t.Fatalf("%s: %d %s", format, code, errOut)
		}
		sum := 0
		for _, m := range regexp.MustCompile(`"prompt_tokens": (\d+)`).FindAllStringSubmatch(out, -1) {
			n, _ := strconv.Atoi(m[1])
			sum += n
		}
		return sum
	}
	// The workers' prompt tokens: 1,024 + 512 as full prompts; 1,024 + (1,024 + 512) accumulated.
	if a, b := prompt("mooncake"), prompt("mooncake-delta"); a != 1536 || b != 2560 {
		t.Fatalf("mooncake %d, mooncake-delta %d", a, b)
	}
}
