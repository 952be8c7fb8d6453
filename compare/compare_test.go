package compare

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

func TestMetricsListEverySummaryNumber(t *testing.T) {
	s := engine.Summary{MeanE2EMS: 5, WallTimeMS: 9, Goodput: &engine.Goodput{SLO: engine.SLO{TTFTMS: 200}, Good: 3, Attainment: 0.5, RequestsPerS: 1.5}}
	keys, vals := Metrics(s)
	for _, want := range []string{"requests_completed", "mean_e2e_latency_ms", "p99_itl_ms", "request_throughput_req_s",
		"prefix_cache_reused_ratio", "goodput.good_requests", "goodput.slo_attainment", "goodput.request_goodput_req_s"} {
		if !slices.Contains(keys, want) {
			t.Errorf("metrics lack %s: %v", want, keys)
		}
	}
	if slices.Contains(keys, "wall_time_ms") || slices.Contains(keys, "goodput.slo.ttft_ms") {
		t.Errorf("metrics list wall time or SLO targets: %v", keys)
	}
	if i := slices.Index(keys, "goodput.request_goodput_req_s"); vals[i] != 1.5 {
		t.Errorf("goodput %v", vals[i])
	}
	s.Disagg = &engine.DisaggSummary{MeanTransferMS: 4, Prefill: engine.PoolSummary{PrefixHitRatio: 0.5}, Decode: engine.PoolSummary{Workers: 3}}
	keys, vals = Metrics(s)
	for want, v := range map[string]float64{"disagg.mean_transfer_ms": 4, "disagg.prefill.prefix_hit_ratio": 0.5, "disagg.decode.workers": 3} {
		if i := slices.Index(keys, want); i < 0 || vals[i] != v {
			t.Errorf("a disaggregated replay's metrics lack %s = %v: %v", want, v, keys)
		}
	}
}

func comparison(base, other float64) *Comparison {
	c, _ := Compare(&Run{Summary: engine.Summary{MeanE2EMS: base, P99TTFTMS: 100}}, &Run{Summary: engine.Summary{MeanE2EMS: other, P99TTFTMS: 160}}, 1)
	return c
}

func TestFailIf(t *testing.T) {
	for _, c := range []struct {
		cond        string
		base, other float64
		holds       bool
	}{
		{"mean_e2e_latency_ms>+2%", 100, 102.5, true},
		{"mean_e2e_latency_ms>+2%", 100, 101.5, false},
		{"mean_e2e_latency_ms>+2%", 100, 90, false},
		{"mean_e2e_latency_ms<-5%", 100, 90, true},
		{"mean_e2e_latency_ms >= 10", 100, 110, true},
		{"p99_ttft_ms>50", 1, 1, true}, // 100 → 160 ms
		{"p99_ttft_ms>+60%", 1, 1, false},
	} {
		cond, err := ParseCondition(c.cond)
		if err != nil {
			t.Fatal(err)
		}
		holds, what, err := cond.Check(comparison(c.base, c.other))
		if err != nil || holds != c.holds {
			t.Errorf("%q on %v → %v: holds %v (%s), %v; want %v", c.cond, c.base, c.other, holds, what, err, c.holds)
		}
	}
	for _, bad := range []string{"mean_e2e_latency_ms", "mean_e2e_latency_ms>>2", "x=2%", "mean_e2e_latency_ms>2%%"} {
		if _, err := ParseCondition(bad); err == nil {
			t.Errorf("ParseCondition(%q) accepted", bad)
		}
	}
	cond, _ := ParseCondition("mean_e2e_latncy_ms>1")
	if _, _, err := cond.Check(comparison(1, 2)); err == nil || !strings.Contains(err.Error(), "mean_e2e_latency_ms") {
		t.Errorf("unknown metric: %v", err)
	}
	cond, _ = ParseCondition("requests_rejected>+1%")
	if _, _, err := cond.Check(comparison(1, 2)); err == nil || !strings.Contains(err.Error(), "0 in the baseline") {
		t.Errorf("relative change of a zero: %v", err)
	}
}

