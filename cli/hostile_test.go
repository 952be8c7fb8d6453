package cli

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routerlab/routerlab/router"
)

// documentedRanges are the numeric keys of the experiment file with the ranges config's
// parser accepts (config/parse.go, README's key table): each is tried at both ends.
var documentedRanges = []struct {
	key    string
	lo, hi float64
}{
	{"workload.trace_block_size", 1, 1 << 20}, {"workload.replay_concurrency", 0, 1 << 20},
	{"workload.arrival_speedup_ratio", 1e-6, 1e6}, {"workload.search_requests", 0, math.MaxInt32},
	{"goal.max_ttft_ms", 0, math.MaxFloat64}, {"goal.sla.ttft_ms", 0, math.MaxFloat64}, {"goal.sla.percentile", 1, 100},
	{"sweep.max_rounds", 1, 10000}, {"sweep.candidates_per_round", 1, 10000}, {"sweep.parallel_evals", 1, 1024},
	{"validate.requests", 0, math.MaxInt32},
	{"gpu_budget", 1, 1 << 20}, {"context_length", 1, 1 << 24}, {"gpu_memory_utilization", 0.05, 1},
	{"num_gpu_blocks", 0, 1 << 30}, {"block_size", 1, 1 << 16}, {"api_server_tokenize_ns", 0, 1e6},
	{"request_path_us", 0, 1e6}, {"stream_end_us", 0, 1e6}, {"max_cudagraph_capture_size", 0, 1 << 20},
	{"shared_experts_stream_tokens", -1, 1 << 20},
	{"agg_max_num_batched_tokens", 1, 1 << 22}, {"agg_max_num_seqs", 1, 1 << 16},
	{"overlap_score_credit", 0, 1}, {"prefill_load_scale", 0, 1024}, {"router_temperature", 0, 100},
	{"replicas", 1, router.MaxWorkers}, {"parallel_configs", 1, 4096}, // tp of one config
}

// hostileLimits are the acceptance's bounds on every case: peak resident memory and wall time.
const (
	hostileRSS  = 1 << 30
	hostileWall = 10 * time.Second
)

// extremes keeps the largest wall time, CPU time and peak resident memory of the cases run,
// each with its case, for docs/trust.md.
type extremes struct {
	n                          int
	wall, cpu                  time.Duration
	rss                        int64
	wallArgs, cpuArgs, rssArgs []string
}

func (m *extremes) note(wall, cpu time.Duration, rss int64, args []string) {
	m.n++
	if wall > m.wall {
		m.wall, m.wallArgs = wall, args
	}
	if cpu > m.cpu {
		m.cpu, m.cpuArgs = cpu, args
	}
	if rss > m.rss {
		m.rss, m.rssArgs = rss, args
	}
}

func (m *extremes) String() string {
	return fmt.Sprintf("longest %.2f s %q; most CPU %.2f s %q; largest peak RSS %d MB %q",
		m.wall.Seconds(), m.wallArgs, m.cpu.Seconds(), m.cpuArgs, m.rss>>20, m.rssArgs)
}

