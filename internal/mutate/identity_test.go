package mutate

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// resultFiles are the files whose code decides a replay's, sweep's or validation's result,
// by package, and how many built mutants the full form takes from each (silicon: `model
// validate`'s). Left out: what only draws or writes results (sweep's reports and ledger,
// trace statistics, the validation's table) and the model
// importer (import.go, derive.go, aic.go, mla.go, experts_touched.go), which runs only at
// `model import`: its output is the embedded tables, whose bytes the digest hashes.
var resultFiles = []struct {
	files []string
	quota int
}{
	{[]string{"model/worker.go", "model/capacity.go", "model/cudagraph.go", "model/fusion.go", "model/reference.go",
		"model/grid.go", "model/deployment.go", "model/table.go"}, 14},
	{[]string{"engine/sim.go", "engine/worker.go", "engine/pool.go", "engine/fast.go", "engine/apiserver.go",
		"engine/report.go", "engine/config.go", "engine/events.go", "engine/hash.go"}, 14},
	{[]string{"router/active.go", "router/cached.go", "router/config.go", "router/index.go", "router/kv.go",
		"router/leastloaded.go", "router/policy.go", "router/random.go", "router/roundrobin.go", "router/router.go"}, 10},
	{[]string{"trace/synth.go", "trace/parse.go", "trace/repeat.go"}, 6},
	{[]string{"config/experiment.go", "config/set.go", "config/parse.go", "config/scalars.go", "config/dimensions.go", "config/file.go"}, 8},
	{[]string{"sweep/gp.go", "sweep/propose.go", "sweep/objective.go", "sweep/validate.go", "sweep/sweep.go",
		"sweep/space.go", "sweep/curve.go"}, 10},
	{[]string{"silicon/silicon.go", "silicon/validate.go", "silicon/benchmark.go", "silicon/runs.go", "silicon/report.go"}, 8},
}

// mutantSeed picks the mutants: 37, or ROUTERLAB_MUTANTS_SEED; a new seed is a new sample.
func mutantSeed() (uint64, error) {
	s := os.Getenv("ROUTERLAB_MUTANTS_SEED")
	if s == "" {
		return 37, nil
	}
	return strconv.ParseUint(s, 10, 64)
}

// sharedExpertsMutant is the change that once kept its digest (issue 37): the default
// shared-experts stream threshold, which only models with shared experts reach, 256 → 128.
var sharedExpertsMutant = Mutant{File: "model/deployment.go", Kind: Nudge, From: "256", To: "128"}

// outcome is what one mutant did to the judge's results and to the build's identity.
type outcome struct {
	m                Mutant
	built            bool
	results, digest  bool   // changed
	resultsNote, idN string // a crash or timeout instead of output
}

// TestMutantsChangeIdentity builds the judge (internal/mutate/judge) from a copy of the
// module once unmutated and once per mutant, and requires every mutant that changes any of
// the judge's results to change the build's simulator digest too: all of them in the short
// form (the shared-experts mutant and three sampled ones, about two minutes on two cores),
// at least 95 % of at least 60 in the full form (ROUTERLAB_MUTANTS=full, about 40
// minutes; ROUTERLAB_MUTANTS_OUT=FILE writes its table, as in docs/trust.md;
// ROUTERLAB_MUTANTS_SEED=N samples other mutants).
func TestMutantsChangeIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the judge once per mutant")
	}
	full := os.Getenv("ROUTERLAB_MUTANTS") == "full"
	seed, err := mutantSeed()
	if err != nil {
		t.Fatalf("ROUTERLAB_MUTANTS_SEED: %v", err)
	}
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "module")
	if err := copyModule(src, root); err != nil {
		t.Fatal(err)
	}
	bin, cache := filepath.Join(t.TempDir(), "judge"), t.TempDir()
	if out, err := build(root, bin); err != nil {
		t.Fatalf("unmutated judge does not build: %v\n%s", err, out)
	}
	baseResults, note := runJudge(bin, "results", cache)
	if note != "" || bytes.Contains(baseResults, []byte(" error: ")) {
		t.Fatalf("unmutated judge results: %s\n%s", note, baseResults)
	}
	baseID, note := runJudge(bin, "identity", cache)
	if note != "" {
		t.Fatalf("unmutated judge identity: %s", note)
	}

	shared, err := locate(root, sharedExpertsMutant)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []outcome
	try := func(m Mutant) bool {
		o := outcome{m: m}
		restore, err := Apply(root, m)
		if err != nil {
			t.Fatal(err)
		}
		_, berr := build(root, bin)
		if err := restore(); err != nil {
			t.Fatal(err)
		}
		if berr != nil {
			return false // does not compile: not a mutant of a build
		}
		o.built = true
		res, rnote := runJudge(bin, "results", cache)
		id, inote := runJudge(bin, "identity", cache)
		o.results, o.resultsNote = rnote != "" || !bytes.Equal(res, baseResults), rnote
		o.digest, o.idN = inote != "" || !bytes.Equal(id, baseID), inote
		outcomes = append(outcomes, o)
		t.Logf("%s: results changed %v %s, identity changed %v %s", m, o.results, rnote, o.digest, inote)
		return true
	}
	try(shared)
	for i, pkg := range resultFiles {
		sites, err := Sites(root, pkg.files)
		if err != nil {
			t.Fatal(err)
		}
		quota := pkg.quota
		if !full {
			quota = 0
			if i == 1 || i == 2 || i == 6 { // one engine, router and silicon mutant beside the shared-experts one
				quota = 1
			}
		}
		built := 0
		for _, m := range Sample(sites, len(sites), seed+uint64(i)) {
			if built == quota {
				break
			}
			if m.File == shared.File && m.Kind == shared.Kind && m.Index == shared.Index {
				continue
			}
			if try(m) {
				built++
			}
		}
	}

	changed, caught := 0, 0
	for _, o := range outcomes {
		if o.results {
			changed++
			if o.digest {
				caught++
			}
		}
	}
	if out := os.Getenv("ROUTERLAB_MUTANTS_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table(outcomes, changed, caught)), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d mutants built, %d change a result, %d of those change the identity", len(outcomes), changed, caught)
	if o := outcomes[0]; !o.results || !o.digest {
		t.Errorf("%s: results changed %v, identity changed %v; want both", o.m, o.results, o.digest)
	}
	if full {
		if len(outcomes) < 60 {
			t.Errorf("%d mutants built, want at least 60", len(outcomes))
		}
		if changed == 0 || float64(caught) < 0.95*float64(changed) {
			t.Errorf("identity changed for %d of %d result-changing mutants, want at least 95 %%", caught, changed)
		}
		return
	}
	for _, o := range outcomes {
		if o.results && !o.digest {
			t.Errorf("%s changes a result but not the identity", o.m)
		}
	}
}

