// Package planner is Dynamo's planner as a pure state machine: it receives ticks with the
// metrics the real planner would read (the frontend's traffic over its throughput interval,
// each engine's last forward pass at its load interval, the ready and expected worker
// counts) and answers with a replica count. It has no clock of its own; the engine calls it
// at the ticks it asks for, so a run stays deterministic.
//
// Modelled on ai-dynamo/dynamo components/src/dynamo/planner: core/state_machine.py
// (0272cbdd), core/load_scaling.py (0c6da1ec), core/throughput_scaling.py (0c9050c9),
// core/perf_model/base.py (439d6458) and agg.py (518a7027), core/load/predictors.py
// (260b6ae9), and the field reference docs/components/planner/planner-config-reference.mdx
// (08db9ac2). Spica's presets are docs/components/aisimulate/spica/search-space.md (4871677d).
// Aggregated pools only: prefill and decode pools scale separately once routerlab simulates
// disaggregated fleets.
package planner

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Optimisation targets (optimization_target). throughput, latency and load force load
// scaling on and throughput scaling off; sla honours the two flags.
const (
	TargetThroughput = "throughput"
	TargetLatency    = "latency"
	TargetLoad       = "load"
	TargetSLA        = "sla"
)

// Config is a PlannerConfig's fields that an aggregated pool reads. The zero value is the
// planner off (both scaling loops disabled): a static fleet.
type Config struct {
	Target            string  `json:"optimization_target,omitempty"`
	ThroughputScaling bool    `json:"enable_throughput_scaling,omitempty"`
	LoadScaling       bool    `json:"enable_load_scaling,omitempty"`
	ThroughputEveryS  float64 `json:"throughput_adjustment_interval_seconds,omitempty"`
	LoadEveryS        float64 `json:"load_adjustment_interval_seconds,omitempty"`
	TTFTMS            float64 `json:"ttft_ms,omitempty"`
	ITLMS             float64 `json:"itl_ms,omitempty"`

	MaxFPMSamples     int     `json:"max_num_fpm_samples,omitempty"`
	FPMBucketSize     int     `json:"fpm_sample_bucket_size,omitempty"`
	DownSensitivity   int     `json:"load_scaling_down_sensitivity,omitempty"`
	MinObservations   int     `json:"load_min_observations,omitempty"`
	MinEndpoint       int     `json:"min_endpoint,omitempty"`
	MaxGPUBudget      int     `json:"max_gpu_budget,omitempty"`
	DecodeScaleUpKV   float64 `json:"decode_scale_up_kv_rate,omitempty"`   // load target, percent
	DecodeScaleDownKV float64 `json:"decode_scale_down_kv_rate,omitempty"` // load target, percent

	Predictor Predictor `json:"predictor,omitzero"`
}

// Predictor is the load predictor of num_req, ISL and OSL (load_predictor and its family's
// fields).
type Predictor struct {
	Family       string  `json:"load_predictor,omitempty"`
	Log1p        bool    `json:"load_predictor_log1p,omitempty"`
	KalmanQLevel float64 `json:"kalman_q_level,omitempty"`
	KalmanQTrend float64 `json:"kalman_q_trend,omitempty"`
	KalmanR      float64 `json:"kalman_r,omitempty"`
	KalmanMin    int     `json:"kalman_min_points,omitempty"`
	ProphetW     int     `json:"prophet_window_size,omitempty"`
}

// On reports whether the planner scales the fleet at all.
func (c Config) On() bool { return c.ThroughputScaling || c.LoadScaling }

// Defaults fills what PlannerConfig defaults (planner-config-reference.mdx) where c leaves
// it zero.
func (c Config) Defaults() Config {
	def := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	defi := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	if c.Target == "" {
		c.Target = TargetThroughput
	}
	def(&c.ThroughputEveryS, 180)
	def(&c.LoadEveryS, 5)
	def(&c.TTFTMS, 500)
	def(&c.ITLMS, 50)
	defi(&c.MaxFPMSamples, 64)
	defi(&c.FPMBucketSize, 16)
	defi(&c.DownSensitivity, 80)
	defi(&c.MinObservations, 5)
	defi(&c.MinEndpoint, 1)
	defi(&c.MaxGPUBudget, 8)
	if c.Predictor.Family == "" {
		c.Predictor.Family = "constant"
	}
	p := &c.Predictor
	def(&p.KalmanQLevel, 1)
	def(&p.KalmanQTrend, 0.1)
	def(&p.KalmanR, 10)
	defi(&p.KalmanMin, 5)
	defi(&p.ProphetW, 50)
	// Anything but sla forces load scaling on and throughput scaling off
	// (planner-config-reference.mdx, "Optimization target").
	if c.On() && c.Target != TargetSLA {
		c.LoadScaling, c.ThroughputScaling = true, false
	}
	return c
}

