package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/planner"
)

// The planner's keys: presets and dicts parse, a fleet is built only when something changes
// it, the fingerprint leaves the keys out at their defaults, and bad values name their line.
func TestPlannerKeys(t *testing.T) {
	seed := Default()
	base := seed.Fingerprint()
	for _, k := range []string{"startup_time", "migration_limit", "worker_failures", "planner_load_sensitivity", "load_predictor"} {
		if _, ok := base.Get("search_space." + k); ok {
			t.Fatalf("%s in the seed's fingerprint", k)
		}
	}
	exp, err := NewExperiment(seed)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := exp.EngineConfig(seed.DefaultPoint())
	if err != nil || cfg.Fleet != nil {
		t.Fatalf("seed: fleet %+v, error %v; want none", cfg.Fleet, err)
	}

	f := Default()
	err = f.Apply([]string{
		"goal.sla.ttft_ms=1500", "goal.sla.tpot_ms=50", "startup_time=120", "migration_limit=2",
		"planner_scaling_policy=[{enable_throughput_scaling: true, enable_load_scaling: true, throughput_adjustment_interval_seconds: 300, load_adjustment_interval_seconds: 10}]",
		"planner_load_sensitivity=conservative", "load_predictor=kalman_reactive_log1p",
		"worker_failures=[{at_s: 30, worker: 1}]",
	})
	if err != nil {
		t.Fatal(err)
	}
	fp := f.Fingerprint()
	if v, _ := fp.Get("search_space.startup_time"); v != "120" {
		t.Fatalf("fingerprint startup_time %q", v)
	}
	if v, _ := fp.Get("search_space.worker_failures"); v != "{at_s: 30, worker: 1}" {
		t.Fatalf("fingerprint worker_failures %q", v)
	}
	exp, err = NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = exp.EngineConfig(f.DefaultPoint())
	if err != nil {
		t.Fatal(err)
	}
	fl := cfg.Fleet
	if fl == nil || fl.StartupUS != 120e6 || fl.MigrationLimit != 2 || fl.Slots != 8 || fl.GPUsPerWorker != 4 || len(fl.Failures) != 1 || fl.Failures[0].AtUS != 30e6 {
		t.Fatalf("fleet %+v", fl)
	}
	p := fl.Planner
	if p.Target != planner.TargetSLA || !p.ThroughputScaling || !p.LoadScaling || p.ThroughputEveryS != 300 || p.LoadEveryS != 10 ||
		p.TTFTMS != 1500 || p.ITLMS != 50 || p.DownSensitivity != 90 || p.MinObservations != 8 || p.Predictor.Family != "kalman" || !p.Predictor.Log1p || p.MaxGPUBudget != 32 {
		t.Fatalf("planner %+v", p)
	}

	for _, c := range []struct{ set, want string }{
		{"planner_scaling_policy=hybrid_180_5", "needs an SLA"},
		{"planner_scaling_policy=[load_9_9]", `unknown planner_scaling_policy "load_9_9"`},
		{"planner_scaling_policy=[{enable_load_scaling: true}]", "missing enable_throughput_scaling"},
		{"planner_scaling_policy=[{enable_throughput_scaling: false, enable_load_scaling: true, throughput_adjustment_interval_seconds: 0, load_adjustment_interval_seconds: 5}]", "throughput_adjustment_interval_seconds"},
		{"load_predictor=arima_raw", "arima is not implemented"},
		{"load_predictor=prophet_w20_log1p", "prophet is not implemented"},
		{"planner_load_sensitivity={load_scaling_down_sensitivity: 80}", "missing load_min_observations"},
		{"worker_failures=[{at_s: -1, worker: 0}]", "at_s"},
		{"worker_failures={rate_per_hour: x}", "rate_per_hour"},
		{"startup_time=-3", "startup_time"},
		{"planner_load_sensitivity={load_scaling_down_sensitivity: x, load_min_observations: 3}", "load_scaling_down_sensitivity"},
		{"planner_fpm_sampling={max_num_fpm_samples: 32, fpm_sample_bucket_size: 5}", "perfect square"},
	} {
		err := Default().Apply([]string{c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: error %v, want %q", c.set, err, c.want)
		}
	}
	// A bad value in a file names its line.
	_, err = Parse([]byte("search_space:\n  model_name: MiniMaxAI/MiniMax-M2.5\n  hardware_sku: b200_sxm\n  planner_scaling_policy:\n    - disabled\n    - sometimes\n"), "x.yaml")
	if err == nil || !strings.Contains(err.Error(), "x.yaml:6: search_space.planner_scaling_policy") {
		t.Fatalf("file error %v", err)
	}
}

// A changing fleet refuses worker failures in a disaggregated fleet and KV tiers, naming
// the key; a disaggregated fleet that the planner scales or whose workers take time to
// start is accepted.
func TestFleetRefusesDisaggFailuresAndTiers(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string // "": accepted
	}{
		{[]string{"deployment_mode=disagg", split, "worker_failures={rate_per_hour: 1}"}, "search_space.worker_failures: worker failures are not modelled with deployment_mode disagg"},
		{[]string{"deployment_mode=disagg", split, "startup_time=60"}, ""},
		{[]string{"deployment_mode=disagg", split, "router_mode=kv_router", "router_conditional_disagg=true", "startup_time=60"}, "search_space.router_conditional_disagg: conditional disaggregation with a fleet that changes (startup_time) is not modelled"},
		{[]string{"deployment_mode=disagg", split, "planner_scaling_policy=[disabled, load_180_5]"}, ""},
		{[]string{"num_g2_blocks=[0, 32768]", "worker_failures={rate_per_hour: 1}"}, "search_space.num_g2_blocks: 32768 with a fleet that changes (worker_failures) is not modelled"},
		{[]string{"num_g2_blocks=32768", "planner_scaling_policy=load_180_5"}, "(planner_scaling_policy) is not modelled"},
		{[]string{"deployment_mode=disagg", split, "planner_scaling_policy=disabled", "migration_limit=3"}, ""},
		{[]string{"num_g2_blocks=32768", "startup_time=0"}, ""},
		{[]string{"startup_time=60", "num_g2_blocks=0"}, ""},
	} {
		err := Default().Apply(c.sets)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("--set %v: error %v, want %q", c.sets, err, c.want)
		}
	}
}