// runBounded runs routerlab (this test binary as main) with args and checks that it ends in a
// result or a clear error within hostileRSS and hostileWall: no Go runtime crash, no panic.
// The process runs under `ulimit -v` of 16 GiB so that a regression cannot take the machine's
// memory (Go reserves address space far beyond what it touches, so the virtual limit cannot
// be the 1 GiB itself); the 1 GiB is checked on its peak resident set (getrusage).
func runBounded(t *testing.T, seen *extremes, args ...string) (stderr string, ok bool) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -v 16777216; exec "$0" "$@"`, os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), asRouterlab+"=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(3*hostileWall, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	took := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	rss := int64(ru.Maxrss) << 10
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	msg := errb.String()
	if testing.Verbose() {
		t.Logf("%5.2f s (CPU %5.2f s) %4d MB exit %v: %q %.140q", took.Seconds(), cpu.Seconds(), rss>>20, err == nil, args, msg)
	}
	seen.note(took, cpu, rss, args)
	switch {
	case strings.Contains(msg, "fatal error") || strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine "):
		t.Errorf("%q: crashed: %.600s", args, msg)
	case rss > hostileRSS:
		t.Errorf("%q: peak resident memory %d MB, over 1 GiB", args, rss>>20)
	case took > hostileWall:
		t.Errorf("%q: took %v, over %v", args, took, hostileWall)
	case err != nil && !strings.HasPrefix(msg, "routerlab: ") && !strings.Contains(msg, "\nrouterlab: "):
		t.Errorf("%q: failed without a routerlab error: %v %.300s", args, err, msg)
	}
	return msg, err == nil
}

// TestDocumentedInputsStayBounded is the acceptance's property over documented input: every
// numeric key of the experiment file at both ends of its range (replayed on the first 200
// requests; ROUTERLAB_HOSTILE_FULL=1 replays the whole trace and adds values past each end)
// and every file routerlab reads given /dev/zero, a symlink to it or a huge sparse file —
// each ends in a result or a clear error within 1 GiB and 10 s, in a subprocess.
func TestDocumentedInputsStayBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs routerlab some 80 times in subprocesses")
	}
	full := os.Getenv("ROUTERLAB_HOSTILE_FULL") == "1"
	var seen extremes
	defer func() { t.Logf("%d cases: %v", seen.n, &seen) }()
	requests := "200"
	if full {
		requests = "0"
	}
	set := func(key string, v float64) string {
		text := fmt.Sprint(v)
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			text = fmt.Sprintf("%d", int64(v))
		}
		switch key {
		case "parallel_configs":
			return fmt.Sprintf("parallel_configs=[{tp: %s, replicas: 1}]", text)
		case "overlap_score_credit", "prefill_load_scale", "router_temperature", "agg_max_num_batched_tokens", "agg_max_num_seqs":
			return key + "=[" + text + "]"
		}
		return key + "=" + text
	}
	for _, r := range documentedRanges {
		values := []float64{r.lo, r.hi}
		if full {
			values = append(values, r.lo-1, r.hi*2, math.Sqrt(math.Max(r.lo, 1)*r.hi))
		}
		for _, v := range values {
			runBounded(t, &seen, "replay", "--requests", requests, "--set", set(r.key, v))
		}
	}

	dir := t.TempDir()
	link := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sparse := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(size) // 318 MB of zeros that take no disk
		f.Close()
		return p
	}
	subdir := func(name string, files map[string]string) string {
		p := filepath.Join(dir, name)
		os.Mkdir(p, 0o755)
		for f, target := range files {
			if target == "/dev/zero" {
				os.Symlink(target, filepath.Join(p, f))
			} else {
				os.WriteFile(filepath.Join(p, f), []byte(target), 0o644)
			}
		}
		return p
	}
	replayJSON := `{"experiment":{"routerlab_version":"x"},"requests_completed":1}`
	cases := [][]string{
		{"replay", "--config", "/dev/zero"}, {"replay", "--config", link("config.yaml")},
		{"replay", "--trace", "/dev/zero"}, {"replay", "--trace", link("trace.jsonl")},
		{"trace", "stats", link("stats.jsonl")},
		{"compare", "/dev/zero", "/dev/zero"},
		{"compare", subdir("zero-replay", map[string]string{"replay.json": "/dev/zero"}), subdir("ok", map[string]string{"replay.json": replayJSON})},
		{"compare", sparse("replay.json", 318<<20), sparse("other.json", 318<<20)},
		{"compare", subdir("zero-requests", map[string]string{"replay.json": replayJSON, "requests.jsonl": "/dev/zero"}), filepath.Join(dir, "ok")},
		{"compare", subdir("zero-summary", map[string]string{"summary.json": "/dev/zero"}), filepath.Join(dir, "ok")},
		{"sweep", "--requests", "50", "--resume", "--out", subdir("zero-ledger", map[string]string{"ledger.jsonl": "/dev/zero"})},
		{"model", "validate", "--silicon", link("silicon.csv")},
		{"serve", "--ssh", "127.0.0.1:0", "--authorized-keys", link("authorized_keys"), "--host-key", filepath.Join(dir, "hk", "key")},
	}
	for _, args := range cases {
		msg, ok := runBounded(t, &seen, args...)
		if ok || !strings.Contains(msg, "limit") {
			t.Errorf("%q: want an error naming a size limit, got ok=%v %.300q", args, ok, msg)
		}
	}
}
