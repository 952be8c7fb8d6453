package cli

import (
	"strings"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/model"
)

// --version names the build: version, commit line, simulator digest and every embedded table
// with its SHA-256.
func TestVersion(t *testing.T) {
	var out, stderr strings.Builder
	if code := Execute([]string{"--version"}, strings.NewReader(""), &out, &stderr); code != 0 {
		t.Fatalf("--version: status %d: %s", code, stderr.String())
	}
	want := []string{"routerlab " + config.Version() + "\n", "\ncommit    ", "\nsimulator " + config.SimulatorDigest() + "\n"}
	for _, tb := range model.EmbeddedTableDigests() {
		want = append(want, "\n  "+tb+"\n")
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("--version lacks %q:\n%s", w, out.String())
		}
	}
	if len(model.EmbeddedTableDigests()) == 0 {
		t.Error("no embedded tables listed")
	}
}
