package backend

import (
	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui"
)

// NewExplorer builds the explorer on exp: the first `requests` requests of its trace (0: the
// file's workload.search_requests) at the file's knobs, with the smart sweep of the same
// file at the explorer's knobs. palettes are the themes `t` cycles through (themes.Cycle
// honours NO_COLOR and ROUTERLAB_THEME). exp may be shared by several explorers (one per SSH
// session); jobs, when set, is the server's sweep registry as this session sees it. replay,
// when set, makes the command line `y` copies from the request count and --set overrides of
// a point (the caller knows how the explorer was started: config file, trace, overrides).
func NewExplorer(exp *config.Experiment, requests int, palettes []themes.Palette, jobs tui.Jobs, replay func(requests int, sets []string) string) (*tui.Model, error) {
	sim, err := NewSim(exp, requests)
	if err != nil {
		return nil, err
	}
	sw := NewSweeper(sim)
	info, err := sw.Info()
	if err != nil {
		return nil, err
	}
	o := tui.Options{
		Title: sim.Title(), Space: sim.Space(), Initial: sim.Initial(),
		Sim: sim, Sweep: sw, SweepInfo: info, Jobs: jobs,
		Palettes: palettes,
	}
	if replay != nil {
		o.Command = func(k tui.Knobs) (string, error) {
			sets, err := sim.ReplaySets(k)
			if err != nil {
				return "", err
			}
			return replay(sim.Requests(), sets), nil
		}
	}
	return tui.New(o), nil
}
