package natsweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/internal/walltime"
	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/trace"
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

// The seed experiment as it ships (20 evaluations on 2,000 requests, validation on the
// whole trace) through three workers writes the local sweep's files.
func TestDistributedSweepMatchesLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole seed sweep, twice; skipped with -short")
	}
	f := config.Default()
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	want, c, out := arena(t, f, exp, 3, DefaultAckWait)
	var status syncBuffer
	events := make(chan sweep.Event)
	remotes := make(chan []string)
	go func() {
		var r []string
		for ev := range events {
			r = append(r, ev.Progress.Remote)
		}
		remotes <- r
	}()
	if _, err := distributedStatus(context.Background(), t, c, f, exp, out, false, events, &status); err != nil {
		t.Fatal(err)
	}
	close(events)
	sameOutputs(t, outputs(t, out), want)
	// Every progress event carries the fleet's status, and progress.json with it.
	all := <-remotes
	if len(all) == 0 || !slices.ContainsFunc(all, func(r string) bool { return strings.HasPrefix(r, "nats: 3 workers connected") }) {
		t.Errorf("no progress event saw the three workers: %q", all)
	}
	for _, r := range all {
		if !strings.HasPrefix(r, "nats: ") {
			t.Fatalf("progress event without the fleet's status: %q", r)
		}
	}
	if rec, err := sweep.ReadProgress(out); err != nil || rec == nil || !strings.HasPrefix(rec.Remote, "nats: ") {
		t.Errorf("progress.json: %+v, %v; want the fleet's status", rec, err)
	}
	// The last status line: every worker seen, nothing left in flight.
	lines := strings.Split(strings.TrimSpace(status.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "nats: 3 workers connected, 0 tasks in flight, ") {
		t.Errorf("last status line %q, want 3 workers and nothing in flight:\n%s", last, status.String())
	}
}

// A worker that takes a task and dies before acknowledging it: the task is redelivered
// after the ack wait, and the sweep ends as the local one does.
func TestDistributedSweepSurvivesAKilledWorker(t *testing.T) {
	f, exp := experiment(t)
	const ackWait = time.Second
	want, c, out := arena(t, f, exp, 0, ackWait)
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		_, err := distributed(ctx, t, c, f, exp, out, false, nil)
		errc <- err
	}()

	nc, js, err := c.wk.dial("dying worker", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	dying := &worker{opt: WorkerOptions{Name: "dying", AckWait: ackWait, Log: io.Discard}, sim: config.SimulatorDigest(), js: js}
	cons, err := dying.workQueue(ctx) // once the coordinator has made the stream
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if meta, err := msg.Metadata(); err != nil || meta.NumDelivered != 1 {
		t.Fatalf("first task: %+v, %v", meta, err)
	}
	nc.Close() // killed mid-task: no result, no ack

	startWorkers(t, c, 2, ackWait)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, outputs(t, out), want)
}

// A coordinator stopped after a few evaluations and resumed: the resumed sweep takes the
// ledger's evaluations and the results that finished meanwhile, and ends as the local one.
func TestDistributedSweepResumesAfterTheCoordinatorStops(t *testing.T) {
	f, exp := experiment(t)
	want, c, out := arena(t, f, exp, 3, DefaultAckWait)
	ctx, cancel := context.WithCancel(context.Background())
	progress := make(chan sweep.Event)
	go func() {
		n := 0
		for ev := range progress {
			if ev.Phase == sweep.PhaseSearch && ev.Key != "" {
				if n++; n == 3 {
					cancel() // the coordinator is stopped with tasks in flight
				}
			}
		}
	}()
	_, err := distributed(ctx, t, c, f, exp, out, false, progress)
	close(progress)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped sweep: error %v, want it cancelled", err)
	}
	res, err := distributed(context.Background(), t, c, f, exp, out, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Search.Resumed < 3 {
		t.Errorf("resumed sweep took %d evaluations from the ledger, want at least the 3 recorded before the stop", res.Search.Resumed)
	}
	sameOutputs(t, outputs(t, out), want)
}

