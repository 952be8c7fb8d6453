package cli

import (
	"io"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui/backend"
)

// runExplorer opens the terminal explorer on f, simulating the first `requests` requests
// of its trace (0: workload.search_requests), in the terminal behind stdin and stdout.
func runExplorer(f *config.File, requests int, stdin io.Reader, stdout io.Writer) error {
	exp, err := config.NewExperiment(f)
	if err != nil {
		return err
	}
	palettes, err := themes.Cycle(os.Getenv)
	if err != nil {
		return err
	}
	m, err := backend.NewExplorer(exp, requests, palettes, nil)
	if err != nil {
		return err
	}
	_, err = tea.NewProgram(m, tea.WithInput(stdin), tea.WithOutput(stdout)).Run()
	return err
}
