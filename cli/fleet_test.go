package cli

import (
	"encoding/json"
	"testing"
)

// A fleet past the router's old 64-worker mask replays end to end: the config accepts
// 1,024 replicas, every request completes, and the KV router spreads the load over more
// than 64 workers.
func TestReplayThousandWorkers(t *testing.T) {
	out, _, err := runCmd(t, newReplayCmd(), "--format", "json", "--requests", "3000",
		"--set", "workload.replay_concurrency=2048", "--set", "gpu_budget=4096",
		"--set", "parallel_configs=[{tp: 4, moe_ep: 4, replicas: 1024}]",
		"--set", "overlap_score_credit=1", "--set", "prefill_load_scale=1")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Completed int `json:"requests_completed"`
		Workers   []struct {
			Requests int `json:"requests"`
		} `json:"workers"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	busy := 0
	for _, w := range rep.Workers {
		if w.Requests > 0 {
			busy++
		}
	}
	if rep.Completed != 3000 || len(rep.Workers) != 1024 || busy <= 64 {
		t.Fatalf("%d requests completed on %d workers (%d busy), want 3000 on 1024 (> 64 busy)", rep.Completed, len(rep.Workers), busy)
	}
}
