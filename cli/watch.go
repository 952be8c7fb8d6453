package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui"
	"github.com/routerlab/routerlab/tui/backend"
)

func newWatchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "watch DIR",
		Short: "Follow the sweep writing a run directory live, in the explorer's sweep view",
		Long: `watch opens the explorer's sweep view on a run directory and follows it as it grows: the
evaluations in ledger.jsonl, the phase in progress.json, the validation in summary.json once
the sweep is done. The sweep may be a headless routerlab sweep --out DIR in another terminal,
one on another machine writing a shared filesystem, or a finished one. watch only reads DIR
(it writes nothing there; it tests the lock for an instant only when the directory has stood
still for 2 s), so the writer can be killed and resumed under it: an interrupted or failed
sweep says so and why, and one whose writer died is shown as gone. On a directory of runs
(such as runs/, where the explorer and serve write theirs) watch lists them to pick from. A
directory that does not exist yet is waited for, as a sweep started next may create it.`,
		Example: `  routerlab sweep --out runs/seed &
  routerlab watch runs/seed
  routerlab watch runs          # pick one of the runs under runs/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWatch(cmd.Context(), args[0], cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

// runWatch follows the sweep in dir in the terminal behind stdin and stdout until q; on a
// directory of runs it first lets the user pick one.
func runWatch(ctx context.Context, dir string, stdin io.Reader, stdout io.Writer) error {
	var m tea.Model
	runs, err := pickableRuns(dir)
	if err != nil {
		return err
	}
	if runs != nil {
		m = runs
	} else if m, err = newWatch(dir); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	_, err = tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(stdin), tea.WithOutput(stdout)).Run()
	return err
}

// pickableRuns is the run picker when dir is a directory of runs rather than a run (nil
// otherwise: dir is watched, even empty, since a sweep may start writing it).
func pickableRuns(dir string) (*tui.Runs, error) {
	if backend.IsRunDir(dir) {
		return nil, nil
	}
	runs, err := backend.ListRuns(dir)
	if err != nil || len(runs) == 0 {
		return nil, nil // newWatch reports a missing directory
	}
	palettes, err := themes.Cycle(os.Getenv)
	if err != nil {
		return nil, err
	}
	return tui.NewRuns(tui.RunsOptions{Title: dir, Runs: runs, Palettes: palettes, Open: func(run string) *tui.Watch {
		w := backend.NewDirWatcher(run, backend.WatchEvery)
		return tui.NewWatch(tui.WatchOptions{Title: run, Sweep: w, SweepInfo: w.Info(), Palettes: palettes})
	}}), nil
}

// newWatch builds the watch view of the run directory dir.
func newWatch(dir string) (*tui.Watch, error) {
	st, err := os.Stat(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if err == nil && !st.IsDir() {
		return nil, fmt.Errorf("watch: %s is not a directory", dir)
	}
	palettes, err := themes.Cycle(os.Getenv)
	if err != nil {
		return nil, err
	}
	w := backend.NewDirWatcher(dir, backend.WatchEvery)
	return tui.NewWatch(tui.WatchOptions{Title: dir, Sweep: w, SweepInfo: w.Info(), Palettes: palettes}), nil
}
