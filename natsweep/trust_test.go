package natsweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/trace"
)

// runRogue serves tasks with the workers' credentials but answers as edit says: it gets the
// honest result of its n-th task (from 0) and may change it. It ignores a task's Avoid and
// stops after tasks answers (0: until the test ends).
func runRogue(t *testing.T, c roles, name string, tasks int, edit func(n int, res *Result)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	nc, js, err := c.wk.dial("rogue "+name, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	w := &worker{opt: WorkerOptions{Name: name, AckWait: DefaultAckWait, Log: io.Discard}, sim: config.SimulatorDigest(), js: js, traces: map[string]*trace.Trace{}}
	wg.Go(func() {
		cons, err := w.workQueue(ctx)
		if err != nil || cons == nil {
			return
		}
		var sc engine.Scratch
		for n := 0; (tasks == 0 || n < tasks) && ctx.Err() == nil; {
			msg, err := cons.Next(jetstream.FetchMaxWait(time.Second))
			if err != nil {
				continue
			}
			var task Task
			if err := json.Unmarshal(msg.Data(), &task); err != nil {
				continue
			}
			res := w.run(ctx, &task, &sc)
			edit(n, &res)
			if w.publish(ctx, &task, &res) == nil {
				_ = msg.Ack()
				n++
			}
		}
	})
}

// slower makes a report look 2 % slower in its mean TTFT, as a forger steering the search
// away from a configuration would.
func slower(_ int, res *Result) {
	if res.Report != nil {
		res.Report.Summary.MeanTTFTMS *= 1.02
	}
}

// A client without credentials is not even connected; a worker's credentials read no task
// off the subject, publish no task and create no stream.
func TestStrangerGetsNothing(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	ctx := context.Background()
	if nc, _, err := (Conn{URL: c.co.URL}).dial("stranger", t.Logf); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("a client without credentials: %v, want an authorization violation", err)
	}

	var complaints syncBuffer
	nc, js, err := c.wk.dial("curious worker", func(format string, args ...any) { fmt.Fprintf(&complaints, format+"\n", args...) })
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	seen := make(chan *nats.Msg, 16)
	if _, err := nc.ChanSubscribe(taskSubject+">", seen); err != nil {
		t.Fatal(err)
	}
	co, cfg := coordinator(ctx, t, c, exp, exp.Fingerprint())
	if err := co.publish(ctx, Task{Key: "k", Sweep: co.sweep, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, 2*time.Second)
	defer stop()
	if _, err := js.Publish(short, taskSubjectOf(co.sim, co.sweep), []byte(`{"key":"forged"}`)); err == nil {
		t.Error("a worker published a task")
	}
	if _, err := js.CreateOrUpdateStream(short, jetstream.StreamConfig{Name: TaskStream, Subjects: []string{">"}}); err == nil {
		t.Error("a worker changed the task stream")
	}
	select {
	case m := <-seen:
		t.Errorf("a worker's subscription to %s> read a task on %s", taskSubject, m.Subject)
	case <-time.After(500 * time.Millisecond):
	}
	if !strings.Contains(complaints.String(), `Permissions Violation for Subscription to "routerlab.work.>"`) {
		t.Errorf("the server's refusal was not logged:\n%s", complaints.String())
	}
	st, err := co.js.Stream(ctx, TaskStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != 1 || info.Config.Subjects[0] != taskSubject+">" {
		t.Errorf("task stream after the worker's attempts: %+v, %v; want the coordinator's one task and subjects", info, err)
	}
}

// A worker's error answer goes to another worker: the run gets the honest result and the
// status line counts the retry, naming the worker that failed.
func TestErrorAnswerIsRetriedElsewhere(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	ctx := context.Background()
	var status syncBuffer
	co, cfg := coordinatorWith(ctx, t, c, exp, exp.Fingerprint(), CoordinatorOptions{Audit: 1, Status: &status})
	runRogue(t, c, "failing", 1, func(_ int, res *Result) { res.Report, res.Error = nil, "out of memory" })
	errc := make(chan error, 1)
	var got *engine.Report
	go func() {
		var err error
		got, err = co.Run(ctx, cfg, 50)
		errc <- err
	}()
	waitFor(t, &status, "worker failing failed task")
	startWorkers(t, c, 1, DefaultAckWait)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	want, err := exp.Run(ctx, cfg, 50)
	if err != nil {
		t.Fatal(err)
	}
	if d := difference(got, want); d != "" || got.Summary.RequestsCompleted != 50 {
		t.Errorf("retried result differs from the local replay: %s", d)
	}
	if line := co.Status(); !strings.Contains(line, ", 1 failed answers retried") {
		t.Errorf("status line %q does not count the retry", line)
	}
}

// waitFor waits until the coordinator's status output says want.
func waitFor(t *testing.T, status *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(status.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("status never said %q:\n%s", want, status.String())
		}
	}
}

// Answers without a report, or bound to another task, are failures too: after MaxFailures
// of them the run fails, naming the worker and each reason.
func TestFailuresStopTheSweepNamingTheWorker(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	ctx := context.Background()
	co, cfg := coordinator(ctx, t, c, exp, exp.Fingerprint())
	other := binding("another task", co.sweep, co.fp, co.ref.Digest, 50, cfg)
	runRogue(t, c, "liar", 0, func(n int, res *Result) {
		switch n {
		case 0:
			res.Report = nil
		default:
			res.Task = other
		}
	})
	_, err := co.Run(ctx, cfg, 50)
	want := "failed 3 times, the most a task may: worker liar: result without a report; worker liar: answered another task (its result binds to " + other +
		", the task's binding is " + binding(taskKey(co.fp, co.ref, 50, cfg), co.sweep, co.fp, co.ref.Digest, 50, cfg) + ") (2 times)"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("error %v, want it to end %q", err, want)
	}
}

