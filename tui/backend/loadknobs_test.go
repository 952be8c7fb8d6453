package backend

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/tui"
)

// The explorer's load knobs are the experiment file's load keys, in the same order.
func TestLoadKnobsAreTheExperimentsKeys(t *testing.T) {
	var keys []string
	for _, s := range config.LoadKeys() {
		keys = append(keys, s.Key)
	}
	if !slices.Equal(tui.LoadKeys(), keys) {
		t.Fatalf("explorer load knobs %v, experiment keys %v", tui.LoadKeys(), keys)
	}
}

// Load knobs turned in the explorer reach the router's config, the replay command (only the
// changed ones) and the run, whose figures carry the decode stall and the imbalance.
func TestLoadKnobsReachTheRouter(t *testing.T) {
	_, s := smallExperiment(t, 600)
	k := s.Initial()
	if got := s.Space().Load[6].Values; !slices.Contains(got, "none") || !slices.Contains(got, "1") {
		t.Fatalf("router_queue_threshold steps through %v", got)
	}
	k.Concurrency = 256
	k.Load[6], k.Load[7] = "0", "wspt"
	cfg, _, err := s.Config(k)
	if err != nil {
		t.Fatal(err)
	}
	if q := cfg.Router.Load.QueueThreshold; q == nil || *q != 0 || cfg.Router.Load.QueuePolicy != "wspt" || !cfg.LoadReport {
		t.Fatalf("router load config %+v", cfg.Router.Load)
	}
	sets, err := s.ReplaySets(k)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(sets, " ")
	if !strings.Contains(line, "router_queue_threshold=0") || !strings.Contains(line, "router_queue_policy=wspt") || strings.Contains(line, "router_track_active_blocks") {
		t.Fatalf("replay sets %q: want the two changed load knobs only", line)
	}
	res, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Metrics; m.StallMS <= 0 || m.DecodeImbalance < 1 || m.BlockImbalance < 1 || len(res.Fleet.Decodes) != 8 {
		t.Fatalf("metrics %+v: want a decode stall, imbalances and a decode heatmap", m)
	}
}

// A sweep row that names load knobs loads them into the explorer's knobs.
func TestSweepRowLoadsLoadKnobs(t *testing.T) {
	k := knobs(map[string]string{"router_queue_threshold": "1.0", "router_queue_policy": "wspt"}, tui.Knobs{})
	if k.Load[6] != "1" || k.Load[7] != "wspt" || k.Load[0] != "" {
		t.Fatalf("load knobs %v", k.Load)
	}
}
