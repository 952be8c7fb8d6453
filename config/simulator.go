package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"sync"

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

// digestCache is the file that keeps the digests of the builds run lately, one "BUILD-ID
// DIGEST" line each: the user's cache directory's routerlab/simulator-digests, or "" when
// there is none.
func digestCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "routerlab", "simulator-digests")
}

// cachedDigests is how many builds' digests the cache file keeps, the latest.
const cachedDigests = 32

// cachedDigest returns the digest recorded for build id in the cache file at path, or
// computes it and records it there. A build ID is the go command's hash of everything
// that went into the executable (internal/buildid), so a build from other code or data
// never meets another's digest: it computes its own. Without a build ID or a readable
// file the digest is computed; a file that cannot be written costs only the next run the
// same computation.
func cachedDigest(path, id string, compute func() string) string {
	if path == "" || id == "" {
		return compute()
	}
	b, _ := os.ReadFile(path)
	var keep []string
	for l := range strings.Lines(string(b)) {
		l = strings.TrimSuffix(l, "\n")
		k, d, ok := strings.Cut(l, " ")
		if !ok || !digestForm(d) {
			continue
		}
		if k == id {
			return d
		}
		keep = append(keep, l)
	}
	d := compute()
	keep = append(keep[max(0, len(keep)-(cachedDigests-1)):], id+" "+d)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return d
	}
	// Written aside and renamed, so a concurrent reader sees the old file or the new one.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".simulator-digests-*")
	if err != nil {
		return d
	}
	_, werr := tmp.WriteString(strings.Join(keep, "\n") + "\n")
	if err := tmp.Close(); werr != nil || err != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
	return d
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
