package config

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/trace"
)

// The digest is stable within a build and has its documented form.
func TestSimulatorDigest(t *testing.T) {
	d := SimulatorDigest()
	if !regexp.MustCompile(`^sim-[0-9a-f]{16}$`).MatchString(d) {
		t.Fatalf("SimulatorDigest() = %q, want sim- and 16 hex digits", d)
	}
	if again := SimulatorDigest(); again != d {
		t.Fatalf("digest changed within one build: %s then %s", d, again)
	}
}

// The canonical simulation is deterministic (else the digest would differ between identical
// builds) and its replays run to completion (a run that errors would hash its error).
func TestCanonicalSimulationDeterministic(t *testing.T) {
	h1, h2 := sha256.New(), sha256.New()
	if err := canonicalSimulation(h1); err != nil {
		t.Fatal(err)
	}
	if err := canonicalSimulation(h2); err != nil {
		t.Fatal(err)
	}
	if string(h1.Sum(nil)) != string(h2.Sum(nil)) {
		t.Fatal("two canonical simulations in one process hash differently")
	}
}

// The fingerprint carries the digest right after the version, so --resume with another
// build is refused by name.
func TestFingerprintHasSimulator(t *testing.T) {
	fp := Default().Fingerprint()
	if fp[1].Key != KeySimulator || fp[1].Value != SimulatorDigest() {
		t.Fatalf("fingerprint[1] = %v, want %s=%s", fp[1], KeySimulator, SimulatorDigest())
	}
}

// BenchmarkCanonicalSimulation is the start-up cost of a build's identity.
func BenchmarkCanonicalSimulation(b *testing.B) {
	for b.Loop() {
		if err := canonicalSimulation(sha256.New()); err != nil {
			b.Fatal(err)
		}
	}
}

// The same trace bytes named ./t or t are one experiment; a missing trace names the file and
// the key.
func TestTracePathSpelling(t *testing.T) {
	dir := t.TempDir()
	tr, err := trace.Synthesize("conversation", 1, 50)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := trace.Write(&b, tr.Requests); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	fps := make([]Fingerprint, 2)
	for i, path := range []string{"./t.jsonl", "t.jsonl"} {
		f := Default()
		if err := f.Set("workload.trace_path=" + path); err != nil {
			t.Fatal(err)
		}
		e, err := NewExperiment(f)
		if err != nil {
			t.Fatal(err)
		}
		fps[i] = e.Fingerprint()
	}
	if d := Diff(fps[0], fps[1]); len(d) > 0 {
		t.Errorf("./t.jsonl and t.jsonl differ: %v", d)
	}
	f := Default()
	if err := f.Set("workload.trace_path=gone.jsonl"); err != nil {
		t.Fatal(err)
	}
	if _, err := NewExperiment(f); err == nil || !strings.Contains(err.Error(), ": workload.trace_path: open gone.jsonl: ") {
		t.Errorf("missing trace: %v, want the file and the key named", err)
	}
}

// YAML's NaN, aliases, anchors and tags get messages that say what they are.
func TestYAMLSpecialsNamed(t *testing.T) {
	for text, want := range map[string]string{
		"search_space:\n  router_temperature: .nan\n":                             "x.yaml:2: search_space.router_temperature: .nan is not a finite number",
		"search_space:\n  router_temperature: &t 0.5\n  prefill_load_scale: *t\n": "YAML anchors (&t) are not supported",
		"search_space:\n  router_temperature: [*t]\n":                             "x.yaml:2: (document): YAML aliases (*t) are not supported",
		"search_space:\n  router_temperature: !!float 0.5\n":                      "x.yaml:2: (document): YAML tags (!!float) are not supported",
		"search_space:\n  router_temperature: " + strings.Repeat("[", 40) + "\n":  "x.yaml:2: (document): nested more than 32 levels deep",
	} {
		_, err := Parse([]byte(text), "x.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
