package config

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/routerlab/routerlab/internal/buildid"
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

// The digest's canonical work is deterministic (else the digest would differ between
// identical builds), and every replay case runs to its report: a case that errors names
// the build by its error and no longer takes the path it is there for.
func TestCanonicalWorkDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the digest's canonical work: seconds, and many times that under -race")
	}
	for _, part := range []struct {
		name  string
		write func(io.Writer) error
	}{{"step probes", stepProbes}, {"replays", canonicalReplays}} {
		var b1, b2 bytes.Buffer
		if err := part.write(&b1); err != nil {
			t.Fatalf("%s: %v", part.name, err)
		}
		if err := part.write(&b2); err != nil {
			t.Fatalf("%s: %v", part.name, err)
		}
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Errorf("%s: two runs in one process write differently", part.name)
		}
		if part.name == "replays" {
			for i, line := range strings.Split(b1.String(), "\n") {
				if strings.HasPrefix(line, "error:") {
					t.Errorf("replay case %d: %s", i, line)
				}
			}
		}
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

// The digest a process reports is the one its simulator computes, whether it came from the
// cache file or not: a stale or planted entry for this build would show here.
func TestSimulatorDigestIsComputed(t *testing.T) {
	if got, want := SimulatorDigest(), computeDigest(); got != want {
		t.Fatalf("SimulatorDigest() = %s, the simulator computes %s", got, want)
	}
}

