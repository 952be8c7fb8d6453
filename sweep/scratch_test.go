package sweep

import (
	"bytes"
	"context"
	"testing"

	"github.com/routerlab/routerlab/config"
)

// freshSim is the experiment without RunIn: every simulation in fresh memory.
type freshSim struct{ Simulator }

// TestSlotMemorySweepIsTheFreshOne: a sweep on the real simulator whose slots reuse their
// replays' memory (slotMemory, engine.Scratch) writes the same files as one whose every
// replay starts in fresh memory, on one slot and on two.
func TestSlotMemorySweepIsTheFreshOne(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of simulation")
	}
	for _, slots := range []string{"1", "2"} {
		f := seedFile(t, "sweep.parallel_evals="+slots, "workload.search_requests=300",
			"validate.requests=1500", "sweep.max_rounds=2", "sweep.candidates_per_round=6")
		exp, err := config.NewExperiment(f)
		if err != nil {
			t.Fatal(err)
		}
		var outs []map[string]string
		for _, sim := range []Simulator{freshSim{exp}, exp} {
			dir := t.TempDir()
			if _, err := Run(context.Background(), f, sim, Options{Out: dir}); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, readOut(t, dir))
		}
		for name, a := range outs[0] {
			if b := outs[1][name]; a != b {
				t.Errorf("%s slots: %s differs between fresh memory and reused memory:\n%s\n---\n%s", slots, name, a, b)
			}
		}
	}
}

// TestRunFiguresDrawnAheadAreTheSame: the charts Validate draws beside the bootstraps give
// the report.html (and the --plots figures) that drawing them afterwards gives, twice over
// (the CLI renders them for the page and again for --plots).
func TestRunFiguresDrawnAheadAreTheSame(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of simulation")
	}
	f := seedFile(t, "workload.search_requests=300", "validate.requests=1500", "sweep.max_rounds=1", "sweep.candidates_per_round=4")
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), f, exp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Validation.built == nil {
		t.Fatal("Validate drew no charts ahead")
	}
	ahead, err := res.HTML()
	if err != nil {
		t.Fatal(err)
	}
	again, err := res.HTML()
	if err != nil {
		t.Fatal(err)
	}
	res.Validation.built = nil
	after, err := res.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ahead, after) || !bytes.Equal(again, after) {
		t.Errorf("report.html differs with the charts drawn ahead (%d, then %d bytes) and afterwards (%d bytes)", len(ahead), len(again), len(after))
	}
	if n := bytes.Count(after, []byte("<svg")); n < 10 {
		t.Errorf("report.html has %d charts, want the CDFs and heatmaps too", n)
	}
}