// A disaggregated point under the planner: each pool may grow to what the 32-GPU budget
// holds beside one worker of the other (TP4 prefill and decode: 7 slots each), and the
// point's initial replicas serve.
func TestDisaggPlannerFleet(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"deployment_mode=disagg", split, "startup_time=90", "planner_scaling_policy=load_180_5"}); err != nil {
		t.Fatal(err)
	}
	exp, err := NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := exp.EngineConfig(f.DefaultPoint())
	if err != nil {
		t.Fatal(err)
	}
	fl := cfg.Fleet
	if cfg.Disagg == nil || fl == nil || fl.Slots != 7 || fl.DecodeSlots != 7 || fl.GPUsPerWorker != 4 || fl.DecodeGPUsPerWorker != 4 ||
		fl.StartupUS != 90e6 || !fl.Planner.LoadScaling || fl.Planner.MaxGPUBudget != 32 || cfg.Workers != 1 || cfg.Disagg.DecodeWorkers != 1 {
		t.Fatalf("workers %d, disagg %+v, fleet %+v", cfg.Workers, cfg.Disagg, fl)
	}
}

// planner_load_sensitivity and planner_fpm_sampling are lists of presets and dicts, as
// Spica spells them: searched while some policy scales the fleet, left out of the
// dimensions when none does, each point's value reaching the planner; the default is left
// out of the fingerprint.
func TestPlannerCompositesSearched(t *testing.T) {
	f := Default()
	err := f.Apply([]string{
		"planner_scaling_policy=[disabled, load_180_5]",
		"planner_load_sensitivity=[aggressive, {load_scaling_down_sensitivity: 0, load_min_observations: 4}]",
		"planner_fpm_sampling=[small, fine]",
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, d := range f.Dimensions() {
		keys = append(keys, d.Key)
	}
	pol := slices.Index(keys, "planner_scaling_policy")
	if want := "planner_load_sensitivity planner_fpm_sampling"; pol < 0 || !strings.HasSuffix(strings.Join(keys, " "), want) {
		t.Fatalf("dimensions %v, want planner_scaling_policy and ending in %s", keys, want)
	}
	exp, err := NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	p := make(Point, len(keys))
	p[pol], p[len(p)-2], p[len(p)-1] = 1, 1, 1 // load_180_5, the dict, fine
	cfg, err := exp.EngineConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Fleet.Planner; c.DownSensitivity != 0 || c.MinObservations != 4 || c.MaxFPMSamples != 128 || c.FPMBucketSize != 64 {
		t.Fatalf("planner %+v, want sensitivity 0 (never scale down), 4 observations, 128 samples in 64 buckets", c)
	}
	p[len(p)-2], p[len(p)-1] = 0, 0
	if cfg, _ = exp.EngineConfig(p); cfg.Fleet.Planner.DownSensitivity != 70 || cfg.Fleet.Planner.MaxFPMSamples != 32 {
		t.Fatalf("aggressive, small: planner %+v", cfg.Fleet.Planner)
	}
	if v, _ := f.Fingerprint().Get("search_space.planner_fpm_sampling"); v != "[small, fine]" {
		t.Fatalf("fingerprint planner_fpm_sampling %q", v)
	}

	off := Default()
	if err := off.Apply([]string{"planner_load_sensitivity=[aggressive, conservative]"}); err != nil {
		t.Fatal(err)
	}
	for _, d := range off.Dimensions() {
		if d.Key == KeyPlannerLoadSensitivity {
			t.Fatal("planner_load_sensitivity searched with every policy disabled")
		}
	}
	if _, ok := Default().Fingerprint().Get("search_space.planner_load_sensitivity"); ok {
		t.Fatal("the default sensitivity in the fingerprint")
	}
	for _, c := range []struct{ set, want string }{
		{"planner_fpm_sampling=[small, small]", `value "small" listed twice`},
		{"planner_fpm_sampling=[{max_num_fpm_samples: 64, fpm_sample_bucket_size: 8}]", "fpm_sample_bucket_size: \"8\" must be an integer in [1, 1048576], a perfect square"},
		{"planner_load_sensitivity=[twitchy]", `unknown preset "twitchy"`},
	} {
		if err := Default().Apply([]string{c.set}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: error %v, want %q", c.set, err, c.want)
		}
	}
}
