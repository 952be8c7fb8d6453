package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/sweep"
)

// TestWatchFollowsAKilledAndResumedSweep: routerlab watch DIR, opened on an empty run
// directory, follows a headless sweep writing it — killed with SIGKILL part-way, then
// resumed — through to the final best configuration, and leaves in DIR only what the sweep
// wrote.
func TestWatchFollowsAKilledAndResumedSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep in a subprocess")
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := newWatch(dir)
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	// The terminal stream carries changed cells only: wait on text that is new where it
	// appears, and check the final screen from the model itself.
	shows := showsOf(t, tm)

	writer, stderr := routerlabProcess(t, killSweepArgs(dir)...)
	exited := make(chan struct{})
	go func() { writer.Wait(); close(exited) }()
	if !waitFor(writer, exited, func() bool { return ledgerLines(dir) >= 5 }) {
		t.Fatalf("the sweep ended before its fourth evaluation: %s", stderr)
	}
	// Killed at once: waiting for the terminal first gave a fast sweep time to finish on a
	// loaded machine. What it wrote stays, so the watch shows it all the same.
	writer.Process.Signal(syscall.SIGKILL)
	<-exited
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		t.Fatal("the sweep finished before the kill: make the test sweep longer")
	}
	// Text that appears on a blank line: the renderer sends changed cells only, so a word
	// that overwrites one sharing letters at the same columns never arrives whole. Both may
	// arrive in one frame, so they are waited for together.
	shows("e2e ms runs", "the writer is gone")

	if _, stderr, err := runSweepCmd(t, append(killSweepArgs(dir)[1:], "--resume")...); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr)
	}
	shows("done · 10 evaluations")
	sum, err := sweep.ReadSummary(dir)
	if err != nil || sum == nil {
		t.Fatalf("summary of the resumed sweep: %v", err)
	}
	best := fmt.Sprintf("winner %s credit %s scale %s T %s · %.1f e2e ms", sum.Best.Config[config.KeyRouterMode],
		oneDecimal(t, sum.Best.Config[config.KeyOverlapScoreCredit]), oneDecimal(t, sum.Best.Config[config.KeyPrefillLoadScale]),
		oneDecimal(t, sum.Best.Config[config.KeyRouterTemperature]), sum.Best.Value)
	tm.Type("q")
	final := ansi.Strip(tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).View().Content)
	if !strings.Contains(final, best) {
		t.Errorf("final screen lacks %q:\n%s", best, final)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{sweep.LedgerName, "evaluations.csv", sweep.ProgressName, "report.html", "report.md", "summary.json", sweep.LockName}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("run directory holds %v, want only the sweep's files %v", names, want)
	}
}

// oneDecimal prints a configuration value as the explorer does (1 → "1.0"); a knob the
// sweep did not search (absent) reads as 0, as this sweep's fixed temperature is.
func oneDecimal(t *testing.T, v string) string {
	t.Helper()
	if v == "" {
		return "0.0"
	}
	var x float64
	if _, err := fmt.Sscan(v, &x); err != nil {
		t.Fatalf("configuration value %q: %v", v, err)
	}
	return fmt.Sprintf("%.1f", x)
}

// A directory that does not exist yet is waited for: the view opens and says so (a sweep
// started next creates it); a path that is a file is an error naming it.
func TestWatchMissingDirectoryWaits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	m, err := newWatch(dir)
	if err != nil {
		t.Fatalf("watch of a directory not there yet: %v", err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	showsOf(t, tm)("no such directory yet")
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if err := runWatch(context.Background(), file, strings.NewReader(""), io.Discard); err == nil || !strings.Contains(err.Error(), file+" is not a directory") {
		t.Errorf("watch of a file: err %v", err)
	}
}

// On a directory of runs, watch lists them with where each stands and opens the one picked:
// here a sweep stopped by SIGINT, which the list and the watch view say was interrupted,
// with the settings from its ledger's experiment.
func TestWatchParentListsRunsAndShowsAnInterruptedOne(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep in a subprocess")
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "seed")
	writer, stderr := routerlabProcess(t, killSweepArgs(dir)...)
	exited := make(chan struct{})
	go func() { writer.Wait(); close(exited) }()
	if !waitFor(writer, exited, func() bool { return ledgerLines(dir) >= 4 }) {
		t.Fatalf("the sweep ended early: %s", stderr)
	}
	writer.Process.Signal(syscall.SIGINT)
	<-exited
	if err := os.Mkdir(filepath.Join(parent, "not-a-run"), 0o755); err != nil {
		t.Fatal(err)
	}
	picker, err := pickableRuns(parent)
	if err != nil || picker == nil {
		t.Fatalf("no run picker on %s: %v", parent, err)
	}
	if again, _ := pickableRuns(dir); again != nil {
		t.Fatal("a run directory itself opened the picker")
	}
	tm := teatest.NewTestModel(t, picker, teatest.WithInitialTermSize(160, 30))
	shows := showsOf(t, tm)
	shows("interrupted · interrupt signal received")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	shows("e2e ms runs") // the table: its rows come with the interrupted record
	tm.Type("q")
	final := ansi.Strip(tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).View().Content)
	for _, want := range []string{"interrupted · interrupt signal received", "at c=32 · 800 requests", "routerlab watch · " + dir} {
		if !strings.Contains(final, want) {
			t.Errorf("watch view of the interrupted run lacks %q:\n%s", want, final)
		}
	}
	if strings.Contains(final, "not-a-run") {
		t.Errorf("a directory without sweep files was listed")
	}
}

// showsOf returns a wait until tm's output read from then on has shown every text.
func showsOf(t *testing.T, tm *teatest.TestModel) func(texts ...string) {
	return func(texts ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			out := ansi.Strip(string(b))
			for _, text := range texts {
				if !strings.Contains(out, text) {
					return false
				}
			}
			return true
		}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
}