// The paired mean over the same requests is the difference of the means; settings that
// differ are listed.
func TestComparePairsRequests(t *testing.T) {
	recs := func(shift float64) []engine.RequestRecord {
		var out []engine.RequestRecord
		for i := range 200 {
			out = append(out, engine.RequestRecord{ID: i, TTFTMS: float64(10 + i%7), E2EMS: float64(100+i%13) + shift*float64(i%3), OutputLength: 1 + i%5})
		}
		return out
	}
	a := &Run{Path: "a", Requests: recs(0), Experiment: config.Fingerprint{{Key: "search_space.prefill_load_scale", Value: "1"}}}
	b := &Run{Path: "b", Requests: recs(3), Experiment: config.Fingerprint{{Key: "search_space.prefill_load_scale", Value: "4"}}}
	c, err := Compare(a, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Paired) != 3 || c.Paired[0].Metric != "e2e_latency_ms" {
		t.Fatalf("paired %+v (%s)", c.Paired, c.NoPairing)
	}
	var want float64
	for i := range 200 {
		want += 3 * float64(i%3)
	}
	want /= 200
	if p := c.Paired[0]; p.Requests != 200 || p.MeanMS < want-1e-9 || p.MeanMS > want+1e-9 || p.LowMS > p.MeanMS || p.HighMS < p.MeanMS {
		t.Errorf("paired e2e %+v, want mean %v", p, want)
	}
	if p := c.Paired[1]; p.MeanMS != 0 || p.LowMS != 0 || p.HighMS != 0 {
		t.Errorf("equal TTFTs give %+v, want 0 [0, 0]", p)
	}
	if len(c.Changes) != 1 || c.Changes[0].String() != "search_space.prefill_load_scale: 1 → 4" {
		t.Errorf("changes %v", c.Changes)
	}
	b.Requests = b.Requests[:50]
	if c, _ := Compare(a, b, 1); len(c.Paired) != 0 || !strings.Contains(c.NoPairing, "only 50 of 200") {
		t.Errorf("too few common requests: %+v %q", c.Paired, c.NoPairing)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "neither a replay directory") {
		t.Errorf("empty directory: %v", err)
	}
	bad := filepath.Join(dir, "x.json")
	os.WriteFile(bad, []byte(`{"mean_e2e_latency_ms": 3}`), 0o644)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "x.json: not a routerlab replay JSON") {
		t.Errorf("JSON without a fingerprint: %v", err)
	}
	rd := filepath.Join(dir, "run")
	os.MkdirAll(rd, 0o755)
	os.WriteFile(filepath.Join(rd, ReplayJSON), []byte(`{"experiment": {"routerlab_version": "x"}, "mean_e2e_latency_ms": 3}`), 0o644)
	os.WriteFile(filepath.Join(rd, ReplayRequests), []byte("{\"id\": 1}\nnot json\n"), 0o644)
	if _, err := Load(rd); err == nil || !strings.Contains(err.Error(), "requests.jsonl:2:") {
		t.Errorf("bad requests line: %v", err)
	}
}

// FuzzParseCondition: any --fail-if text parses or errors, never panics; a parsed condition
// names a metric and an operator it can apply.
func FuzzParseCondition(f *testing.F) {
	for _, s := range []string{"mean_e2e_latency_ms>+2%", "p99_ttft_ms<=-5", "x>=.5%", ">2", "a>b", "goodput.slo_attainment<-0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCondition(s)
		if err != nil {
			return
		}
		if c.Metric == "" || !slices.Contains([]string{">", ">=", "<", "<="}, c.Op) {
			t.Fatalf("ParseCondition(%q) = %+v", s, c)
		}
		if _, _, err := c.Check(comparison(1, 2)); err != nil && !strings.Contains(err.Error(), "no metric") && !strings.Contains(err.Error(), "0 in the baseline") {
			t.Fatalf("Check(%+v): %v", c, err)
		}
	})
}

// FuzzLoadReplay: any replay.json and requests.jsonl load or give an error naming the file.
func FuzzLoadReplay(f *testing.F) {
	f.Add([]byte(`{"experiment": {"routerlab_version": "x"}, "mean_e2e_latency_ms": 3}`), []byte(`{"id": 1, "e2e_latency_ms": 2}`+"\n"))
	f.Add([]byte(`{"experiment": []}`), []byte("x"))
	f.Fuzz(func(t *testing.T, js, reqs []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ReplayJSON), js, 0o644)
		os.WriteFile(filepath.Join(dir, ReplayRequests), reqs, 0o644)
		r, err := Load(dir)
		if err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if _, err := Compare(r, r, 1); err != nil {
			t.Fatalf("a run against itself: %v", err)
		}
	})
}
