package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replayDir writes a replay directory with the given summary JSON keys and request lines.
func replayDir(t *testing.T, summary string, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	fp := `{"experiment":{"routerlab_version":"test"},`
	if err := os.WriteFile(filepath.Join(dir, ReplayJSON), []byte(fp+summary+"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if lines != nil {
		if err := os.WriteFile(filepath.Join(dir, ReplayRequests), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Duplicate request ids and negative numbers are not a replay's: each is an error naming
// the file, the line or key, and the value.
func TestLoadRefusesWhatNoReplayWrites(t *testing.T) {
	rec := func(id int) string {
		return fmt.Sprintf(`{"id":%d,"worker":0,"arrival_ms":1,"ttft_ms":2,"e2e_latency_ms":3,"input_length":4,"output_length":5}`, id)
	}
	dup := replayDir(t, `"requests_completed":3`, rec(1), rec(2), rec(1))
	if _, err := Load(dup); err == nil || !strings.Contains(err.Error(), "requests.jsonl:3: id: 1 is also the id of line 1") {
		t.Errorf("duplicate id: %v", err)
	}
	neg := replayDir(t, `"requests_completed":-5`)
	if _, err := Load(neg); err == nil || !strings.Contains(err.Error(), "replay.json: requests_completed: -5 is negative") {
		t.Errorf("negative count: %v", err)
	}
	negMS := replayDir(t, `"requests_completed":5,"mean_ttft_ms":-0.5`)
	if _, err := Load(negMS); err == nil || !strings.Contains(err.Error(), "mean_ttft_ms: -0.5 is negative") {
		t.Errorf("negative time: %v", err)
	}
	good := replayDir(t, `"requests_completed":2`, rec(1), rec(2))
	if r, err := Load(good); err != nil || len(r.Requests) != 2 {
		t.Errorf("good replay: %v", err)
	}
}

// /dev/zero, a symlink to it as replay.json or requests.jsonl, and a replay report past
// its limit end in an error naming the limit, without reading them whole.
func TestLoadBoundsEveryFile(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, ReplayJSON)
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", dir} {
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "larger than the 16 MiB limit of a replay report") {
			t.Errorf("%s: %v", p, err)
		}
	}
	big := filepath.Join(t.TempDir(), "big.json")
	fh, _ := os.Create(big)
	fh.Truncate(MaxReplayBytes + 1) // sparse: no disk written
	fh.Close()
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "16 MiB limit") {
		t.Errorf("large file: %v", err)
	}
	reqs := replayDir(t, `"requests_completed":2`)
	if err := os.Symlink("/dev/zero", filepath.Join(reqs, ReplayRequests)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(reqs); err == nil || !strings.Contains(err.Error(), "requests.jsonl:1: a line longer than the 1 MiB limit") {
		t.Errorf("requests.jsonl → /dev/zero: %v", err)
	}
}
