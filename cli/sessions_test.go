package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What trace synth writes as sessions, trace subset writes back byte for byte (it reads the
// file's format and writes it in that format); a session replay runs with affinity on.
func TestSynthSessionsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"agentic.jsonl", []string{"--agentic", "--sessions", "20", "--turns", "4"}},
		{"dag.jsonl", []string{"--agentic", "--sessions", "20", "--turns", "4", "--trace-format", "agentic_mooncake"}},
		{"toolagent.jsonl", []string{"--profile", "toolagent-sessions", "--requests", "300"}},
	} {
		path := filepath.Join(dir, c.name)
		if _, errOut, code := execute(append([]string{"trace", "synth", "--out", path}, c.args...)...); code != 0 {
			t.Fatalf("%s: %s", c.name, errOut)
		}
		back := filepath.Join(dir, "back-"+c.name)
		if _, errOut, code := execute("trace", "subset", "--first", "100000", path, "--out", back); code != 0 {
			t.Fatalf("%s: %s", c.name, errOut)
		}
		a, _ := os.ReadFile(path)
		b, _ := os.ReadFile(back)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("%s: subset of the synthesized file differs (%d and %d bytes)", c.name, len(a), len(b))
		}
	}
	if _, errOut, code := execute("trace", "synth", "--agentic", "--requests", "5"); code == 0 || !strings.Contains(errOut, "--requests: not with --agentic") {
		t.Fatalf("--requests with --agentic: %d %s", code, errOut)
	}
	if _, errOut, code := execute("trace", "synth", "--turns", "5"); code == 0 || !strings.Contains(errOut, "--turns: only with --agentic") {
		t.Fatalf("--turns without --agentic: %d %s", code, errOut)
	}
	out, errOut, code := execute("replay", "--trace", filepath.Join(dir, "agentic.jsonl"), "--set", "router_session_affinity_ttl_secs=60", "--format", "json")
	if code != 0 || !strings.Contains(out, `"requests_completed": 80`) {
		t.Fatalf("session replay with affinity: %d %s\n%s", code, errOut, out)
	}
}
