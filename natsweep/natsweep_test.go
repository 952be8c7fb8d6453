package natsweep

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/internal/walltime"
	"github.com/routerlab/routerlab/sweep"
)

// The coordinator is a remote simulator: the sweep keeps a round in flight and its events
// carry the fleet's status.
var _ sweep.Remote = (*Coordinator)(nil)

// experiment is the seed experiment cut down so that a sweep takes a second: 150 search
// requests, two rounds of five candidates (temperature 0.5 makes some stochastic: three
// seeds, so three tasks), validation on 500 requests.
func experiment(t *testing.T) (*config.File, *config.Experiment) {
	t.Helper()
	f := config.Default()
	for _, s := range []string{"workload.search_requests=150", "sweep.max_rounds=2", "sweep.candidates_per_round=5",
		"validate.requests=500", "router_temperature=[0.0, 0.5]", "prefill_load_scale=[1.0, 8.0]"} {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, exp
}

// startWorkers runs n workers, each with its own connection, until the test ends.
func startWorkers(t *testing.T, c roles, n int, ackWait time.Duration) {
	t.Helper()
	for i := range n {
		startWorker(t, c, "w"+string(rune('0'+i)), ackWait, testLog{t})
	}
}

// startWorker runs one worker until the test ends.
func startWorker(t *testing.T, c roles, name string, ackWait time.Duration, log io.Writer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := RunWorker(ctx, c.wk, WorkerOptions{Name: name, AckWait: ackWait, Log: log}); err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// distributed runs the sweep of f into out through a coordinator on c.
func distributed(ctx context.Context, t *testing.T, c roles, f *config.File, exp *config.Experiment, out string, resume bool, progress chan<- sweep.Event) (*sweep.Result, error) {
	t.Helper()
	return distributedStatus(ctx, t, c, f, exp, out, resume, progress, nil)
}

func distributedStatus(ctx context.Context, t *testing.T, c roles, f *config.File, exp *config.Experiment, out string, resume bool,
	progress chan<- sweep.Event, status io.Writer) (*sweep.Result, error) {
	t.Helper()
	co, err := NewCoordinator(ctx, c.co, exp, exp.Fingerprint(), CoordinatorOptions{Out: out, Status: status, Audit: DefaultAudit})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	return sweep.Run(ctx, f, co, sweep.Options{Out: out, Resume: resume, Experiment: exp.Fingerprint(), Progress: progress})
}

// outputs reads a run directory's files; JSON ones without their wall times, the only
// fields allowed to differ.
func outputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"summary.json", "report.md", "evaluations.csv", sweep.LedgerName} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonl") {
			var err error
			if b, err = walltime.Strip(b); err != nil {
				t.Fatal(err)
			}
		}
		out[name] = string(b)
	}
	return out
}

func localSweep(t *testing.T, f *config.File, exp *config.Experiment) map[string]string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "local")
	if _, err := sweep.Run(context.Background(), f, exp, sweep.Options{Out: dir, Experiment: exp.Fingerprint()}); err != nil {
		t.Fatal(err)
	}
	return outputs(t, dir)
}

// arena runs the local sweep of f (its files are what the distributed one must write),
// starts a NATS server and `workers` workers, and names a run directory for the sweep.
func arena(t *testing.T, f *config.File, exp *config.Experiment, workers int, ackWait time.Duration) (want map[string]string, c roles, out string) {
	t.Helper()
	want = localSweep(t, f, exp)
	c = startServer(t)
	if workers > 0 {
		startWorkers(t, c, workers, ackWait)
	}
	return want, c, filepath.Join(t.TempDir(), "nats")
}

func sameOutputs(t *testing.T, got, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s differs from the local sweep's:\n%s\n--- local:\n%s", name, got[name], w)
		}
	}
	// Each evaluation recorded once.
	seen := map[string]bool{}
	for _, line := range strings.Split(got[sweep.LedgerName], "\n")[1:] {
		var e struct{ Key string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if seen[e.Key] {
			t.Errorf("ledger records %s twice", e.Key)
		}
		seen[e.Key] = true
	}
}

// coordinator connects a coordinator of exp (fingerprint fp) for the test's duration and
// returns it with the engine configuration of the experiment's default point.
func coordinator(ctx context.Context, t *testing.T, c roles, exp *config.Experiment, fp config.Fingerprint) (*Coordinator, engine.Config) {
	t.Helper()
	return coordinatorWith(ctx, t, c, exp, fp, CoordinatorOptions{Audit: DefaultAudit, Status: testLog{t}})
}

// coordinatorWith is coordinator with options (Out is a new directory).
func coordinatorWith(ctx context.Context, t *testing.T, c roles, exp *config.Experiment, fp config.Fingerprint, opt CoordinatorOptions) (*Coordinator, engine.Config) {
	t.Helper()
	opt.Out = t.TempDir()
	co, err := NewCoordinator(ctx, c.co, exp, fp, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(co.Close)
	cfg, err := exp.EngineConfig(exp.File.DefaultPoint())
	if err != nil {
		t.Fatal(err)
	}
	return co, cfg
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
