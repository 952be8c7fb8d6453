// Package cli holds routerlab's commands. It only parses flags, builds the concrete
// simulator pieces and prints; every number comes from the packages below it.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Execute runs routerlab with the given arguments and returns the process exit status.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "routerlab:", err)
		var exit *exitError
		if errors.As(err, &exit) {
			return exit.code
		}
		return 1
	}
	return 0
}

// exitError carries a specific exit status (e.g. 2 for a failed validation target).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var x experimentFlags
	var headless bool
	root := &cobra.Command{
		Use:   "routerlab",
		Short: "Simulate and tune the KV-aware router of an LLM serving fleet",
		Long: `routerlab simulates a fleet of vLLM workers behind NVIDIA Dynamo's KV-aware router,
replays Mooncake traces through it, and tunes the router's knobs.

With no command it opens the terminal explorer on the embedded defaults (8 × MiniMax-M2.5
TP4/EP4 on B200, the built-in toolagent-like trace, 32 requests in flight). With --headless,
or when standard output is not a terminal, it runs the smart sweep of the same experiment
and prints its report instead.`,
		Args:              cobra.NoArgs,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return noNegativeNumbers(cmd.Flags()) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := x.file()
			if err != nil {
				return err
			}
			if headless || !isTerminal(stdout) {
				o := sweepOptions{requests: x.requests, again: experimentArgs(cmd.Flags(), "headless")}
				return runSweep(cmd.Context(), f, o, stdout, stderr)
			}
			return runExplorer(f, x.requests, stdin, stdout)
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	x.register(root.Flags(), "requests the explorer simulates (default: workload.search_requests, 2000)")
	root.Flags().BoolVar(&headless, "headless", false, "run the sweep and print its report instead of opening the explorer")
	root.AddCommand(newReplayCmd(), newSweepCmd(), newTraceCmd(), newModelCmd(), newServeCmd(), newWatchCmd(), newWorkerCmd())
	return root
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
