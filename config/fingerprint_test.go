package config

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func TestFingerprintJSONKeepsOrderAndRoundTrips(t *testing.T) {
	fp := Fingerprint{{"z", "1"}, {"a", `quote " and | bar`}, {"m", ""}}
	b, err := json.Marshal(fp)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":"1","a":"quote \" and | bar","m":""}`; string(b) != want {
		t.Fatalf("encoding %s, want %s", b, want)
	}
	var back Fingerprint
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, fp) {
		t.Errorf("round trip %v, want %v", back, fp)
	}
	for _, bad := range []string{`[]`, `{"a":1}`, `{"a":"1","a":"2"}`, `{"":"x"}`, `{"a":"1"`, `"x"`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func TestDiffListsEachChangedKeyOldToNew(t *testing.T) {
	old := Fingerprint{{"a", "1"}, {"b", "2"}, {"c", "3"}}
	new := Fingerprint{{"a", "1"}, {"b", "20"}, {"d", "4"}}
	got := Diff(old, new)
	want := []Change{{"b", "2", "20"}, {"c", "3", "(absent)"}, {"d", "(absent)", "4"}}
	if !slices.Equal(got, want) {
		t.Errorf("Diff = %v, want %v", got, want)
	}
	if got[0].String() != "b: 2 → 20" {
		t.Errorf("change reads %q", got[0])
	}
	if d := Diff(old, old); len(d) != 0 {
		t.Errorf("Diff of equal fingerprints: %v", d)
	}
}

// Every setting the issue names changes exactly its own key of the fingerprint; run-time
// settings that do not change results (parallelism) change nothing.
func TestExperimentFingerprintNamesEverySetting(t *testing.T) {
	exp := func(sets ...string) *Experiment {
		t.Helper()
		f := Default()
		setAll(t, f, sets...)
		e, err := NewExperiment(f)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	base := exp().Fingerprint()
	for _, key := range []string{KeyVersion, "workload.trace_path", "workload.trace_digest", "workload.trace_requests", "timing_tables",
		"search_space.parallel_configs", "search_space.router_mode", "workload.replay_concurrency", "sweep.seed", "goal.target"} {
		if v, ok := base.Get(key); !ok || v == "" {
			t.Errorf("fingerprint lacks %s:\n%v", key, base)
		}
	}
	if v, _ := base.Get("search_space.prefill_load_scale"); v != "[0, 0.25, 0.5, 1, 2, 4, 8, 16, 32]" {
		t.Errorf("search space prefill_load_scale = %q", v)
	}
	for _, tc := range []struct {
		set  string
		keys []string
	}{
		{"workload.replay_concurrency=8", []string{"workload.replay_concurrency"}},
		{"workload.trace_path=builtin:conversation", []string{"workload.trace_path", "workload.trace_digest", "workload.trace_requests"}},
		{"parallel_configs=[{tp: 4, moe_ep: 4, replicas: 4}]", []string{"search_space.parallel_configs"}},
		{"parallel_configs=[{tp: 4, moe_tp: 4, replicas: 8}]", []string{"timing_tables", "search_space.parallel_configs"}},
		{"async_scheduling=true", []string{"search_space.async_scheduling"}},
		{"agg_max_num_batched_tokens=8192", []string{"search_space.agg_max_num_batched_tokens"}},
		{"agg_max_num_seqs=256", []string{"search_space.agg_max_num_seqs"}},
		{"context_length=65536", []string{"search_space.context_length"}},
		{"num_gpu_blocks=9000", []string{"search_space.num_gpu_blocks"}},
		{"block_size=32", []string{"search_space.block_size"}},
		{"router_temperature=[0.0, 0.1]", []string{"search_space.router_temperature"}},
		{"workload.seed=7", []string{"workload.seed"}},
		{"workload.search_requests=500", []string{"workload.search_requests"}},
		{"goal.max_ttft_ms=200", []string{"goal.max_ttft_ms"}},
		{"sweep.algorithm=grid", []string{"sweep.algorithm"}},
		{"validate.requests=1000", []string{"validate.requests"}},
		{"kv_cache_dtype=bf16", []string{"search_space.kv_cache_dtype"}},
		{"kv_cache_dtype=[fp8, auto]", []string{"search_space.kv_cache_dtype"}},
		{"sweep.parallel_evals=2", nil},
		{"overlap_score_credit=[0, 0.5, 1]", nil}, // the same numbers written differently
	} {
		var keys []string
		for _, c := range Diff(base, exp(tc.set).Fingerprint()) {
			keys = append(keys, c.Key)
		}
		if !slices.Equal(keys, tc.keys) {
			t.Errorf("--set %s changed %v, want %v", tc.set, keys, tc.keys)
		}
	}
}

func TestPointFingerprintDescribesOneReplay(t *testing.T) {
	e, err := NewExperiment(Default())
	if err != nil {
		t.Fatal(err)
	}
	fp := e.PointFingerprint(nil, 100)
	for key, want := range map[string]string{"search_space.prefill_load_scale": "0", "workload.requests": "100", "search_space.router_mode": "kv_router"} {
		if v, _ := fp.Get(key); v != want {
			t.Errorf("%s = %q, want %q", key, v, want)
		}
	}
	if _, ok := fp.Get("sweep.seed"); ok {
		t.Error("a replay's fingerprint names sweep settings")
	}
	if v, _ := e.PointFingerprint(nil, 0).Get("workload.requests"); v != "23608" {
		t.Errorf("whole trace: workload.requests = %q", v)
	}
}

func FuzzFingerprintJSON(f *testing.F) {
	f.Add([]byte(`{"routerlab_version":"devel","workload.seed":"42"}`))
	f.Add([]byte(`{"a":"1","a":"2"}`))
	f.Add([]byte(`{"a":{"b":"c"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fp Fingerprint
		if err := json.Unmarshal(data, &fp); err != nil {
			return
		}
		b, err := json.Marshal(fp)
		if err != nil {
			t.Fatal(err)
		}
		var back Fingerprint
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("re-reading %s: %v", b, err)
		}
		b2, _ := json.Marshal(back)
		if !bytes.Equal(b, b2) || len(Diff(fp, back)) != 0 {
			t.Fatalf("encoding not stable: %s vs %s", b, b2)
		}
		if len(back) != len(fp) {
			t.Fatalf("%d settings read back, %d written", len(back), len(fp))
		}
	})
}