// A task of another simulator digest reaches no worker of this build: it is filed under
// its digest. Published by hand on this build's subject, it is refused, and the coordinator's
// error and the worker's log both say why.
func TestWorkerRefusesAnotherSimulator(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	var log syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = RunWorker(ctx, c.wk, WorkerOptions{Name: "other", Log: &log}) }()
	defer func() { cancel(); <-done }()

	fp := slices.Clone(exp.Fingerprint())
	for i := range fp {
		if fp[i].Key == config.KeySimulator {
			fp[i].Value = "sim-0123456789abcdef"
		}
	}
	co, cfg := coordinator(ctx, t, c, exp, fp)
	short, stop := context.WithTimeout(ctx, 3*time.Second)
	_, err := co.Run(short, cfg, 50)
	stop()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a task of another simulator: %v, want no worker to take it", err)
	}

	// As a coordinator that lies about its digest would file it; under co.mu, which the
	// status line's goroutine reads it under.
	co.mu.Lock()
	co.sim = config.SimulatorDigest()
	co.mu.Unlock()
	_, err = co.Run(ctx, cfg, 50)
	want := "the task is for simulator sim-0123456789abcdef, this worker's is " + config.SimulatorDigest() + " (built from other code)"
	// Refused by the only worker MaxFailures times (it steps aside for another worker a few
	// times first), then the sweep stops naming it and its reason.
	stops := "failed 3 times, the most a task may: worker other: refused: " + want + " (3 times)"
	if err == nil || !strings.HasSuffix(err.Error(), stops) {
		t.Fatalf("error %v, want it to end %q", err, stops)
	}
	if !strings.Contains(log.String(), "refused: "+want) {
		t.Errorf("worker log lacks the refusal:\n%s", log.String())
	}
}

