package config

import (
	"strings"
	"testing"
)

// A DEP entry of parallel_configs runs: its workers are attention_dp ranks each (the report
// lists one row per rank), and a layout the model or the backend cannot run is refused at
// the entry's line.
func TestAttentionDPLayouts(t *testing.T) {
	seed := string(seedYAML)
	const tep = "    - {tp: 4, moe_ep: 4, replicas: 8}"
	if !strings.Contains(seed, tep) {
		t.Fatal("the seed's parallel_configs entry moved; update the test")
	}
	f, err := Parse([]byte(strings.Replace(seed, tep, "    - {tp: 2, attention_dp: 2, moe_ep: 4, replicas: 2}", 1)), "dep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, sum := runPoint(t, f, nil, 200)
	if cfg.Workers != 2 || cfg.Worker.AttentionDP != 2 || cfg.Worker.NumGPUBlocks <= 0 {
		t.Fatalf("workers %d, attention_dp %d, blocks per rank %d", cfg.Workers, cfg.Worker.AttentionDP, cfg.Worker.NumGPUBlocks)
	}
	if len(sum.Workers) != 4 || sum.RequestsCompleted != 200 {
		t.Fatalf("%d rows of workers (want 2 workers × 2 ranks), %d completed", len(sum.Workers), sum.RequestsCompleted)
	}
	for _, c := range []struct{ entry, extra, want string }{
		{"    - {tp: 2, attention_dp: 2, moe_ep: 4, replicas: 2}", "backend: [trtllm]", "dep.yaml:12: search_space.parallel_configs: deployment: backend trtllm: attention data parallelism runs with tp 1 only"},
		{"    - {tp: 1, attention_dp: 4, moe_ep: 4, replicas: 2}", "", "dep.yaml:12: search_space.parallel_configs: model: attention_dp 4 prices each rank from a table of tp 1"},
	} {
		text := strings.Replace(seed, tep, c.entry, 1)
		if c.extra != "" {
			text = strings.Replace(text, "backend: [vllm]", c.extra, 1)
		}
		f, err := Parse([]byte(text), "dep.yaml")
		if err == nil {
			_, err = NewExperiment(f)
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.entry, c.extra, err, c.want)
		}
	}
}
