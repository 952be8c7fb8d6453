package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/sweep"
)

// replay --out and curve --out refuse a sweep's run directory — finished (its report.html
// is left as it was) or being written (its lock held) — and write a directory of their own.
func TestOutRefusesASweepsDirectory(t *testing.T) {
	finished := t.TempDir()
	page := []byte("the sweep's report")
	for _, name := range []string{sweep.LedgerName, "summary.json", "report.html"} {
		if err := os.WriteFile(filepath.Join(finished, name), page, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	locked := t.TempDir()
	lock, err := sweep.LockDir(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--requests", "20", "--out", finished}, "--out " + finished + ": a sweep's run directory (it holds ledger.jsonl): replay --out would replace its report.html"},
		{[]string{"replay", "--requests", "20", "--out", locked}, "--out " + locked + ": a sweep is writing that directory (it holds " + filepath.Join(locked, sweep.LockName) + ")"},
		{[]string{"curve", "--requests", "20", "--concurrency", "2", "--out", finished}, "curve --out would replace its report.html"},
	} {
		var out, errb bytes.Buffer
		if code := Execute(c.args, strings.NewReader(""), &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errb.String(), c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(finished, "report.html")); !bytes.Equal(b, page) {
		t.Error("the sweep's report.html was overwritten")
	}
	own := filepath.Join(t.TempDir(), "replay")
	var out, errb bytes.Buffer
	if code := Execute([]string{"replay", "--requests", "20", "--out", own}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("replay into a new directory: %s", errb.String())
	}
	if code := Execute([]string{"replay", "--requests", "20", "--out", own}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Errorf("replay into its own earlier directory: %s", errb.String())
	}
}
