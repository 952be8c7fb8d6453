package cli

import (
	"io"
	"os"
	"strconv"

	tea "charm.land/bubbletea/v2"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui/backend"
)

// explorerRuns is where the explorer's sweeps write their run directories, as serve's do by
// default: `routerlab watch runs/explorer-…` follows one, `sweep --resume` continues it.
const explorerRuns = "runs"

// runExplorer opens the terminal explorer on f, simulating the first `requests` requests
// of its trace (0: workload.search_requests), in the terminal behind stdin and stdout; args
// are the flags that made f (config, trace, overrides), for the replay command `y` copies.
func runExplorer(f *config.File, requests int, args []string, stdin io.Reader, stdout io.Writer) error {
	exp, err := config.NewExperiment(f)
	if err != nil {
		return err
	}
	palettes, err := themes.Cycle(os.Getenv)
	if err != nil {
		return err
	}
	m, wait, err := backend.NewExplorer(exp, backend.ExplorerOptions{Requests: requests, Palettes: palettes,
		Replay: replayCommand(args), Runs: explorerRuns})
	if err != nil {
		return err
	}
	_, err = tea.NewProgram(m, tea.WithInput(stdin), tea.WithOutput(stdout)).Run()
	wait() // a sweep stopped by quitting records that it was interrupted
	return err
}

// replayCommand makes the explorer's `y` command: `routerlab replay` with the flags that
// made the experiment, then the point's request count and overrides (later --set win).
func replayCommand(args []string) func(requests int, sets []string) string {
	return func(requests int, sets []string) string {
		cmd := append([]string{"routerlab", "replay"}, args...)
		cmd = append(cmd, "--requests", strconv.Itoa(requests))
		for _, s := range sets {
			cmd = append(cmd, "--set", s)
		}
		return shellJoin(cmd)
	}
}

// experimentOnly keeps the flags of args (as experimentArgs lists them) that say which
// experiment runs: --config, --trace, --set and --strict.
func experimentOnly(args []string) []string {
	var out []string
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--config", "--trace", "--set", "--strict":
			out = append(out, args[i], args[i+1])
		}
	}
	return out
}