// A worker with stolen credentials that forges every result is caught by the audit at its
// first one (each worker's first result is replayed locally): it is refused by name, its
// later answers are replayed here, and the sweep writes the local sweep's files. The forger is
// the only worker, so that it answers at least once however the machine schedules it.
func TestForgedResultsAreCaughtByTheAudit(t *testing.T) {
	f, exp := experiment(t)
	want, c, out := arena(t, f, exp, 0, DefaultAckWait)
	runRogue(t, c, "forger", 0, slower)
	var status syncBuffer
	if _, err := distributedStatus(context.Background(), t, c, f, exp, out, false, nil, &status); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, outputs(t, out), want)
	for _, line := range []string{"nats: worker forger refused: its result for task ", "differs from the local replay (mean_ttft_ms ",
		"; refused 1 whose result differed from the local replay: forger"} {
		if !strings.Contains(status.String(), line) {
			t.Errorf("status lacks %q:\n%s", line, status.String())
		}
	}
}

// A worker honest at first (so vouched for) that forges later is caught when the seeded
// sample replays one of its forged results; the results of it the search already used are
// replayed too, and as they differ, the run (and every later one) fails naming the worker.
func TestLateForgerPoisonsTheSweep(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	ctx := context.Background()
	co, cfg := coordinatorWith(ctx, t, c, exp, exp.Fingerprint(), CoordinatorOptions{Audit: 0.3, AuditSeed: 7})
	// Tasks by seed: the first (vouching) one, two the sample leaves out, then a sampled one.
	var cfgs []engine.Config
	unsampled := 0
	for seed := uint64(1); len(cfgs) < 4; seed++ {
		cfg.Seed = seed
		s := co.audit.sampled(taskKey(co.fp, co.ref, 50, cfg))
		if len(cfgs) == 0 || (!s && unsampled < 2) || (s && unsampled == 2) {
			if !s && len(cfgs) > 0 {
				unsampled++
			}
			cfgs = append(cfgs, cfg)
		}
	}
	runRogue(t, c, "turncoat", 0, func(n int, res *Result) {
		if n > 0 {
			slower(n, res)
		}
	})
	for i, cfg := range cfgs[:3] {
		if _, err := co.Run(ctx, cfg, 50); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	_, err := co.Run(ctx, cfgs[3], 50)
	want := "worker turncoat answered falsely: 2 of its 2 results the search used before it was caught differ from local replays"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("the sampled forged result: %v, want %q", err, want)
	}
	if _, err := co.Run(ctx, cfgs[0], 50); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a run after the sweep was found misled: %v", err)
	}
}

