package cli

import (
	"os"
	"path/filepath"
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
	// A replay says what it does not honour, in one line.
	_, errOut, code = execute("replay", "--trace", path)
	if code != 0 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "holds 2 sessions in agentic_mooncake format; the simulator does not schedule them yet: it ignores their wait_for, delay and tool_wait_ms") {
		t.Fatalf("replay notice (code %d):\n%s", code, errOut)
	}
}