// The cache keeps one digest per build ID: a build finds its own without computing, another
// build (or no build ID) computes its own, a malformed entry is not believed, the directory
// keeps the cachedDigests builds used last, and an unwritable place only costs computing.
func TestCachedDigest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "routerlab", "simulator")
	runs := 0
	compute := func(d string) func() string { return func() string { runs++; return d } }
	if d := cachedDigest(dir, "a/1", compute("sim-00000000000000aa")); d != "sim-00000000000000aa" || runs != 1 {
		t.Fatalf("first run: %s after %d computations", d, runs)
	}
	if d := cachedDigest(dir, "a/1", compute("sim-ffffffffffffffff")); d != "sim-00000000000000aa" || runs != 1 {
		t.Fatalf("second run of build a/1: %s after %d computations, want the recorded digest without computing", d, runs)
	}
	if d := cachedDigest(dir, "b/1", compute("sim-00000000000000bb")); d != "sim-00000000000000bb" || runs != 2 {
		t.Fatalf("build b/1: %s after %d computations, want its own", d, runs)
	}
	if d := cachedDigest(dir, "", compute("sim-00000000000000cc")); d != "sim-00000000000000cc" || runs != 3 {
		t.Fatalf("no build ID: %s after %d computations", d, runs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b_1")); err != nil || string(b) != "sim-00000000000000bb\n" {
		t.Fatalf("entry of b/1: %q, %v", b, err)
	}
	// A malformed digest is not believed; the build computes and records its own.
	if err := os.WriteFile(filepath.Join(dir, "a_1"), []byte("sim-NOTHEX\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := cachedDigest(dir, "a/1", compute("sim-00000000000000aa")); d != "sim-00000000000000aa" || runs != 4 {
		t.Fatalf("malformed entry: %s after %d computations", d, runs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a_1")); string(b) != "sim-00000000000000aa\n" {
		t.Fatalf("entry of a/1 after a malformed one: %q", b)
	}
	// Older entries go first; a hit counts as a use.
	old := time.Now().Add(-time.Hour)
	for i := range cachedDigests {
		name := filepath.Join(dir, fmt.Sprintf("old_%d", i))
		if err := os.WriteFile(name, []byte("sim-0000000000000001\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(name, old, old)
	}
	for _, n := range []string{"a_1", "b_1"} { // the least recently used, until a/1 runs again
		os.Chtimes(filepath.Join(dir, n), old.Add(-time.Hour), old.Add(-time.Hour))
	}
	cachedDigest(dir, "a/1", compute("sim-ffffffffffffffff")) // a hit: a/1 is now the newest
	cachedDigest(dir, "c/1", compute("sim-00000000000000cc"))
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != cachedDigests || !slices.Contains(names, "a_1") || !slices.Contains(names, "c_1") || slices.Contains(names, "b_1") {
		t.Fatalf("after pruning: %d entries %v; want %d with a_1 and c_1, without b_1", len(names), names, cachedDigests)
	}
	// A file where the directory should be: nothing recorded, the digest still given.
	blocked := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := cachedDigest(filepath.Join(blocked, "simulator"), "a/1", compute("sim-00000000000000aa")); d != "sim-00000000000000aa" {
		t.Fatalf("unwritable cache: %s", d)
	}
}

// BenchmarkSimulatorDigest is a fresh process's cost of its build's identity: computed
// (the embedded tables hashed, the canonical simulation run) against found in the cache
// file by the executable's build ID.
func BenchmarkSimulatorDigest(b *testing.B) {
	b.Run("computed", func(b *testing.B) {
		for b.Loop() {
			computeDigest()
		}
	})
	dir := b.TempDir()
	cachedDigest(dir, buildid.Executable(), computeDigest)
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			cachedDigest(dir, buildid.Executable(), computeDigest)
		}
	})
}

// BenchmarkCanonicalWork is the digest's canonical work by part: the step probes of every
// table and the canonical replays.
func BenchmarkCanonicalWork(b *testing.B) {
	b.Run("probes", func(b *testing.B) {
		for b.Loop() {
			if err := stepProbes(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replays", func(b *testing.B) {
		for b.Loop() {
			if err := canonicalReplays(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
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

// Every key of the experiment file's key table (knownKeys, with the keys a fingerprint lists
// only when given) is varied by a canonical replay, or is the sweep's (sweep/identity.go
// varies those), or decides no replay's result for a stated reason: a key added without a
// canonical case fails here, before its code can escape the digest.
func TestCanonicalReplaysCoverEveryKey(t *testing.T) {
	full := func(key string) string {
		if f, ok := aliases[key]; ok {
			key = f
		}
		if !strings.Contains(key, ".") {
			key = "search_space." + key
		}
		if key == keyReplicas || key == keyLayout {
			key = "search_space.parallel_configs"
		}
		return key
	}
	varied := map[string]bool{}
	models, err := modelCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(knobCases(), models...) {
		for _, s := range c.sets {
			k, _, _ := strings.Cut(s, "=")
			varied[full(k)] = true
		}
	}
	exempt := map[string]string{
		"search_space.backend":         "one accepted value (vllm)",
		"search_space.deployment_mode": "one accepted value (agg)",
		"search_space.gpu_budget":      "bounds the fleet a file may name, not a replay",
		"workload.trace_format":        "one accepted value (mooncake)",
		"workload.trace_path":          "the trace: its content is the fingerprint's; both generators and the parser are replayed",
		"workload.trace_block_size":    "the trace's block size: built-in traces have one, file traces are parsed with theirs",
		"sweep.parallel_evals":         "results do not depend on it (left out of the fingerprint)",
	}
	sweepKeys := []string{"workload.search_requests", "goal.target", "goal.max_ttft_ms", "goal.max_tpot_ms", "goal.max_e2e_latency_ms",
		"sweep.algorithm", "sweep.max_rounds", "sweep.candidates_per_round", "sweep.seed", "validate.enabled", "validate.requests"}
	for _, k := range sweepKeys {
		exempt[k] = "the sweep's part of the digest (sweep/identity.go)"
	}
	f := Default()
	if err := f.Apply([]string{"quantization=fp8", "api_server_tokenize_batching=parallel", "request_path_us=1", "cudagraph_mode=PIECEWISE",
		"shared_experts_stream_tokens=1", "memory_budget=vllm", "fuse_allreduce_rms=true", "goal.sla.ttft_ms=1"}); err != nil {
		t.Fatal(err)
	}
	keys := knownKeys()
	for _, s := range f.settings(nil, "", f.listText, -1) {
		keys = append(keys, s.Key)
	}
	for _, k := range keys {
		k = full(k)
		if !varied[k] && exempt[k] == "" {
			t.Errorf("%s: no canonical replay varies it (config/canonical.go), and no reason it decides no result", k)
		}
	}
}

// A registered part's output enters the digest, and a part registered after the digest was
// asked for is refused loudly rather than left out of it.
func TestSimulatorParts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the digest's canonical work: seconds, and many times that under -race")
	}
	before := computeDigest()
	partsMu.Lock()
	saved := parts
	parts = append(parts[:len(parts):len(parts)], simulatorPart{"test", func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }})
	partsMu.Unlock()
	with := computeDigest()
	partsMu.Lock()
	parts = saved
	partsMu.Unlock()
	if with == before {
		t.Errorf("a part's output left the digest at %s", before)
	}
	SimulatorDigest()
	defer func() {
		if recover() == nil {
			t.Error("AddSimulatorPart after SimulatorDigest did not panic")
		}
	}()
	AddSimulatorPart("late", func(io.Writer) error { return nil })
}

// The canonical replays that are there for a path reach it: the small caches preempt (retract,
// under SGLang; TensorRT-LLM never does), the
// short context rejects, the snapshot case takes snapshots, the SLA cases count goodput.
func TestCanonicalReplaysReachTheirPaths(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the digest's canonical work: seconds, and many times that under -race")
	}
	ts, err := canonicalTraces()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range knobCases() {
		tr := c.trace(ts)
		sets := strings.Join(c.sets, " ")
		base := replayBase
		if !c.derived {
			base = append(base[:len(base):len(base)], replayBlocks)
		}
		rep, err := replayCaseRun(overriding(base, c.sets), tr, c.edit)
		if err != nil {
			t.Fatalf("%s: %v", sets, err)
		}
		preempted := 0
		for _, w := range rep.Summary.Workers {
			preempted += w.Preemptions
		}
		switch {
		case strings.Contains(sets, "backend=trtllm"): // GUARANTEED_NO_EVICT: a small cache queues, never preempts
			if preempted > 0 {
				t.Errorf("%s: %d preemptions", sets, preempted)
			}
		case c.wide && len(rep.Summary.Workers) <= 64:
			t.Errorf("%s: %d workers, want a wide fleet (over 64)", sets, len(rep.Summary.Workers))
		case strings.Contains(sets, "num_gpu_blocks=") && !c.long && !c.wide && preempted == 0:
			t.Errorf("%s: no preemption", sets)
		case strings.Contains(sets, "context_length=12000") && rep.Summary.RequestsRejected == 0:
			t.Errorf("%s: nothing rejected", sets)
		case strings.Contains(sets, "goal.sla.") && rep.Summary.Goodput == nil:
			t.Errorf("%s: no goodput", sets)
		case c.edit != nil && c.conversation && len(rep.Snapshots) == 0:
			t.Errorf("snapshot case: no snapshots")
		}
	}
}