// Validate checks a defaulted config as PlannerConfig's validators do.
func (c Config) Validate() error {
	switch {
	case !slices.Contains([]string{TargetThroughput, TargetLatency, TargetLoad, TargetSLA}, c.Target):
		return fmt.Errorf("optimization_target: %q is not one of throughput, latency, load, sla", c.Target)
	case !finitePos(c.LoadEveryS):
		return fmt.Errorf("load_adjustment_interval_seconds: %g must be positive", c.LoadEveryS)
	case !finitePos(c.ThroughputEveryS):
		return fmt.Errorf("throughput_adjustment_interval_seconds: %g must be positive", c.ThroughputEveryS)
	case c.ThroughputScaling && c.LoadScaling && c.LoadEveryS >= c.ThroughputEveryS:
		return fmt.Errorf("load_adjustment_interval_seconds: %g must be shorter than throughput_adjustment_interval_seconds %g when both scalings are on", c.LoadEveryS, c.ThroughputEveryS)
	case !finitePos(c.TTFTMS) || !finitePos(c.ITLMS):
		return fmt.Errorf("ttft_ms %g and itl_ms %g must be positive", c.TTFTMS, c.ITLMS)
	case c.MaxFPMSamples < 1:
		return fmt.Errorf("max_num_fpm_samples: %d must be positive", c.MaxFPMSamples)
	case c.FPMBucketSize < 1 || isqrt(c.FPMBucketSize)*isqrt(c.FPMBucketSize) != c.FPMBucketSize:
		return fmt.Errorf("fpm_sample_bucket_size: %d must be a perfect square", c.FPMBucketSize)
	case c.DownSensitivity < 0 || c.DownSensitivity > 100:
		return fmt.Errorf("load_scaling_down_sensitivity: %d must be in [0, 100]", c.DownSensitivity)
	case c.MinObservations < 1:
		return fmt.Errorf("load_min_observations: %d must be positive", c.MinObservations)
	case c.MinEndpoint < 1:
		return fmt.Errorf("min_endpoint: %d must be at least 1", c.MinEndpoint)
	case c.MaxGPUBudget < 1:
		return fmt.Errorf("max_gpu_budget: %d must be positive", c.MaxGPUBudget)
	case c.Target == TargetLoad && c.On() && !(c.DecodeScaleUpKV > c.DecodeScaleDownKV && c.DecodeScaleDownKV >= 0 && c.DecodeScaleUpKV <= 100):
		return fmt.Errorf("decode_scale_up_kv_rate %g and decode_scale_down_kv_rate %g: optimization_target load needs 0 <= down < up <= 100", c.DecodeScaleUpKV, c.DecodeScaleDownKV)
	}
	return c.Predictor.check()
}

