package cli

import (
	"context"
	"fmt"
	"io"
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
(it writes and locks nothing there), so the writer can be killed and resumed under it.`,
		Example: `  routerlab sweep --out runs/seed &
  routerlab watch runs/seed`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWatch(cmd.Context(), args[0], cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

// runWatch follows the sweep in dir in the terminal behind stdin and stdout until q.
func runWatch(ctx context.Context, dir string, stdin io.Reader, stdout io.Writer) error {
	m, err := newWatch(dir)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	_, err = tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(stdin), tea.WithOutput(stdout)).Run()
	return err
}

// newWatch builds the watch view of the run directory dir.
func newWatch(dir string) (*tui.Watch, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("watch: %s is not a directory", dir)
	}
	palettes, err := themes.Cycle(os.Getenv)
	if err != nil {
		return nil, err
	}
	w := backend.NewDirWatcher(dir, backend.WatchEvery)
	return tui.NewWatch(tui.WatchOptions{Title: dir, Sweep: w, SweepInfo: w.Info(), Palettes: palettes}), nil
}