// locate fills in a mutant given by file, kind and texts with its index and line.
func locate(root string, want Mutant) (Mutant, error) {
	sites, err := Sites(root, []string{want.File})
	if err != nil {
		return Mutant{}, err
	}
	for _, m := range sites {
		if m.Kind == want.Kind && m.From == want.From && m.To == want.To {
			return m, nil
		}
	}
	return Mutant{}, fmt.Errorf("no %s %s → %s in %s", want.Kind, want.From, want.To, want.File)
}

// copyModule copies the module's files (not its git data) from src to dst.
func copyModule(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// build compiles the judge of the module at root into bin: one main package per mutant,
// every unchanged package from the go command's cache.
func build(root, bin string) ([]byte, error) {
	cmd := exec.Command("go", "build", "-o", bin, "./internal/mutate/judge")
	cmd.Dir = root
	return cmd.CombinedOutput()
}

// judgeCPU is the CPU time a judge run may take before it counts as looping: the
// unmutated suite takes under 5 s, the digest about 2 s. The judge's own limit (the kernel
// kills it, limitCPU), not a wall-clock one: on a loaded machine a wall-clock limit of two
// minutes once counted a mutant that changes no result as changing one. judgeWall only
// backstops a build that blocks without computing.
const (
	judgeCPU  = 2 * time.Minute
	judgeWall = 30 * time.Minute
)

// runJudge runs one of the judge's commands; a crash, an error or a run past judgeCPU of
// CPU (a mutant may loop) is returned as a note instead of output. The digest cache is the
// test's own (each build has its own entry there, by build ID), not the user's.
func runJudge(bin, what, cache string) ([]byte, string) {
	ctx, cancel := context.WithTimeout(context.Background(), judgeWall)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, what)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, fmt.Sprintf("JUDGE_CPU_SECONDS=%d", int(judgeCPU.Seconds())))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Sprintf("blocked past %v of wall time", judgeWall)
	case err != nil && cmd.ProcessState != nil && cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime() >= judgeCPU:
		return nil, fmt.Sprintf("ran past %v of CPU", judgeCPU)
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, "failed: " + msg
	}
	return out, ""
}

// table is the mutants' outcomes as the Markdown of docs/trust.md.
func table(outs []outcome, changed, caught int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| # | mutant | results | identity |\n|---|---|---|---|\n")
	yes := func(changed bool, note string) string {
		s := "same"
		if changed {
			s = "changed"
		}
		if note != "" {
			s += " (" + note + ")"
		}
		return s
	}
	for i, o := range outs {
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s |\n", i+1, o.m, yes(o.results, o.resultsNote), yes(o.digest, o.idN))
	}
	score := 0.0
	if changed > 0 {
		score = 100 * float64(caught) / float64(changed)
	}
	fmt.Fprintf(&b, "\n%d mutants built; %d change a result; the identity changes for %d of them (%.1f %%).\n", len(outs), changed, caught, score)
	return b.String()
}
