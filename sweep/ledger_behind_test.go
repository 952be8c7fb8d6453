package sweep

import (
	"os"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

// TestLedgerRewriteBehind: appends made while a rewrite behind runs follow the rewritten
// evaluations in their order, as after a rewrite that waited; a failed rewrite behind is the
// error of the next append and of wait.
func TestLedgerRewriteBehind(t *testing.T) {
	dir := t.TempDir()
	h := ledgerHeader{Ledger: ledgerMagic, Experiment: config.Fingerprint{{Key: "k", Value: "v"}}}
	l, _, _, err := openLedger(dir, h, false)
	if err != nil {
		t.Fatal(err)
	}
	ev := func(key string) Evaluation {
		return Evaluation{Key: key, Seeds: []uint64{1}, Runs: []engine.Summary{{RequestsCompleted: 1}}}
	}
	l.rewriteBehind([]Evaluation{ev("a"), ev("b")})
	for _, k := range []string{"c", "d"} {
		e := ev(k)
		if err := l.append(&e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.wait(); err != nil {
		t.Fatal(err)
	}
	if n := l.saved(); n != 4 {
		t.Errorf("saved %d evaluations, want 4", n)
	}
	_, evals, err := readLedger(l.path, mustRead(t, l.path))
	if err != nil {
		t.Fatal(err)
	}
	var keys string
	for _, e := range evals {
		keys += e.Key
	}
	if keys != "abcd" {
		t.Errorf("ledger holds %q, want abcd", keys)
	}

	if err := os.RemoveAll(dir); err != nil { // the next rewrite cannot create its file
		t.Fatal(err)
	}
	l.rewriteBehind(evals)
	e := ev("e")
	if err := l.wait(); err == nil {
		t.Error("wait after a failed rewrite behind: no error")
	}
	if err := l.append(&e); err == nil {
		t.Error("append after a failed rewrite behind: no error")
	}
	l.close()
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
