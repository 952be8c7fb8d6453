package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/routerlab/routerlab/trace"
)

func TestWriteRequests(t *testing.T) {
	var buf bytes.Buffer
	recs := []RequestRecord{{ID: 3, Worker: 1, ArrivalMS: 0.5, TTFTMS: 1.25, E2EMS: 2, InputLength: 10, OutputLength: 2, CachedTokens: 0}}
	if err := WriteRequests(&buf, recs); err != nil {
		t.Fatal(err)
	}
	want := `{"id":3,"worker":1,"arrival_ms":0.5,"ttft_ms":1.25,"e2e_latency_ms":2,"input_length":10,"output_length":2,"cached_tokens":0,"preemptions":0}` + "\n"
	if buf.String() != want {
		t.Errorf("got %s", buf.String())
	}
}

func TestSummaryKeys(t *testing.T) {
	b, err := json.Marshal(Summary{Workers: []WorkerSummary{{}}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := []string{"requests_completed", "requests_rejected", "duration_ms", "wall_time_ms", "request_throughput_req_s", "output_throughput_tok_s",
		"input_throughput_tok_s", "prefix_cache_reused_ratio", "mean_output_tok_s_per_user", "workers"}
	for _, p := range []string{"mean_", "p50_", "p90_", "p99_"} {
		for _, k := range []string{"ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms"} {
			keys = append(keys, p+k)
		}
	}
	if len(m) != len(keys) {
		t.Errorf("summary has %d keys, want %d: %s", len(m), len(keys), b)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %s", k)
		}
	}
	w := m["workers"].([]any)[0].(map[string]any)
	for _, k := range []string{"requests", "prompt_tokens", "reused_tokens", "peak_blocks", "preemptions"} {
		if _, ok := w[k]; !ok {
			t.Errorf("missing worker key %s", k)
		}
	}
}

func TestPercentileNearestRank(t *testing.T) {
	v := []int64{5000, 1000, 4000, 2000, 3000}
	mean, p50, p90, p99 := intStats(v)
	if mean != 3 || p50 != 3 || p90 != 5 || p99 != 5 {
		t.Errorf("got %v %v %v %v", mean, p50, p90, p99)
	}
	var h gapHist
	h.add(10, 3)
	h.add(2_000_000, 1)
	mean, p50, p90, p99 = h.stats()
	if p50 != 0.01 || p90 != 2000 || p99 != 2000 || mean != 500.008 {
		t.Errorf("hist got %v %v %v %v", mean, p50, p90, p99)
	}
}

// Snapshots of the chunked-prefill timeline (steps end at 228, 400, 501, 602 µs); none
// after the last completion.
func TestSnapshots(t *testing.T) {
	timer := &fakeTimer{base: 100, perToken: 1}
	tr := &trace.Trace{Name: "t", BlockSize: 512, Requests: []trace.Request{req(0, 200, 3, 7)}}
	cfg := Config{Workers: 1, Worker: deployment(100, 128, 8), ReplayConcurrency: 1, SnapshotEveryUS: 250}
	for _, stepwise := range []bool{true, false} {
		s := newSim(cfg, timer, tr, &fixedRouter{workers: 1})
		s.stepwise = stepwise
		rep, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := []Snapshot{
			{TimeUS: 250, Workers: []WorkerSnapshot{{ActiveBlocks: 4, QueuedPrefillTokens: 72, Running: 1}}},
			{TimeUS: 500, Workers: []WorkerSnapshot{{ActiveBlocks: 4, Running: 1, Decoding: 1}}}, // first token at 400
		}
		got := rep.Snapshots
		if len(got) != len(want) {
			t.Fatalf("snapshots %+v", got)
		}
		for i := range want {
			if got[i].TimeUS != want[i].TimeUS || got[i].Completed != want[i].Completed || got[i].Workers[0] != want[i].Workers[0] {
				t.Errorf("stepwise=%v snapshot %d: %+v, want %+v", stepwise, i, got[i], want[i])
			}
		}
	}
}

// The per-user output rate is the mean of 1 ÷ gap over gaps longer than zero, the dense and
// the long ones alike: gaps of 0, 10 ms, 10 ms and 100 ms give (100 + 100 + 10) ÷ 3 tok/s.
func TestGapHistPerUser(t *testing.T) {
	var h gapHist
	if got := h.perUser(); got != 0 {
		t.Errorf("empty histogram: %v, want 0", got)
	}
	h.add(0, 1)
	h.add(10_000, 2)
	h.add(100_000, 1)
	if got := h.perUser(); math.Abs(got-70) > 1e-9 {
		t.Errorf("got %v tok/s, want 70", got)
	}
}