// A worker of another simulator digest among matching ones is refused by name in the status
// line, and the sweep finishes on the others with the local sweep's outputs.
func TestMixedFleetLeavesOtherSimulatorOut(t *testing.T) {
	f, exp := experiment(t)
	want, c, out := arena(t, f, exp, 1, DefaultAckWait)
	nc, _, err := c.wk.dial("impostor", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	stop := make(chan struct{})
	var beats sync.WaitGroup
	beats.Go(func() { // the heartbeats of a worker built from other code, often enough that the
		// coordinator hears one however short the sweep is
		b, _ := json.Marshal(heartbeat{Worker: "skewed", Simulator: "sim-fedcba9876543210", Parallel: 1})
		for {
			_ = nc.Publish(heartbeatSubject, b)
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	defer func() { close(stop); beats.Wait() }()
	var status syncBuffer
	if _, err := distributedStatus(context.Background(), t, c, f, exp, out, false, nil, &status); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, outputs(t, out), want)
	line := "refused 1 built from other code: skewed (sim-fedcba9876543210); this sweep's simulator is " + config.SimulatorDigest()
	if !strings.Contains(status.String(), line) {
		t.Errorf("status lines lack %q:\n%s", line, status.String())
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

// A worker runs a task only of its own simulator digest, whatever the version strings say.
func TestRefusalNamesSimulator(t *testing.T) {
	fp := config.Fingerprint{{Key: config.KeyVersion, Value: "v0.0.1"}, {Key: config.KeySimulator, Value: config.SimulatorDigest()}}
	if why := refusal(fp); why != "" {
		t.Errorf("refused its own digest under another version: %s", why)
	}
	fp[1].Value = "sim-1"
	if why := refusal(fp); why != "the task is for simulator sim-1, this worker's is "+config.SimulatorDigest()+" (built from other code)" {
		t.Errorf("other digest: %q", why)
	}
}

// Credentials in a NATS URL are never shown.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"nats://alice:s3cretPW@10.0.0.5:4222": "nats://alice:xxxxx@10.0.0.5:4222",
		"nats://t0ken@host:4222":              "nats://xxxxx@host:4222",
		"tls://a:b@h1:4222,nats://c:d@h2":     "tls://a:xxxxx@h1:4222,nats://c:xxxxx@h2",
		"nats://10.0.0.5:4222":                "nats://10.0.0.5:4222",
		"alice:pw@host:4222":                  "alice:xxxxx@host:4222",
		"nats://u:p@ss@host":                  "nats://u:xxxxx@host",
		"builtin:toolagent":                   "builtin:toolagent",
	} {
		if got := Redact(in); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A refusal stored by an earlier session (a fleet since fixed) does not fail the task for
// a coordinator that runs it again; a successful result of any session would count.
func TestOldRefusalsDoNotCount(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	ctx := context.Background()
	co, cfg := coordinator(ctx, t, c, exp, exp.Fingerprint())
	publishResult(t, c, co.sweep, Result{Key: taskKey(co.fp, co.ref, 50, cfg), Session: "earlier", Worker: "old", Refused: "the task is for simulator sim-0"})
	startWorkers(t, c, 1, DefaultAckWait)
	rep, err := co.Run(ctx, cfg, 50)
	if err != nil || rep.Summary.RequestsCompleted != 50 {
		t.Fatalf("run after an old refusal: %v", err)
	}
}

// A trace file travels once, as an object named by the SHA-256 of its bytes; a worker's
// replay of it equals the coordinator's own.
func TestFileTraceTravelsByDigest(t *testing.T) {
	tr, err := trace.Synthesize("conversation", 5, 400)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := trace.Write(&buf, tr.Requests); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "conv.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f := config.Default()
	if err := f.Set("workload.trace_path=" + path); err != nil {
		t.Fatal(err)
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	c := startServer(t)
	ctx := context.Background()
	co, cfg := coordinator(ctx, t, c, exp, exp.Fingerprint())
	store, err := co.js.ObjectStore(ctx, TraceBucket)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	if _, err := store.GetInfo(ctx, hex.EncodeToString(sum[:])); err != nil {
		t.Fatalf("trace not stored under its SHA-256: %v", err)
	}
	startWorkers(t, c, 1, DefaultAckWait)
	got, err := co.Run(ctx, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := exp.Run(ctx, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	got.Summary.WallTimeMS, want.Summary.WallTimeMS = 0, 0
	g, _ := json.Marshal(got.Summary)
	w, _ := json.Marshal(want.Summary)
	if !bytes.Equal(g, w) || got.Summary.RequestsCompleted != 400 {
		t.Errorf("worker's replay of the file:\n%s\nlocal:\n%s", g, w)
	}
}

// Runs of one task at once (a validation replay of a configuration already in flight) share
// one publication and one result; a run that gives up leaves the others waiting for it.
func TestOneTaskRunTwiceAtOnce(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	ctx := context.Background()
	co, cfg := coordinator(ctx, t, c, exp, exp.Fingerprint())
	key := taskKey(co.fp, co.ref, 50, cfg)
	quitter, quit := context.WithCancel(ctx)
	type answer struct {
		rep *engine.Report
		err error
	}
	answers := make(chan answer, 3)
	for _, rctx := range []context.Context{quitter, ctx, ctx} {
		go func() {
			rep, err := co.Run(rctx, cfg, 50)
			answers <- answer{rep, err}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		co.mu.Lock()
		n := 0
		if p, ok := co.tasks[key]; ok {
			n = len(p.chans)
		}
		co.mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs waiting on the task, want 3", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	info, err := co.js.Stream(ctx, TaskStream)
	if err != nil {
		t.Fatal(err)
	}
	// The first task waits a moment for workers to join (awaitWorkers) before it is published.
	for {
		st, err := info.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Msgs > 0 || time.Now().After(deadline) {
			if st.State.Msgs != 1 {
				t.Fatalf("tasks published for three runs of one task: %v, want 1", st.State.Msgs)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	quit()
	if a := <-answers; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("the run that gave up: %v", a.err)
	}
	startWorkers(t, c, 1, DefaultAckWait)
	var got []string
	for range 2 {
		select {
		case a := <-answers:
			if a.err != nil || a.rep.Summary.RequestsCompleted != 50 {
				t.Fatalf("a run sharing the task: %v", a.err)
			}
			a.rep.Summary.WallTimeMS = 0
			b, _ := json.Marshal(a.rep.Summary)
			got = append(got, string(b))
		case <-time.After(2 * time.Minute):
			t.Fatal("a run sharing the task never got its result")
		}
	}
	if got[0] != got[1] {
		t.Errorf("the two runs' reports differ:\n%s\n%s", got[0], got[1])
	}
}

// Workers started before any sweep wait for its stream. The sweep's first task waits for
// them to join its queue (each joins at the sweep's ping), so every worker is serving
// before any task is done: none is left polling while the others take the first round.
func TestWaitingWorkersJoinBeforeTheFirstTask(t *testing.T) {
	f, exp := experiment(t)
	want, c, out := arena(t, f, exp, 0, DefaultAckWait)
	// Started a third of a second apart, so that their tries a second are out of step.
	var logs syncBuffer
	for i := range 3 {
		startWorker(t, c, "w"+string(rune('0'+i)), DefaultAckWait, io.MultiWriter(testLog{t}, &logs))
		for strings.Count(logs.String(), "waiting for a sweep") <= i {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second / 3)
	}
	if _, err := distributed(context.Background(), t, c, f, exp, out, false, nil); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, outputs(t, out), want)
	log := logs.String()
	if n := strings.Count(log, ": serving "); n != 3 {
		t.Fatalf("%d workers joined, want 3:\n%s", n, log)
	}
	if last, first := strings.LastIndex(log, ": serving "), strings.Index(log, " done in "); first < 0 || last > first {
		t.Errorf("a task was done before every worker had joined the queue:\n%s", log)
	}
}

// A worker answers a coordinator's ping with a heartbeat at once, so a coordinator that
// starts after its workers counts them before their next beat: five pings bring five beats
// in far less than the five seconds the ticker alone would take.
func TestWorkerAnswersAPing(t *testing.T) {
	c := startServer(t)
	nc, _, err := c.co.dial("test", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	beats := make(chan struct{}, 64)
	sub, err := nc.Subscribe(heartbeatSubject, func(*nats.Msg) { beats <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	startWorkers(t, c, 1, DefaultAckWait)
	<-beats // the worker is up and subscribed to pings
	start := time.Now()
	for range 5 {
		if err := nc.Publish(pingSubject, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		<-beats
	}
	if took := time.Since(start); took >= 5*heartbeatEvery {
		t.Errorf("five pings brought five beats in %v, as the ticker alone would", took)
	}
}

// A URL the parser refuses is named redacted, whatever the parser quotes: a bad escape, a
// space, ":" or "/" in the password, a bad port, a control character, a token.
func TestURLErrorsNeverPrintThePassword(t *testing.T) {
	for _, u := range []string{
		"nats://u:p%zzSECRET@127.0.0.1:4222",
		"nats://u:pa ssSECRET@127.0.0.1:4222",
		"nats://u:p:SECRET@127.0.0.1:1",
		"nats://u:p/SECRET@127.0.0.1:4222",
		"nats://u:p?SECRET@127.0.0.1:4222",
		"nats://u:p#SECRET@127.0.0.1:4222",
		"nats://u:SECRET@127.0.0.1:99999",
		"nats://u:SECRET@127.0.0.1:4x22",
		"nats://u:SE\x01CRET@127.0.0.1:4222",
		"nats://u:SE\x7fCRET@127.0.0.1:4222",
		"nats://SECRET%zz@127.0.0.1:4222",
		"nats://127.0.0.1:1,nats://u:p%zzSECRET@h:4222",
		"u:p%zzSECRET@127.0.0.1:4222",
		"nats://u:SECRET@[::1:4222",
	} {
		_, _, err := Conn{URL: u}.dial("test", t.Logf)
		if err == nil {
			t.Errorf("%q: connected", u)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "SECRET") || strings.Contains(msg, "SE\\x01") || strings.Contains(msg, "CRET") || strings.Contains(msg, "p/S") {
			t.Errorf("%q: the error prints the password: %s", u, msg)
		}
		if !strings.Contains(msg, "xxxxx") {
			t.Errorf("%q: the error does not name the redacted URL: %s", u, msg)
		}
	}
}
