package backend

import (
	"testing"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/tui"
)

// A window shows its most telling worker state: a failure over a start over a drain over off.
func TestFleetStatesWindow(t *testing.T) {
	snap := func(states ...string) engine.Snapshot {
		sn := engine.Snapshot{}
		for _, s := range states {
			sn.Workers = append(sn.Workers, engine.WorkerSnapshot{State: s})
		}
		return sn
	}
	snaps := []engine.Snapshot{snap("", "off"), snap("draining", "starting"), snap("", "failed"), snap("", "")}
	got := states(snaps, 2, 2, 2)
	want := [][]byte{{tui.StateDraining, tui.StateServing}, {tui.StateStarting, tui.StateFailed}}
	for w := range want {
		for c := range want[w] {
			if got[w][c] != want[w][c] {
				t.Fatalf("states %v, want %v", got, want)
			}
		}
	}
}
