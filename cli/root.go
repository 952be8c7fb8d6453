// Package cli holds routerlab's commands. It only parses flags, builds the concrete
// simulator pieces and prints; every number comes from the packages below it.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/model"
)

// Execute runs routerlab with the given arguments and returns the process exit status.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(args, stdin, stdout, stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "routerlab:", terminalSafe(err.Error()))
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

func newRootCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var x experimentFlags
	var headless, version bool
	root := &cobra.Command{
		Use:   "routerlab",
		Short: "Simulate and tune the KV-aware router of an LLM serving fleet",
		Long: `routerlab simulates a fleet of vLLM workers behind NVIDIA Dynamo's KV-aware router,
replays Mooncake traces through it, and tunes the router's knobs.

With no command it opens the terminal explorer on the embedded defaults (8 × MiniMax-M2.5
TP4/EP4 on B200, the built-in toolagent-like trace, 32 requests in flight). With --headless
it runs the smart sweep of the same experiment and prints its report instead. When standard
output is not a terminal it refuses (exit status 2) rather than start a whole sweep nobody
asked for: say 'routerlab sweep' or 'routerlab --headless'.`,
		Args:              unknownCommand,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return noNegativeNumbers(cmd.Flags()) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			if version {
				_, err := io.WriteString(stdout, versionText(false))
				return err
			}
			f, err := x.file()
			if err != nil {
				return err
			}
			if headless {
				o := sweepOptions{requests: x.requests, again: experimentArgs(cmd.Flags(), "headless")}
				return runSweep(cmd.Context(), f, o, stdout, stderr)
			}
			if !isTerminal(stdout) {
				return &exitError{code: 2, err: errors.New("standard output is not a terminal, so there is no explorer to open; " +
					"run 'routerlab sweep' (or 'routerlab --headless') for the headless sweep and its report, 'routerlab replay' for one run")}
			}
			return runExplorer(f, x.requests, experimentOnly(experimentArgs(cmd.Flags())), stdin, stdout)
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return flagError(root, c, args, err) })
	root.SuggestionsMinimumDistance = 2
	root.SetArgs(args)
	root.Flags().BoolVar(&version, "version", false, "print the version, commit and simulator digest ('routerlab version --tables' lists the embedded timing tables)")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	x.register(root, "requests the explorer simulates (default: workload.search_requests, 2000)")
	root.Flags().BoolVar(&headless, "headless", false, "run the sweep and print its report instead of opening the explorer")
	root.AddCommand(newVersionCmd(), newReplayCmd(), newSweepCmd(), newCompareCmd(), newCurveCmd(), newVaryCmd(), newTraceCmd(), newModelCmd(), newServeCmd(), newWatchCmd(), newWorkerCmd())
	return root
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// unknownCommand is the root's argument check: it takes none, and a word that is not a
// command gets the nearest command names.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return fmt.Errorf("unknown command %q for %q%s", args[0], cmd.CommandPath(), didYouMean(cmd.SuggestionsFor(args[0])))
}

// flagError explains a flag the command does not have: when the first word was meant as a
// command but misspelt ("swep --out x"), the misspelt command, else the nearest flag names.
func flagError(root, c *cobra.Command, args []string, err error) error {
	name, unknown := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !unknown {
		return err
	}
	if c == root {
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				break
			}
			if s := root.SuggestionsFor(a); len(s) > 0 {
				return fmt.Errorf("unknown command %q for %q%s", a, root.CommandPath(), didYouMean(s))
			}
		}
	}
	var near []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if d := levenshtein.ComputeDistance(name, f.Name); d <= max(1, len(name)/3) || strings.HasPrefix(f.Name, name) {
			near = append(near, "--"+f.Name)
		}
	})
	return fmt.Errorf("%w%s", err, didYouMean(near))
}

func didYouMean(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(s, " or ") + "?)"
}

// newVersionCmd is `routerlab version`: what --version prints, and with --tables every
// embedded timing table with its SHA-256.
func newVersionCmd() *cobra.Command {
	var tables bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and simulator digest (--tables: the embedded timing tables too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), versionText(tables))
			return err
		},
	}
	cmd.Flags().BoolVar(&tables, "tables", false, "also list every embedded timing table with its SHA-256 (the simulator digest covers them)")
	return cmd
}

// versionText is what --version prints: the version string, the commit the build was made
// from, and the simulator digest; with tables, the embedded tables behind the digest, else
// their count. Two builds that print the same digest simulate alike; the version and commit
// alone cannot say so (every local build is "devel", every dirty one of a commit looks the
// same).
func versionText(tables bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "routerlab %s\n", config.Version())
	rev, at, dirty := "unknown (built without VCS information)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = " (" + s.Value + ")"
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty {
		at += ", with uncommitted changes"
	}
	fmt.Fprintf(&b, "commit    %s%s\n", rev, at)
	fmt.Fprintf(&b, "simulator %s\n", config.SimulatorDigest())
	digests := model.EmbeddedTableDigests()
	if tables {
		fmt.Fprintf(&b, "tables\n")
		for _, t := range digests {
			fmt.Fprintf(&b, "  %s\n", t)
		}
	} else {
		fmt.Fprintf(&b, "tables    %d embedded (routerlab version --tables lists them)\n", len(digests))
	}
	fmt.Fprintf(&b, "go        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}
