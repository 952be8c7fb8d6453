package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/model"
)

// --version names the build in a few lines: version, commit line, simulator digest and the
// number of embedded tables; `version --tables` lists every table with its SHA-256.
func TestVersion(t *testing.T) {
	short, stderr, code := execute("--version")
	if code != 0 {
		t.Fatalf("--version: status %d: %s", code, stderr)
	}
	tables := model.EmbeddedTableDigests()
	if len(tables) == 0 {
		t.Fatal("no embedded tables listed")
	}
	head := []string{"routerlab " + config.Version() + "\n", "\ncommit    ", "\nsimulator " + config.SimulatorDigest() + "\n"}
	for _, w := range append(head, fmt.Sprintf("\ntables    %d embedded (routerlab version --tables lists them)\n", len(tables))) {
		if !strings.Contains(short, w) {
			t.Errorf("--version lacks %q:\n%s", w, short)
		}
	}
	if n := strings.Count(short, "\n"); n != 5 {
		t.Errorf("--version prints %d lines, want 5:\n%s", n, short)
	}
	if same, _, _ := execute("version"); same != short {
		t.Errorf("version differs from --version:\n%s\n---\n%s", same, short)
	}
	long, stderr, code := execute("version", "--tables")
	if code != 0 {
		t.Fatalf("version --tables: status %d: %s", code, stderr)
	}
	for _, tb := range tables {
		head = append(head, "\n  "+tb+"\n")
	}
	for _, w := range head {
		if !strings.Contains(long, w) {
			t.Errorf("version --tables lacks %q:\n%s", w, long)
		}
	}
}