func finitePos(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

func isqrt(n int) int { return int(math.Sqrt(float64(n))) }

// Refused names the predictor families routerlab does not implement, with the reason.
var Refused = map[string]string{
	"arima": "pmdarima's auto_arima chooses (p, d, q) by a stepwise AIC search over statsmodels' SARIMAX maximum-likelihood fits, " +
		"whose optimiser, start values and order grid would all have to be reproduced for the same forecasts; an ARIMA written afresh would be another predictor under its name",
	"prophet": "Prophet fits a piecewise-linear trend with changepoints and Fourier seasonality by Stan's L-BFGS MAP estimate (cmdstanpy); " +
		"without Stan's model and optimiser the forecasts would differ",
}

func (p Predictor) check() error {
	switch p.Family {
	case "constant":
		return nil
	case "kalman":
		switch {
		case !(p.KalmanQLevel >= 0) || !(p.KalmanQTrend >= 0) || !(p.KalmanR >= 0):
			return fmt.Errorf("kalman_q_level %g, kalman_q_trend %g, kalman_r %g must be >= 0", p.KalmanQLevel, p.KalmanQTrend, p.KalmanR)
		case p.KalmanMin < 1:
			return fmt.Errorf("kalman_min_points: %d must be positive", p.KalmanMin)
		}
		return nil
	}
	if why, ok := Refused[p.Family]; ok {
		return fmt.Errorf("load_predictor: %s is not implemented: %s", p.Family, why)
	}
	return fmt.Errorf("load_predictor: %q is not one of constant, kalman (arima and prophet are refused: docs/planner.md)", p.Family)
}

// ScalingPolicy is one planner_scaling_policy preset of Spica (SCALING_POLICIES).
type ScalingPolicy struct {
	Name                         string
	Throughput, Load             bool
	ThroughputEveryS, LoadEveryS float64
}

// ScalingPolicies are Spica's planner_scaling_policy presets.
var ScalingPolicies = []ScalingPolicy{
	{"disabled", false, false, 0, 0},
	{"throughput_180_5", true, false, 180, 5},
	{"throughput_600_5", true, false, 600, 5},
	{"load_180_5", false, true, 180, 5},
	{"load_180_10", false, true, 180, 10},
	{"hybrid_180_5", true, true, 180, 5},
	{"hybrid_600_5", true, true, 600, 5},
}

// FPMSamplings are planner_fpm_sampling's presets: max_num_fpm_samples, fpm_sample_bucket_size.
var FPMSamplings = map[string][2]int{"small": {32, 4}, "default": {64, 16}, "large": {128, 16}, "fine": {128, 64}}

// LoadSensitivities are planner_load_sensitivity's presets: load_scaling_down_sensitivity,
// load_min_observations.
var LoadSensitivities = map[string][2]int{"aggressive": {70, 3}, "default": {80, 5}, "conservative": {90, 8}}

// Predictors are load_predictor_candidates' presets (LOAD_PREDICTOR_PRESETS).
var Predictors = map[string]Predictor{
	"constant_last":         {Family: "constant"},
	"arima_raw":             {Family: "arima"},
	"arima_log1p":           {Family: "arima", Log1p: true},
	"prophet_w20_raw":       {Family: "prophet", ProphetW: 20},
	"prophet_w20_log1p":     {Family: "prophet", Log1p: true, ProphetW: 20},
	"prophet_w50_raw":       {Family: "prophet", ProphetW: 50},
	"prophet_w50_log1p":     {Family: "prophet", Log1p: true, ProphetW: 50},
	"kalman_default_raw":    {Family: "kalman", KalmanQLevel: 1, KalmanQTrend: 0.1, KalmanR: 10, KalmanMin: 5},
	"kalman_default_log1p":  {Family: "kalman", Log1p: true, KalmanQLevel: 1, KalmanQTrend: 0.1, KalmanR: 10, KalmanMin: 5},
	"kalman_reactive_raw":   {Family: "kalman", KalmanQLevel: 10, KalmanQTrend: 1, KalmanR: 5, KalmanMin: 3},
	"kalman_reactive_log1p": {Family: "kalman", Log1p: true, KalmanQLevel: 10, KalmanQTrend: 1, KalmanR: 5, KalmanMin: 3},
}

// Policy looks a planner_scaling_policy preset up.
func Policy(name string) (ScalingPolicy, error) {
	for _, p := range ScalingPolicies {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, len(ScalingPolicies))
	for i, p := range ScalingPolicies {
		names[i] = p.Name
	}
	return ScalingPolicy{}, fmt.Errorf("unknown planner_scaling_policy %q (want one of %s, or a dict of enable_throughput_scaling, enable_load_scaling, throughput_adjustment_interval_seconds, load_adjustment_interval_seconds)", name, strings.Join(names, ", "))
}

// Apply sets p's scaling flags and intervals on c (a disabled policy keeps c's intervals).
func (p ScalingPolicy) Apply(c *Config) {
	c.ThroughputScaling, c.LoadScaling = p.Throughput, p.Load
	if p.ThroughputEveryS > 0 {
		c.ThroughputEveryS, c.LoadEveryS = p.ThroughputEveryS, p.LoadEveryS
	}
}

// TargetForGoal is the optimisation target Spica derives from a sweep goal
// (OptimizationTarget.planner_optimization_target): goodput goals give sla, e2e latency gives
// latency, throughput goals and pareto give throughput.
func TargetForGoal(goal string) string {
	switch goal {
	case "goodput", "goodput_per_gpu":
		return TargetSLA
	case "e2e_latency":
		return TargetLatency
	}
	return TargetThroughput
}
