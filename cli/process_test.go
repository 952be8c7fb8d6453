package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routerlab/routerlab/sweep"
)

// asRouterlab makes this test binary act as the routerlab command when the tests start it as
// a subprocess, so those tests kill and signal a real process without building one.
const asRouterlab = "ROUTERLAB_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asRouterlab) == "1" {
		os.Exit(Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// routerlabProcess starts routerlab with args in the background.
func routerlabProcess(t testing.TB, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asRouterlab+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &stderr
}

// ledgerLines counts the complete lines of dir's ledger (0 when it does not exist yet).
func ledgerLines(dir string) int {
	data, _ := os.ReadFile(filepath.Join(dir, sweep.LedgerName))
	return bytes.Count(data, []byte("\n"))
}

// waitFor polls cond until it holds or the process exits; it reports whether cond held.
func waitFor(cmd *exec.Cmd, exited <-chan struct{}, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-exited:
			return cond()
		case <-time.After(time.Millisecond):
		}
	}
}

// runOutputs reads a finished sweep's files, with wall-clock times (the one field that
// differs between identical runs) zeroed.
func runOutputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{sweep.LedgerName, "summary.json", "report.md", "evaluations.csv"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = wallTime.ReplaceAllString(string(data), `"wall_time_ms": 0`)
	}
	return out
}

// killSweepArgs is a sweep of 10 configurations (grid) on 800 requests with a 1,500-request
// validation: long enough to be killed part-way, short enough to run several times.
func killSweepArgs(out string) []string {
	return []string{"sweep", "--requests", "800", "--algorithm", "grid", "--parallel", "1", "--set", "router_temperature=[0.0]",
		"--set", "overlap_score_credit=[0.0, 0.5, 1.0]", "--set", "prefill_load_scale=[0.0, 1.0, 8.0]",
		"--set", "validate.requests=1500", "--out", out}
}

// A sweep killed with SIGKILL at several moments (before its first evaluation, part-way
// through the search, during validation) and resumed each time ends with the same ledger,
// summary, report and CSV as an uninterrupted sweep.
func TestSweepKilledAtAnyMomentResumesToIdenticalFiles(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref")
	if _, stderr, err := runSweepCmd(t, killSweepArgs(ref)[1:]...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := runOutputs(t, ref)

	dir := filepath.Join(t.TempDir(), "killed")
	killed := 0
	// Kill points: ledger lines seen (header = 1); 11 = search done, validating.
	for _, at := range []int{1, 4, 8, 11} {
		args := killSweepArgs(dir)
		if at > 1 {
			args = append(args, "--resume")
		}
		cmd, stderr := routerlabProcess(t, args...)
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		waitFor(cmd, exited, func() bool { return ledgerLines(dir) >= at })
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
			if cmd.ProcessState.ExitCode() != 0 && cmd.ProcessState.ExitCode() != -1 {
				t.Fatalf("sweep failed: %s", stderr)
			}
			break // it finished before the kill
		}
		killed++
	}
	if killed < 2 {
		t.Fatalf("only %d kills landed before the sweep finished: the test sweep is too short", killed)
	}
	if _, stderr, err := runSweepCmd(t, append(killSweepArgs(dir)[1:], "--resume")...); err != nil {
		t.Fatalf("final resume: %v\n%s", err, stderr)
	}
	got := runOutputs(t, dir)
	for name := range want {
		if got[name] != want[name] {
			t.Errorf("%s after %d kills and resumes differs from the uninterrupted sweep:\n%s\n---\n%s", name, killed, got[name], want[name])
		}
	}
}

