package config

import (
	"crypto/sha256"
	"regexp"
	"testing"
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
