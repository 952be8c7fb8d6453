package config

// The planner's and the worker lifecycle's keys (engine/fleet.go, planner): Spica's
// planner_scaling_policy presets and composite dicts, its pinned planner scalars, start-up
// time, failures and migration. At their defaults (planner disabled, no failures, start-up
// 0) no fleet is simulated and the fingerprint leaves them out.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/planner"
)

// PlannerSettings are search_space's pinned planner and lifecycle scalars.
type PlannerSettings struct {
	StartupTimeS    float64
	MigrationLimit  int
	Failures        []engine.Failure // worker_failures: at given times
	FailuresPerHour float64          // worker_failures: a seeded rate per worker
	Target          string           // planner_optimization_target; "": from the goal
	LoadPredictor   string
}

// The planner's composite list keys beside planner_scaling_policy: Spica searches each, a
// preset id or a dict of its fields (search-space.md, 4871677d).
const (
	KeyPlannerLoadSensitivity = "planner_load_sensitivity"
	KeyPlannerFPMSampling     = "planner_fpm_sampling"
)

// plannerListKeys are the composite list keys, after every other list key (a file that
// leaves them at default keeps its points' coordinates).
var plannerListKeys = []string{KeyPlannerLoadSensitivity, KeyPlannerFPMSampling}

// compositeFields are each composite's dict keys, and its presets.
var compositeFields = map[string]struct {
	keys    []string
	presets map[string][2]int
}{
	KeyPlannerLoadSensitivity: {[]string{"load_scaling_down_sensitivity", "load_min_observations"}, planner.LoadSensitivities},
	KeyPlannerFPMSampling:     {[]string{"max_num_fpm_samples", "fpm_sample_bucket_size"}, planner.FPMSamplings},
}

// policyKeys are a planner_scaling_policy dict's keys, all required (COMPOSITE_REQUIRED_KEYS).
var policyKeys = []string{"enable_throughput_scaling", "enable_load_scaling", "throughput_adjustment_interval_seconds", "load_adjustment_interval_seconds"}

