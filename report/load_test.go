package report

import (
	"strings"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

// A replay that accounted for its decode time shows it, and its imbalance, on its page; one
// that did not has no such section.
func TestReplayPageShowsWhereDecodeTimeGoes(t *testing.T) {
	fp := config.Fingerprint{{Key: "workload.trace_path", Value: "t"}}
	s := engine.Summary{RequestsCompleted: 1, MeanTPOTMS: 10, Workers: []engine.WorkerSummary{{}, {}},
		Load: &engine.LoadSummary{MeanTPOTStallMS: 2.5, TPOTStallShare: 0.25, MeanDecodeStallMS: 300, DecodeImbalance: 1.25, BlockImbalance: 1.5,
			Workers: []engine.WorkerLoadShare{{MeanDecodes: 3, MeanKVBlocks: 100}, {MeanDecodes: 5, MeanKVBlocks: 200}}}}
	page, err := ReplayHTML(fp, &engine.Report{Summary: s}, config.Goal{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Where decode time goes", "2.50 ms of mean TPOT 10.00 ms", "25.0 %", "decode sequences 1.250", "KV blocks in use 1.500", "mean decode sequences"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	s.Load = nil
	page, err = ReplayHTML(fp, &engine.Report{Summary: s}, config.Goal{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "Where decode time goes") {
		t.Error("a replay without the load report has its section")
	}
}

// Snapshots that count decoding requests add their heatmap to the fleet's.
func TestFleetHeatmapsShowDecodingRequests(t *testing.T) {
	var sn []engine.Snapshot
	for i := range 20 {
		ws := []engine.WorkerSnapshot{{ActiveBlocks: 10, Running: 3, Decoding: i % 3}, {ActiveBlocks: 5, Running: 1, Decoding: 1}}
		sn = append(sn, engine.Snapshot{TimeUS: int64(i) * 1_000_000, Workers: ws})
	}
	figs, err := FleetHeatmaps("r", &engine.Report{Snapshots: sn}, FleetScale{})
	if err != nil || len(figs) != 3 || figs[2].Name != "decodes-r" || !strings.Contains(figs[2].Caption, "0 to 2,") {
		t.Fatalf("%d figures (%v): want the decoding-requests heatmap third, to 2", len(figs), err)
	}
}
