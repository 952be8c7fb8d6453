package backend

import (
	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui"
)

// ExplorerOptions configure an explorer on an experiment.
type ExplorerOptions struct {
	Requests int              // first requests of the trace each run replays (0: workload.search_requests)
	Palettes []themes.Palette // the themes `t` cycles through (themes.Cycle honours NO_COLOR and ROUTERLAB_THEME)
	Jobs     tui.Jobs         // the server's sweep registry as this session sees it (routerlab serve); nil: sweeps run here
	// Replay, when set, makes the command line `y` copies from a point's request count and
	// --set overrides (the caller knows how the explorer was started: config, trace, overrides).
	Replay func(requests int, sets []string) string
	// Runs is where sweeps started here write their run directories (explorer-TIME-N, with
	// ledger, progress.json and report, as `routerlab sweep --out` does); "": in memory.
	Runs string
}

// NewExplorer builds the explorer on exp at the file's knobs, with the smart sweep of the
// same file at the explorer's knobs. exp may be shared by several explorers (one per SSH
// session). wait, called after the program ends, returns once the sweeps it started have
// recorded how they ended.
func NewExplorer(exp *config.Experiment, o ExplorerOptions) (m *tui.Model, wait func(), err error) {
	sim, err := NewSim(exp, o.Requests)
	if err != nil {
		return nil, nil, err
	}
	sw := NewSweeper(sim)
	sw.runs = o.Runs
	info, err := sw.Info()
	if err != nil {
		return nil, nil, err
	}
	to := tui.Options{
		Title: sim.Title(), Space: sim.Space(), Initial: sim.Initial(),
		Sim: sim, Sweep: sw, SweepInfo: info, Jobs: o.Jobs,
		Palettes: o.Palettes,
	}
	if o.Replay != nil {
		to.Command = func(k tui.Knobs) (string, error) {
			sets, err := sim.ReplaySets(k)
			if err != nil {
				return "", err
			}
			return o.Replay(sim.Requests(), sets), nil
		}
	}
	return tui.New(to), sw.wg.Wait, nil
}