// setPlanner reads the planner's keys; ok reports whether key is one.
func (f *File) setPlanner(path, key string, n ast.Node) (ok bool, err error) {
	p := &f.Planner
	switch key {
	case "planner_scaling_policy":
		return true, f.setPolicies(path, n)
	case "startup_time":
		return true, f.number(path, n, &p.StartupTimeS, 0, 86400)
	case "migration_limit":
		return true, f.integer(path, n, &p.MigrationLimit, 0, 255)
	case "worker_failures":
		return true, f.setFailures(path, n)
	case "planner_optimization_target":
		return true, f.oneOf(path, n, &p.Target, []string{planner.TargetThroughput, planner.TargetLatency, planner.TargetLoad, planner.TargetSLA})
	case KeyPlannerLoadSensitivity, KeyPlannerFPMSampling:
		return true, f.setComposites(path, key, n)
	case "load_predictor":
		var s string
		if err := f.str(path, n, &s); err != nil {
			return true, err
		}
		pr, ok := planner.Predictors[s]
		if !ok {
			return true, f.errAt(n, path, "unknown preset %q (want one of %s)", s, strings.Join(mapKeys(planner.Predictors), ", "))
		}
		if err := (planner.Config{LoadScaling: true, Predictor: pr}).Defaults().Validate(); err != nil {
			return true, f.errAt(n, path, "%s", err)
		}
		p.LoadPredictor = s
		return true, nil
	}
	return false, nil
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// setComposites reads a composite list key: preset ids and dicts, one pins, several search.
func (f *File) setComposites(path, key string, n ast.Node) error {
	return f.setValueList(path, key, n, func(e ast.Node) (string, error) { return f.composite(path, key, e) })
}

// setValueList sets list key to the values read from n (one value, or a sequence), each
// by read, refusing an empty list and a repeated value.
func (f *File) setValueList(path, key string, n ast.Node, read func(ast.Node) (string, error)) error {
	nodes := []ast.Node{n}
	if seq, ok := n.(*ast.SequenceNode); ok {
		nodes = seq.Values
	}
	if len(nodes) == 0 {
		return f.errAt(n, path, "empty list")
	}
	var vals []Value
	for _, e := range nodes {
		text, err := read(e)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(vals, func(v Value) bool { return v.Text == text }) {
			return f.errAt(e, path, "value %q listed twice", text)
		}
		vals = append(vals, Value{Text: text})
	}
	f.list(key).values = vals
	return nil
}

// composite reads one value of composite key: a preset id or a dict of exactly its keys
// (integers), as its canonical text.
func (f *File) composite(path, key string, n ast.Node) (string, error) {
	keys, presets := compositeFields[key].keys, mapKeys(compositeFields[key].presets)
	if m, ok := n.(*ast.MappingNode); ok {
		vals, err := f.dict(path, m, keys)
		if err != nil {
			return "", err
		}
		for _, k := range keys {
			x, err := strconv.Atoi(vals[k])
			lo, hi := compositeRange[k][0], compositeRange[k][1]
			if err != nil || x < lo || x > hi || k == "fpm_sample_bucket_size" && !perfectSquare(x) {
				return "", f.errAt(m, path+"."+k, "%q must be an integer in [%d, %d]%s", vals[k], lo, hi,
					map[bool]string{true: ", a perfect square"}[k == "fpm_sample_bucket_size"])
			}
		}
		return canonicalDict(keys, vals), nil
	}
	var s string
	if err := f.str(path, n, &s); err != nil {
		return "", err
	}
	if slices.Contains(presets, s) {
		return s, nil
	}
	return "", f.errAt(n, path, "unknown preset %q (want one of %s, or a dict of %s)", s, strings.Join(presets, ", "), strings.Join(keys, ", "))
}

// plannerOn reports whether some planner_scaling_policy value scales the fleet: without
// one, Spica drops the composites from the study.
func (f *File) plannerOn() bool {
	return slices.ContainsFunc(f.Values("planner_scaling_policy"), func(v Value) bool {
		p, err := policyOf(v.Text)
		return err == nil && (p.Throughput || p.Load)
	})
}

// PlannerKnobIgnored reports whether composite key has no effect at point p: its policy
// there scales nothing.
func (f *File) PlannerKnobIgnored(p Point, key string) bool {
	if !slices.Contains(plannerListKeys, key) {
		return false
	}
	v, err := f.At(p, "planner_scaling_policy")
	if err != nil {
		return false
	}
	pol, err := policyOf(v.Text)
	return err == nil && !pol.Throughput && !pol.Load
}

// compositeRange bounds each integer field of the composites (PlannerConfig's constraints;
// a sensitivity of 0 never scales down).
var compositeRange = map[string][2]int{
	"load_scaling_down_sensitivity": {0, 100}, "load_min_observations": {1, 1 << 20},
	"max_num_fpm_samples": {1, 1 << 20}, "fpm_sample_bucket_size": {1, 1 << 20},
}

func perfectSquare(x int) bool {
	for r := 1; r*r <= x; r++ {
		if r*r == x {
			return true
		}
	}
	return false
}

// dict reads a mapping with exactly keys, each a scalar, as text.
func (f *File) dict(path string, m *ast.MappingNode, keys []string) (map[string]string, error) {
	vals := map[string]string{}
	for _, kv := range m.Values {
		k := keyText(kv)
		if !contains(keys, k) {
			return nil, f.errAt(kv.Key, path+"."+k, "unknown key (a dict takes %s)", strings.Join(keys, ", "))
		}
		if _, dup := vals[k]; dup {
			return nil, f.errAt(kv.Key, path+"."+k, "duplicate key")
		}
		s, err := f.scalarText(path+"."+k, kv.Value)
		if err != nil {
			return nil, err
		}
		vals[k] = s
	}
	for _, k := range keys {
		if _, ok := vals[k]; !ok {
			return nil, f.errAt(m, path, "missing %s (a dict needs all of %s)", k, strings.Join(keys, ", "))
		}
	}
	return vals, nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func canonicalDict(keys []string, vals map[string]string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + vals[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// parseDict reads canonicalDict's text back.
func parseDict(s string) map[string]string {
	m := map[string]string{}
	for _, part := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}"), ", ") {
		k, v, _ := strings.Cut(part, ": ")
		m[k] = v
	}
	return m
}

// setPolicies reads planner_scaling_policy: preset ids and dicts, one pins, several search.
func (f *File) setPolicies(path string, n ast.Node) error {
	return f.setValueList(path, "planner_scaling_policy", n, func(e ast.Node) (string, error) {
		var text string
		if m, ok := e.(*ast.MappingNode); ok {
			d, err := f.dict(path, m, policyKeys)
			if err != nil {
				return "", err
			}
			text = canonicalDict(policyKeys, d)
		} else {
			s, err := f.scalarText(path, e)
			if err != nil {
				return "", err
			}
			text = s
		}
		if _, err := policyOf(text); err != nil {
			return "", f.errAt(e, path, "%s", err)
		}
		return text, nil
	})
}

// policyOf is the scaling policy of a planner_scaling_policy value: a preset id or a dict.
func policyOf(text string) (planner.ScalingPolicy, error) {
	if !strings.HasPrefix(text, "{") {
		return planner.Policy(text)
	}
	d := parseDict(text)
	p := planner.ScalingPolicy{Name: text}
	for _, k := range policyKeys[:2] {
		b, err := strconv.ParseBool(d[k])
		if err != nil {
			return p, fmt.Errorf("%s: %q is not true or false", k, d[k])
		}
		if k == policyKeys[0] {
			p.Throughput = b
		} else {
			p.Load = b
		}
	}
	for i, k := range policyKeys[2:] {
		x, err := strconv.ParseFloat(d[k], 64)
		if err != nil || !(x > 0) || x > 86400 {
			return p, fmt.Errorf("%s: %q must be a number of seconds in (0, 86400]", k, d[k])
		}
		if i == 0 {
			p.ThroughputEveryS = x
		} else {
			p.LoadEveryS = x
		}
	}
	return p, nil
}

// setFailures reads worker_failures: a list of {at_s, worker}, or {rate_per_hour}.
func (f *File) setFailures(path string, n ast.Node) error {
	p := &f.Planner
	if m, ok := n.(*ast.MappingNode); ok {
		d, err := f.dict(path, m, []string{"rate_per_hour"})
		if err != nil {
			return err
		}
		x, err := strconv.ParseFloat(d["rate_per_hour"], 64)
		if err != nil || !(x >= 0) || x > 1e6 {
			return f.errAt(n, path+".rate_per_hour", "%q must be a number in [0, 1e6]", d["rate_per_hour"])
		}
		p.FailuresPerHour, p.Failures = x, nil
		return nil
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return f.errAt(n, path, "want a list of {at_s, worker} or {rate_per_hour: R}")
	}
	var out []engine.Failure
	for _, e := range seq.Values {
		m, ok := e.(*ast.MappingNode)
		if !ok {
			return f.errAt(e, path, "want {at_s, worker}")
		}
		d, err := f.dict(path, m, []string{"at_s", "worker"})
		if err != nil {
			return err
		}
		at, err1 := strconv.ParseFloat(d["at_s"], 64)
		w, err2 := strconv.Atoi(d["worker"])
		if err1 != nil || !(at >= 0) || at > 1e9 || err2 != nil || w < 0 || w >= 1024 {
			return f.errAt(m, path, "at_s %q must be seconds in [0, 1e9] and worker %q a slot in [0, 1024)", d["at_s"], d["worker"])
		}
		out = append(out, engine.Failure{AtUS: int64(at * 1e6), Worker: w})
	}
	p.Failures, p.FailuresPerHour = out, 0
	return nil
}

// fleetKey names the key that makes the fleet change (the planner scales it, workers take
// time to start, or fail); "" for a static fleet.
func fleetKey(pol planner.ScalingPolicy, ps PlannerSettings) string {
	switch {
	case pol.Throughput || pol.Load:
		return "planner_scaling_policy"
	case ps.StartupTimeS != 0:
		return "startup_time"
	case len(ps.Failures) > 0 || ps.FailuresPerHour != 0:
		return "worker_failures"
	}
	return ""
}

// checkFleetWith refuses what a changing fleet does not model beside it: worker failures in
// a disaggregated fleet (a KV handoff from or to a failed worker) and KV tiers (a leaving
// worker's host and disk blocks), naming the key that makes the fleet change.
func (f *File) checkFleetWith() error {
	key := ""
	for _, v := range f.Values("planner_scaling_policy") {
		if pol, err := policyOf(v.Text); err == nil && key == "" {
			key = fleetKey(pol, f.Planner)
		}
	}
	if key == "" {
		return nil
	}
	if f.disaggregated() && f.Disagg.ConditionalDisagg != nil && *f.Disagg.ConditionalDisagg {
		return &Error{File: f.Name, Key: "search_space.router_conditional_disagg",
			Msg: fmt.Sprintf("conditional disaggregation with a fleet that changes (%s) is not modelled (a request pinned to a decode worker that drains or has not started); leave router_conditional_disagg false or %s at its default", key, key)}
	}
	if f.disaggregated() && (len(f.Planner.Failures) > 0 || f.Planner.FailuresPerHour > 0) {
		return &Error{File: f.Name, Key: "search_space.worker_failures",
			Msg: "worker failures are not modelled with deployment_mode disagg (a failed prefill worker's KV in flight, a failed decode worker's requests); use deployment_mode agg or leave worker_failures unset"}
	}
	for _, g2 := range f.Values(KeyNumG2Blocks) {
		if g2.Num > 0 {
			return &Error{File: f.Name, Key: "search_space." + KeyNumG2Blocks,
				Msg: fmt.Sprintf("%s with a fleet that changes (%s) is not modelled (a leaving worker's host and disk blocks); use num_g2_blocks 0 or leave %s at its default", g2.Text, key, key)}
		}
	}
	return nil
}

// plannerTarget is the optimisation target: the key's, or the goal's as Spica derives it (a
// goal with a TTFT or TPOT SLO is a goodput goal: sla).
func (f *File) plannerTarget() string {
	if f.Planner.Target != "" {
		return f.Planner.Target
	}
	if f.Goal.SLA.TTFTMS > 0 || f.Goal.SLA.TPOTMS > 0 {
		return planner.TargetForGoal("goodput")
	}
	return planner.TargetForGoal(f.Goal.Target)
}

// checkPlanner refuses throughput scaling without an SLA, as Spica's
// filter_scaling_policies(allow_throughput=False) keeps only disabled and load_* then.
func (f *File) checkPlanner() error {
	if f.plannerTarget() == planner.TargetSLA {
		return nil
	}
	for _, v := range f.Values("planner_scaling_policy") {
		if p, _ := policyOf(v.Text); p.Throughput {
			return &Error{File: f.Name, Key: "search_space.planner_scaling_policy",
				Msg: fmt.Sprintf("%s scales on throughput, which needs an SLA: the planner's target here is %s; set goal.sla.ttft_ms and tpot_ms (target sla) or list only disabled and load_* policies", v.Text, f.plannerTarget())}
		}
	}
	return nil
}

// fleet is the engine's lifecycle for a point whose scaling policy, load sensitivity and
// FPM sampling are those texts and whose layout is pc, or dp when disaggregated; nil when
// nothing changes the fleet (the static fleet, byte for byte). A disaggregated fleet's
// pools may each grow to what the GPU budget holds beside one worker of the other.
func (f *File) fleet(policyText, sensText, fpmText string, pc ParallelConfig, dp *DisaggParallel) (*engine.Fleet, error) {
	pol, err := policyOf(policyText)
	if err != nil {
		return nil, err
	}
	ps := f.Planner
	if fleetKey(pol, ps) == "" {
		return nil, nil
	}
	fl := &engine.Fleet{
		StartupUS: int64(ps.StartupTimeS * 1e6), MigrationLimit: ps.MigrationLimit,
		Failures: ps.Failures, FailuresPerHour: ps.FailuresPerHour,
	}
	var budget int
	if dp == nil {
		gpus := pc.TP * pc.AttentionDP // one worker's
		budget = max(f.GPUBudget, pc.GPUs())
		fl.Slots, fl.GPUsPerWorker = min(max(pc.Replicas, budget/gpus), 1024), gpus
	} else {
		pg, dg := dp.Prefill.TP*dp.Prefill.AttentionDP, dp.Decode.TP*dp.Decode.AttentionDP
		budget = max(f.GPUBudget, dp.GPUs())
		fl.GPUsPerWorker, fl.DecodeGPUsPerWorker = pg, dg
		fl.Slots = min(max(dp.Prefill.Replicas, (budget-dg)/pg), 512)
		fl.DecodeSlots = min(max(dp.Decode.Replicas, (budget-pg)/dg), 512)
	}
	c := planner.Config{Target: f.plannerTarget(), TTFTMS: f.Goal.SLA.TTFTMS, ITLMS: f.Goal.SLA.TPOTMS, MaxGPUBudget: budget}
	pol.Apply(&c)
	if ps.LoadPredictor != "" {
		c.Predictor = planner.Predictors[ps.LoadPredictor]
	}
	if c.On() {
		// The composites after the defaults, which take a zero sensitivity for unset.
		c = c.Defaults()
		c.DownSensitivity, c.MinObservations = pairOf(sensText, KeyPlannerLoadSensitivity)
		c.MaxFPMSamples, c.FPMBucketSize = pairOf(fpmText, KeyPlannerFPMSampling)
		if err := c.Validate(); err != nil {
			return nil, err
		}
	}
	fl.Planner = c
	if !c.On() {
		fl.Planner = planner.Config{}
	}
	return fl, nil
}

// pairOf is composite key's two fields at value s: its preset's, or its dict's (canonical
// text, integers checked when read).
func pairOf(s, key string) (int, int) {
	cf := compositeFields[key]
	if !strings.HasPrefix(s, "{") {
		v := cf.presets[s]
		return v[0], v[1]
	}
	d := parseDict(s)
	a, _ := strconv.Atoi(d[cf.keys[0]])
	b, _ := strconv.Atoi(d[cf.keys[1]])
	return a, b
}

// plannerFingerprint adds the planner's scalars that are not at their defaults.
func (f *File) plannerFingerprint(add func(k, v string)) {
	ps := f.Planner
	if ps.StartupTimeS != 0 {
		add("search_space.startup_time", num(ps.StartupTimeS))
	}
	if ps.MigrationLimit != 0 {
		add("search_space.migration_limit", strconv.Itoa(ps.MigrationLimit))
	}
	if len(ps.Failures) > 0 || ps.FailuresPerHour > 0 {
		var parts []string
		for _, fl := range ps.Failures {
			parts = append(parts, fmt.Sprintf("{at_s: %s, worker: %d}", num(float64(fl.AtUS)/1e6), fl.Worker))
		}
		if ps.FailuresPerHour > 0 {
			parts = append(parts, "{rate_per_hour: "+num(ps.FailuresPerHour)+"}")
		}
		add("search_space.worker_failures", strings.Join(parts, ", "))
	}
	if ps.Target != "" {
		add("search_space.planner_optimization_target", ps.Target)
	}
	if ps.LoadPredictor != "" {
		add("search_space.load_predictor", ps.LoadPredictor)
	}
}
