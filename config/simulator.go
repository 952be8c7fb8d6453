package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/routerlab/routerlab/internal/readlimit"
	"hash"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/internal/buildid"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// KeySimulator is the fingerprint key of the simulator digest: two builds with different
// digests are different experiments, whatever their version strings say.
const KeySimulator = "simulator"

// SimulatorDigest names what this build's simulator does: "sim-" and 16 hex digits of the
// SHA-256 of the embedded timing tables' digests and of the reports of a small canonical
// simulation. A build whose code or data changes any result changes its digest; a version
// string cannot fake it, because it is computed by running the simulator: once per build
// (digestCache), on first use.
func SimulatorDigest() string { return simulatorDigest() }

var simulatorDigest = sync.OnceValue(func() string {
	return cachedDigest(digestCache(), buildid.Executable(), computeDigest)
})

// computeDigest runs what SimulatorDigest names: about 50 ms of CPU in a fresh process
// (hashing 4 MB of embedded tables, seven replays and the two tables they add), a third of
// a short replay's.
func computeDigest() string {
	h := sha256.New()
	for _, t := range model.EmbeddedTableDigests() {
		fmt.Fprintln(h, t)
	}
	if err := canonicalSimulation(h); err != nil {
		// Deterministic and distinct: a build that cannot simulate matches no other.
		fmt.Fprintln(h, "error:", err)
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

// canonicalSimulation writes into h the reports of replays that together exercise what
// decides a sweep's numbers: both synthetic trace generators, every router mode, both KV
// dtypes, both float32 matmul precisions, both timing references, async scheduling, open and
// closed loop, a KV cache small enough to preempt, and the KV-capacity arithmetic of the
// seed worker.
func canonicalSimulation(h hash.Hash) error {
	agent, err := trace.Synthesize("toolagent", 1, 80)
	if err != nil {
		return err
	}
	conv, err := trace.Synthesize("conversation", 1, 40)
	if err != nil {
		return err
	}
	seed := model.SeedDeployment()
	w, err := model.NewWorker(seed)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(h).Encode(w.Capacity()); err != nil {
		return err
	}
	type run struct {
		tr     *trace.Trace
		mode   router.Mode
		credit float64
		temp   float64
		edit   func(*model.Deployment)
		inLoop int // replay concurrency; 0: open loop at 4× speed
	}
	runs := []run{
		{agent, router.ModeKV, 1, 0, func(*model.Deployment) {}, 8},
		{agent, router.ModeRoundRobin, 1, 0, func(d *model.Deployment) { d.KVCacheDtype = model.KVBF16 }, 8},
		{agent, router.ModeKV, 0.5, 0.5, func(d *model.Deployment) { d.Float32MatmulPrecision = model.PrecisionHigh }, 8},
		{agent, router.ModeRandom, 1, 0, func(d *model.Deployment) { d.AsyncScheduling = true }, 8},
		{conv, router.ModeLeastLoaded, 1, 0, func(d *model.Deployment) { d.NumGPUBlocks = 256 }, 16}, // preempts
		{conv, router.ModeKV, 1, 0, func(d *model.Deployment) { d.MoETP, d.MoEEP = 4, 1 }, 0},
		{agent, router.ModeKV, 1, 0, func(d *model.Deployment) { d.TimingReference = model.ReferenceDynosim }, 8},
	}
	timers := map[model.Deployment]*model.Worker{unresolved(seed): w}
	for i, r := range runs {
		d := seed
		// A cache far smaller than the derived one (no run comes near it) keeps the block
		// pools, and so the start-up cost, small.
		d.NumGPUBlocks = 4096
		r.edit(&d)
		key := unresolved(d)
		key.AsyncScheduling = false // a setting of the engine, not of the step timer
		m, ok := timers[key]
		if !ok {
			if m, err = model.NewWorker(d); err != nil {
				return err
			}
			timers[key] = m
		}
		rc := router.DefaultConfig()
		rc.Mode, rc.OverlapScoreCredit, rc.Temperature = r.mode, r.credit, r.temp
		cfg := engine.Config{Workers: 4, Worker: d, Router: rc, ReplayConcurrency: r.inLoop, ArrivalSpeedupRatio: 4,
			Seed: uint64(i + 1), RecordRequests: true}
		rep, err := engine.Replay(context.Background(), cfg, m, r.tr)
		if err != nil {
			return err
		}
		rep.Summary.WallTimeMS = 0 // the one field that differs between identical runs
		if err := json.NewEncoder(h).Encode(rep); err != nil {
			return err
		}
	}
	return nil
}
