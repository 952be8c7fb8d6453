package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/tui"
	"github.com/routerlab/routerlab/tui/backend"
)

// terminal is an SSH session with a pty running the explorer.
type terminal struct {
	client *gossh.Client
	sess   *gossh.Session
	in     io.Writer
	out    *syncBuffer
}

func openTerminal(t testing.TB, addr, user string, key gossh.Signer) *terminal {
	t.Helper()
	client, err := dial(addr, user, gossh.PublicKeys(key))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	sess.Stdout = out
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Setenv("NO_COLOR", "1"); err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 40, 160, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	term := &terminal{client: client, sess: sess, in: in, out: out}
	term.waitFor(t, "run 1 in")
	return term
}

func (term *terminal) press(t testing.TB, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := term.in.Write([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFor waits until the session's screen output, escape sequences stripped, has text.
// The renderer sends only changed cells, so text must be new where it appears (a pane title
// that extends the previous one would arrive as its tail only).
func (term *terminal) waitFor(t testing.TB, text string) {
	t.Helper()
	term.waitForWithin(t, 20*time.Second, text)
}

// waitForWithin is waitFor with its own deadline, for text that waits on a sweep's progress.
func (term *terminal) waitForWithin(t testing.TB, d time.Duration, text string) {
	t.Helper()
	eventuallyWithin(t, d, "the screen to show "+text, func() bool { return strings.Contains(ansi.Strip(term.out.String()), text) })
}

// sweepFile is a sweep that runs for about a second: long enough to outlive a disconnect.
func sweepFile(t *testing.T) *config.File {
	t.Helper()
	f := config.Default()
	for _, s := range []string{"sweep.max_rounds=2", "sweep.candidates_per_round=3", "sweep.parallel_evals=2",
		"workload.search_requests=500", "validate.requests=4000"} {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// backendViewer lists the registry in tests.
var backendViewer = backend.Caller{Name: "test"}

// jobList is the registry's current list.
func jobList(t *testing.T, srv *testServer) []tui.Job {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var list []tui.Job
	srv.jobs.For(backendViewer).List(ctx, func(l []tui.Job) { list = l; cancel() })
	return list
}

// TestServeSweepOutlivesItsStarter: an operator starts a sweep over SSH and their connection
// is killed; the sweep goes on, and a viewer who connects afterwards lists it, attaches and
// watches it finish, but can neither start nor cancel a sweep.
func TestServeSweepOutlivesItsStarter(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep behind an SSH server")
	}
	op, view := testKey(t), testKey(t)
	srv := startServerOn(t, sweepFile(t), serveOptions{authorizedKeys: writeKeys(t, op), viewerKeys: writeKeys(t, view)})

	alice := openTerminal(t, srv.addr, "alice", op)
	alice.press(t, "s")
	alice.waitFor(t, "server sweep #1")
	eventually(t, "the sweep to run", func() bool {
		l := jobList(t, srv)
		return len(l) == 1 && l[0].State == tui.JobRunning
	})
	alice.client.Close() // the starter's connection dies mid-sweep
	eventually(t, "alice's disconnect in the log", func() bool { return strings.Count(srv.log.String(), "connection closed remote=") >= 1 })
	if l := jobList(t, srv); l[0].State != tui.JobRunning {
		t.Fatalf("sweep %s when its starter disconnected: make the test sweep longer", l[0].State)
	}

	bob := openTerminal(t, srv.addr, "bob", view)
	bob.press(t, "s")                    // a viewer's s does nothing
	bob.press(t, "\t", "\t", "\t", "\t") // Knobs → Metrics → Fleet → Sweep → Sweeps
	bob.waitFor(t, "alice SHA256:")
	bob.press(t, "\r")
	bob.waitFor(t, "server sweep #1")
	bob.waitForWithin(t, sweepWait, "default_kv")
	eventuallyWithin(t, sweepWait, "the sweep to finish", func() bool { return jobList(t, srv)[0].State == tui.JobDone })
	bob.waitFor(t, "done ·")

	l := jobList(t, srv)
	if len(l) != 1 {
		t.Fatalf("%d sweeps listed, want 1 (the viewer's s must not start one)", len(l))
	}
	j := l[0]
	if j.Starter != "alice "+gossh.FingerprintSHA256(op.PublicKey()) || j.Evaluations == 0 || j.Best == nil {
		t.Errorf("finished sweep listed as %+v", j)
	}
	if _, err := os.Stat(filepath.Join(j.Dir, sweep.LedgerName)); err != nil {
		t.Errorf("run directory of the finished sweep: %v", err)
	}
	if _, err := os.Stat(filepath.Join(j.Dir, "summary.json")); err != nil {
		t.Errorf("run directory of the finished sweep: %v", err)
	}
}

// TestServeViewerKnobsStayInTheirSession: a viewer may turn knobs; the re-run happens in
// their session only.
func TestServeViewerKnobsStayInTheirSession(t *testing.T) {
	if testing.Short() {
		t.Skip("runs explorer simulations behind an SSH server")
	}
	op, view := testKey(t), testKey(t)
	srv := startServer(t, serveOptions{authorizedKeys: writeKeys(t, op), viewerKeys: writeKeys(t, view)})
	carol := openTerminal(t, srv.addr, "carol", op)
	bob := openTerminal(t, srv.addr, "bob", view)
	// The renderer sends only changed cells: "✓ run 1 in 13 ms" → "✓ run 2 in 13 ms" can arrive
	// as a lone "2" when the run finishes within a frame, so wait for the new mode's name,
	// which replaces kv_router cell by cell in the pane titles.
	bob.press(t, "m")
	bob.waitFor(t, "round_robin")
	carol.press(t, "?") // a key of carol's own, so her terminal has drawn after bob's run
	carol.waitFor(t, "previous pane")
	if strings.Contains(ansi.Strip(carol.out.String()), "round_robin") {
		t.Error("the viewer's knob change reached the operator's session")
	}
}

// Stopping the server cancels its running sweeps and says, in the log and on standard
// output, which and how to resume each; the printed command resumes the sweep's own
// experiment (its ledger refuses any other) at the starter's knobs.
func TestServeShutdownSaysHowToResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server sweep")
	}
	exp, err := config.NewExperiment(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	runs := t.TempDir()
	o := serveOptions{maxSweeps: 1, runs: runs}
	jobs, err := newJobs(exp, 200, o)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := backend.NewSim(exp, 200)
	if err != nil {
		t.Fatal(err)
	}
	at := sim.Initial()
	at.Concurrency, at.Deployment.Replicas = 16, 12
	alice := jobs.For(backend.Caller{Name: "alice SHA256:abc", Operator: true})
	id, err := alice.Start(at)
	if err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, sweepWait, "two evaluations", func() bool {
		ctx, cancel := context.WithCancel(context.Background())
		var l []tui.Job
		alice.List(ctx, func(got []tui.Job) { l = got; cancel() })
		return l[0].Evaluations >= 2
	})
	stopped := jobs.Shutdown()
	if len(stopped) != 1 || stopped[0].ID != id {
		t.Fatalf("shutdown cancelled %+v, want sweep #%d", stopped, id)
	}
	logs, out := &syncBuffer{}, &syncBuffer{}
	shutdownReport(newServeLogger(logs), out, stopped, nil, jobs)
	dir := stopped[0].Dir
	if !strings.Contains(logs.String(), "stopped: sweep cancelled") || !strings.Contains(out.String(), "cancelled server sweep #1 (alice SHA256:abc") {
		t.Fatalf("shutdown report:\n%s\n%s", logs, out)
	}
	if rec, err := sweep.ReadProgress(dir); err != nil || rec == nil || rec.Phase != sweep.PhaseInterrupted || rec.Stop != backend.ErrServerStopped.Error() {
		t.Fatalf("progress.json of the cancelled sweep: %+v, %v", rec, err)
	}
	_, line, _ := strings.Cut(out.String(), "resume with:\n  ")
	args := shellSplit(t, strings.TrimSpace(line))
	if len(args) < 4 || args[1] != "sweep" || args[len(args)-1] != "--resume" {
		t.Fatalf("resume command %q", line)
	}
	if _, stderr, err := runSweepCmd(t, args[2:]...); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, stderr)
	}
	if sum, err := sweep.ReadSummary(dir); err != nil || sum == nil {
		t.Fatalf("the resumed sweep did not finish: %v", err)
	}
}