// SIGINT (and SIGTERM, and SIGHUP: its terminal closed) stop a sweep after whole ledger
// lines with status 130 and the command that continues it; that command finishes the sweep.
func TestInterruptedSweepSaysHowToContinue(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	// The kill test's sweep with six prefill_load_scale values: 19 evaluations, so that a stage
	// whose signal a loaded host delays (the test's poll descheduled while the sweep runs on)
	// still leaves the next stage evaluations to save.
	sweepArgs := killSweepArgs(dir)
	sweepArgs[slices.Index(sweepArgs, "prefill_load_scale=[0.0, 1.0, 8.0]")] = "prefill_load_scale=[0.0, 0.5, 1.0, 2.0, 4.0, 8.0]"
	const evaluations = 3*6 + 1
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		args := slices.Clone(sweepArgs)
		if sig != syscall.SIGINT {
			args = append(args, "--resume")
		}
		if n := ledgerLines(dir) - 1; n >= evaluations {
			// A previous stage saved every evaluation before its signal landed: this stage
			// could only signal a sweep that is validating or done (exit -1 once its handlers
			// are gone), so the remaining signals are not tested this time.
			t.Logf("the stage before %v saved all %d evaluations before its signal; %v not tested", sig, n, sig)
			break
		}
		// The signal comes once this process has saved an evaluation of its own (the header, if
		// new, and one line), so its handlers are installed — a stage that ran on past its signal
		// must not hand the next one a ledger already long enough — and while most evaluations
		// and the validation remain: nearer the end, a loaded host can let the sweep finish and
		// drop its handlers before the signal lands, and it dies with no exit status.
		at := max(ledgerLines(dir), 1) + 1
		cmd, stderr := routerlabProcess(t, args...)
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		if !waitFor(cmd, exited, func() bool { return ledgerLines(dir) >= at }) {
			t.Fatalf("sweep ended early: %s", stderr)
		}
		cmd.Process.Signal(sig)
		<-exited
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Fatalf("%v: exit status %d, want 130\n%s", sig, code, stderr)
		}
		saved := ledgerLines(dir) - 1
		want := "interrupted after " + strconv.Itoa(saved) + " evaluations; continue with: routerlab sweep --algorithm grid --requests 800"
		if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "--out "+dir+" --resume") {
			t.Errorf("%v: stderr lacks %q ... --out %s --resume:\n%s", sig, want, dir, stderr)
		}
		if !strings.HasPrefix(stderr.String(), "sweep: writing "+dir+"\n") {
			t.Errorf("the output directory is not printed first:\n%s", stderr)
		}
		// progress.json no longer says the sweep is searching: a reader sees it stopped, and why.
		if rec, err := sweep.ReadProgress(dir); err != nil || rec == nil || rec.Phase != sweep.PhaseInterrupted || !strings.Contains(rec.Stop, "signal") {
			t.Errorf("%v: progress.json %+v (%v), want interrupted by the signal", sig, rec, err)
		}
	}
	if _, stderr, err := runSweepCmd(t, append(sweepArgs[1:], "--resume")...); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr)
	}
}

// Two sweeps on one directory: the second fails at once, naming the first one's PID.
func TestSecondSweepOnALockedDirectoryFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	first, stderr := routerlabProcess(t, killSweepArgs(dir)...)
	exited := make(chan struct{})
	go func() { first.Wait(); close(exited) }()
	if !waitFor(first, exited, func() bool { return ledgerLines(dir) >= 1 }) {
		t.Fatalf("first sweep ended before writing its ledger: %s", stderr)
	}
	for _, extra := range [][]string{{"--resume"}, nil} {
		_, _, err := runSweepCmd(t, append(killSweepArgs(dir)[1:], extra...)...)
		want := "another sweep (PID " + strconv.Itoa(first.Process.Pid) + ","
		select {
		case <-exited:
			t.Fatal("the first sweep finished before the second was refused: the test sweep is too short")
		default:
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("second sweep %v: error %v, want one containing %q", extra, err, want)
		}
	}
	first.Process.Signal(syscall.SIGKILL)
	<-exited
	// The kernel dropped the dead holder's lock: the directory can be resumed.
	if _, stderr, err := runSweepCmd(t, append(killSweepArgs(dir)[1:], "--resume")...); err != nil {
		t.Fatalf("resume after the holder died: %v\n%s", err, stderr)
	}
}

func TestDefaultRunDirectoriesNeverCollide(t *testing.T) {
	t.Chdir(t.TempDir())
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for range 3 {
		dir, err := sweepDir(sweepOptions{}, now)
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] {
			t.Fatalf("%s handed out twice", dir)
		}
		seen[dir] = true
	}
}
