package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/routerlab/routerlab/internal/buildid"
	"github.com/routerlab/routerlab/internal/readlimit"
	"github.com/routerlab/routerlab/model"
)

// KeySimulator is the fingerprint key of the simulator digest: two builds with different
// digests are different experiments, whatever their version strings say.
const KeySimulator = "simulator"

// SimulatorDigest names what this build's simulator does: "sim-" and 16 hex digits of the
// SHA-256 of the embedded data (timing tables, seed experiment) and of the outputs of
// canonical work that takes every result-deciding path — step-time probes of every table
// (probes.go), replays of every model and setting (canonical.go), and the parts packages
// above config add (AddSimulatorPart: sweep's search and validation). A build whose code or
// data changes any result changes its digest (docs/trust.md measures how often, by
// mutation); a version string cannot fake it, because it is computed by running the
// simulator: once per build (digestCache), when an identity is needed (a sweep, a worker,
// --version), never at start-up.
func SimulatorDigest() string { return simulatorDigest() }

var simulatorDigest = sync.OnceValue(func() string {
	partsMu.Lock()
	partsSealed = true
	partsMu.Unlock()
	return cachedDigest(digestCache(), buildid.Executable(), computeDigest)
})

// simulatorPart is one named piece of canonical work whose output enters the digest.
type simulatorPart struct {
	name  string
	write func(w io.Writer) error
}

var (
	partsMu     sync.Mutex
	parts       []simulatorPart
	partsSealed bool // the digest has been asked for: a part added now would be missing from it
)

// AddSimulatorPart adds canonical work to the simulator digest: write runs it and writes its
// results to w (an error is written too, and ends that part). Packages above config, which
// config cannot import, call it from an init function, so the digest of a binary covers
// every result-deciding package it links. Adding a part after the digest was first asked
// for is a programming error and panics.
func AddSimulatorPart(name string, write func(w io.Writer) error) {
	partsMu.Lock()
	defer partsMu.Unlock()
	if partsSealed {
		panic("config: AddSimulatorPart(" + name + ") after SimulatorDigest")
	}
	parts = append(parts, simulatorPart{name, write})
}

// computeDigest runs what SimulatorDigest names; docs/trust.md states its CPU cost
// (BenchmarkSimulatorDigest).
func computeDigest() string {
	h := sha256.New()
	for _, t := range model.EmbeddedTableDigests() {
		fmt.Fprintln(h, t)
	}
	fmt.Fprintf(h, "seed.yaml sha256:%x\n", sha256.Sum256(seedYAML))
	partsMu.Lock()
	all := append([]simulatorPart{{"step probes", stepProbes}, {"replays", canonicalReplays}}, parts...)
	partsMu.Unlock()
	slices.SortStableFunc(all[2:], func(a, b simulatorPart) int { return strings.Compare(a.name, b.name) })
	for _, p := range all {
		fmt.Fprintln(h, "part", p.name)
		if err := p.write(h); err != nil {
			// Deterministic and distinct: a build that cannot run a part matches no other.
			fmt.Fprintln(h, "error:", err)
		}
	}
	return "sim-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// digestCache is the directory that keeps the digests of the builds run lately, a file
// per build named by its build ID: the user's cache directory's routerlab/simulator, or ""
// when there is none.
func digestCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "routerlab", "simulator")
}

// cachedDigests is how many builds' digests the cache keeps: those used last.
const cachedDigests = 256

// cachedDigest returns the digest recorded for build id in the cache directory dir, or
// computes it and records it there. A build ID is the go command's hash of everything that
// went into the executable (internal/buildid), so a build from other code or data never
// meets another's digest: it computes its own. A file per build, written aside and
// renamed, lets processes of many builds (a test run's binaries) share the directory
// without losing one another's entries. Without a build ID or a readable entry the digest
// is computed; an entry not of a digest's form (digestForm) is the cache's own damage, so it
// is dropped and written anew; an unwritable directory costs only the next run the same
// computation.
func cachedDigest(dir, id string, compute func() string) string {
	if dir == "" || id == "" {
		return compute()
	}
	name := filepath.Join(dir, strings.ReplaceAll(id, "/", "_"))
	if b, err := readlimit.ReadFile(name, 4<<10, "a cached simulator digest"); err == nil {
		if d := strings.TrimSuffix(string(b), "\n"); digestForm(d) {
			now := time.Now()
			os.Chtimes(name, now, now) // used last: kept longest
			return d
		}
	}
	d := compute()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return d
	}
	tmp, err := os.CreateTemp(dir, ".new-*")
	if err != nil {
		return d
	}
	_, werr := tmp.WriteString(d + "\n")
	if err := tmp.Close(); werr != nil || err != nil || os.Rename(tmp.Name(), name) != nil {
		os.Remove(tmp.Name())
		return d
	}
	pruneDigests(dir)
	return d
}

// pruneDigests removes all but the cachedDigests entries of dir used last.
func pruneDigests(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) <= cachedDigests {
		return
	}
	type entry struct {
		name string
		used time.Time
	}
	var es []entry
	for _, e := range ents {
		if info, err := e.Info(); err == nil && !strings.HasPrefix(e.Name(), ".") {
			es = append(es, entry{e.Name(), info.ModTime()})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return b.used.Compare(a.used) })
	for _, e := range es[min(len(es), cachedDigests):] {
		os.Remove(filepath.Join(dir, e.name))
	}
}

// digestForm reports whether d has the form of a simulator digest: "sim-" and 16 lower-case
// hex digits.
func digestForm(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sim-")
	if !ok || len(hexPart) != 16 {
		return false
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