// The sample is the stated fraction of tasks, and another seed picks another sample.
func TestAuditSampleIsTheFraction(t *testing.T) {
	a, b := newAuditor(0.05, 1), newAuditor(0.05, 2)
	n, both := 0, 0
	for i := range 20000 {
		key := fmt.Sprintf("%032x", i)
		if a.sampled(key) {
			n++
			if b.sampled(key) {
				both++
			}
		}
	}
	if n < 900 || n > 1100 {
		t.Errorf("%d of 20000 tasks sampled at 0.05, want about 1000", n)
	}
	if both > 100 {
		t.Errorf("seeds 1 and 2 share %d of %d sampled tasks, want about 5 %%", both, n)
	}
	if s := newAuditor(0, 1); s.sampled("k") {
		t.Error("fraction 0 sampled a task")
	}
	if s := newAuditor(1, 1); !s.sampled("k") {
		t.Error("fraction 1 left a task out")
	}
}

// A fraction outside [0, 1] is refused before any connection.
func TestAuditFractionOutOfRange(t *testing.T) {
	_, exp := experiment(t)
	for _, f := range []float64{-0.1, 1.5} {
		_, err := NewCoordinator(context.Background(), Conn{URL: "nats://127.0.0.1:1"}, exp, exp.Fingerprint(), CoordinatorOptions{Out: t.TempDir(), Audit: f})
		if want := fmt.Sprintf("--nats-audit: %v must be between 0 and 1", f); err == nil || err.Error() != want {
			t.Errorf("audit %v: %v, want %q", f, err, want)
		}
	}
}

// A credentials or key file that is not a small regular file is refused before it is read.
func TestKeyFilesAreBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.nk")
	writeSparse(t, big, MaxKeyFileBytes+1)
	for _, tc := range []struct {
		c    Conn
		want string
	}{
		{Conn{URL: "nats://127.0.0.1:1", NKey: "/dev/zero"}, "--nats-nkey: /dev/zero is not a regular file"},
		{Conn{URL: "nats://127.0.0.1:1", Creds: big}, fmt.Sprintf("--nats-creds: %s has %d bytes, more than the %d a key or certificate file may have", big, MaxKeyFileBytes+1, MaxKeyFileBytes)},
		{Conn{URL: "nats://127.0.0.1:1", Creds: big, NKey: big}, "nats: a credentials file and an NKey seed file both given: a connection authenticates with one"},
	} {
		if _, _, err := tc.c.dial("test", t.Logf); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
	if _, _, err := (Conn{URL: "nats://127.0.0.1:1", NKey: filepath.Join(t.TempDir(), "none")}).dial("test", t.Logf); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing seed file: %v", err)
	}
}

// writeSparse makes a file of size bytes without writing them.
func writeSparse(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// What a worker says is shown without control characters and cut to maxShown bytes.
func TestWorkerWordsAreShownSafely(t *testing.T) {
	if got := shown("evil\x1b[2J\nname\xff"); got != "evil\uFFFD[2J\uFFFDname\uFFFD" {
		t.Errorf("control characters: %q", got)
	}
	long := strings.Repeat("é", maxShown)
	got := shown(long)
	if len(got) > maxShown+len("…") || !strings.HasSuffix(got, "é…") {
		t.Errorf("a %d-byte name shown as %d bytes ending %q", len(long), len(got), got[len(got)-8:])
	}
}

// Invariants: whatever a worker sends, shown gives valid UTF-8 without control characters
// within maxShown bytes (and "…"); a larger audit fraction samples a superset of the tasks.
func TestTrustInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := rapid.String().Draw(t, "in") + string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
		got := shown(in)
		if !utf8.ValidString(got) || len(got) > maxShown+len("…") || strings.IndexFunc(got, unicode.IsControl) >= 0 {
			t.Fatalf("shown(%q) = %q", in, got)
		}
		if utf8.ValidString(in) && strings.IndexFunc(in, unicode.IsControl) < 0 && len(in) <= maxShown && got != in {
			t.Fatalf("a plain name %q shown as %q", in, got)
		}
		seed := rapid.Uint64Min(1).Draw(t, "seed")
		lo := rapid.Float64Range(0, 1).Draw(t, "lo")
		hi := rapid.Float64Range(lo, 1).Draw(t, "hi")
		a, b := newAuditor(lo, seed), newAuditor(hi, seed)
		key := rapid.StringMatching("[0-9a-f]{32}").Draw(t, "key")
		if a.sampled(key) && !b.sampled(key) {
			t.Fatalf("task %s sampled at %v but not at %v", key, lo, hi)
		}
	})
}
