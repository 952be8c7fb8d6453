package tui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Knobs is one point of the explorer: the router knobs, the replay concurrency and the
// deployment.
type Knobs struct {
	Mode        string  // router_mode
	Credit      float64 // overlap_score_credit
	Scale       float64 // prefill_load_scale
	Temperature float64 // router_temperature
	Concurrency int     // workload.replay_concurrency (0 = open loop on trace timestamps)
	Speedup     float64 // workload.arrival_speedup_ratio: open loop's timestamps ÷ this
	Index       IndexKnobs
	Deployment  Deployment
	// Load is the value of each of Space.Load's knobs, in their order ("" keeps the
	// experiment's): the router's load accounting and admission (knobgroups.go).
	Load LoadKnobs
}

// Deployment is the fleet a point runs on: the what-ifs beside the router knobs.
type Deployment struct {
	Replicas         int    // workers
	Layout           string // parallel layout of a worker, as Space.Layouts names it
	MaxBatchedTokens int    // vLLM max_num_batched_tokens
	MaxSeqs          int    // vLLM max_num_seqs
	KVCacheDtype     string // KV cache data type; "" when the experiment has no such key
	Async            bool   // vLLM async scheduling
	Model            string // search_space.model_name; "" keeps the experiment's
	GPU              string // search_space.hardware_sku; "" keeps the experiment's
	Backend          string // search_space.backend (vllm, sglang, trtllm); "" keeps the experiment's
	// Prefill is how many of the Replicas workers form a disaggregated fleet's prefill pool,
	// the rest its decode pool; 0: aggregated (disagg.go). The decode pool's layout and
	// engine limits are the fields above unless set below (an experiment file's split).
	Prefill             int
	DecodeLayout        string // "": Layout
	DecodeBatchedTokens int    // 0: MaxBatchedTokens
	DecodeSeqs          int    // 0: MaxSeqs
	// Conditional: the frontend's conditional disaggregation on (a split fleet's `c`,
	// conddisagg.go), at the experiment's isl_bounding thresholds.
	Conditional bool
}

func (d Deployment) settings() []string {
	out := []string{
		fmt.Sprintf("replicas=%d", d.Replicas), "layout=" + d.Layout,
		fmt.Sprintf("max_num_batched_tokens=%d", d.MaxBatchedTokens), fmt.Sprintf("max_num_seqs=%d", d.MaxSeqs),
	}
	if d.KVCacheDtype != "" {
		out = append(out, "kv_cache_dtype="+d.KVCacheDtype)
	}
	out = append(out, fmt.Sprintf("async_scheduling=%t", d.Async))
	if d.Model != "" {
		out = append(out, "model_name="+d.Model)
	}
	if d.GPU != "" {
		out = append(out, "hardware_sku="+d.GPU)
	}
	if d.Backend != "" {
		out = append(out, "backend="+d.Backend)
	}
	if d.Prefill > 0 {
		out = append(out, d.split())
	}
	return out
}

// String is the deployment in a few words: "8× tp4·ep4 · 16384 tok · 512 seqs · sync".
func (d Deployment) String() string {
	parts := []string{fmt.Sprintf("%d× %s", d.Replicas, d.Layout), fmt.Sprintf("%d tok", d.MaxBatchedTokens), fmt.Sprintf("%d seqs", d.MaxSeqs)}
	if d.Prefill > 0 {
		parts[0] = fmt.Sprintf("%d prefill + %d decode × %s", d.Prefill, d.Replicas-d.Prefill, d.Layout)
		if d.DecodeLayout != "" {
			parts[0] = fmt.Sprintf("%d prefill × %s + %d decode × %s", d.Prefill, d.Layout, d.Replicas-d.Prefill, d.DecodeLayout)
		}
		if d.Conditional {
			parts[0] += " conditional"
		}
	}
	if d.KVCacheDtype != "" {
		parts = append(parts, "KV "+d.KVCacheDtype)
	}
	if d.Backend != "" && d.Backend != "vllm" { // vLLM, the default, goes unsaid
		parts = append(parts, d.Backend)
	}
	if d.Async {
		return strings.Join(append(parts, "async"), " · ")
	}
	return strings.Join(append(parts, "sync"), " · ")
}

// KVKnobsApply reports whether the three KV knobs change routing under this mode: the other
// policies ignore them.
func (k Knobs) KVKnobsApply() bool { return k.Mode == "kv_router" }

// Router is the router part of k: mode and, when they apply, the KV knobs, then the index
// knobs that are not Dynamo's default.
func (k Knobs) Router() string {
	if !k.KVKnobsApply() {
		return k.Mode + k.Index.changed(false)
	}
	return fmt.Sprintf("%s credit=%s scale=%s T=%s", k.Mode, formatNum(k.Credit), formatNum(k.Scale), formatNum(k.Temperature)) + k.Index.changed(true)
}

// String is the router knobs and the concurrency.
func (k Knobs) String() string {
	if k.Concurrency == 0 && k.Speedup != 1 && k.Speedup != 0 {
		return fmt.Sprintf("%s c=%d ×%s", k.Router(), k.Concurrency, formatNum(k.Speedup))
	}
	return fmt.Sprintf("%s c=%d", k.Router(), k.Concurrency)
}

// Against is k described for comparison with other: the router knobs and concurrency, then
// each deployment setting and load knob of k that differs from other's.
func (k Knobs) Against(other Knobs) string {
	s := k.String()
	theirs := other.Deployment.settings()
	for i, v := range k.Deployment.settings() {
		if i >= len(theirs) || v != theirs[i] {
			s += " " + v
		}
	}
	for i, v := range k.Load {
		if v != other.Load[i] && v != "" {
			s += " " + loadLabels[i] + "=" + v
		}
	}
	if k.Deployment.Prefill == 0 && other.Deployment.Prefill > 0 {
		s += " aggregated" // a split's settings name its pools; an aggregated fleet has none to differ
	}
	return s
}

// WithRouter returns k with the router knobs of r (a sweep row) and the load knobs it names,
// keeping k's concurrency and deployment.
func (k Knobs) WithRouter(r Knobs) Knobs {
	k.Mode, k.Credit, k.Scale, k.Temperature = r.Mode, r.Credit, r.Scale, r.Temperature
	for i, v := range r.Load {
		if v != "" {
			k.Load[i] = v
		}
	}
	return k
}

// Space is the set of values each knob steps through: the experiment's search_space lists
// (widened by the caller where a list has one value), all router modes, ladders of
// concurrencies and deployment settings.
type Space struct {
	Modes         []string // in the order `m` cycles them
	Credits       []float64
	Scales        []float64
	Temperatures  []float64
	Concurrencies []int
	Speedups      []float64 // arrival_speedup_ratio, shown in open loop
	Replicas      []int
	Layouts       []string
	BatchedTokens []int
	Seqs          []int
	KVCacheDtypes []string // empty: no kv_cache_dtype knob
	Models        []string // embedded models; fewer than 2: no model knob
	GPUs          []string // embedded GPUs; fewer than 2: no GPU knob
	// Backends are the engines `e` cycles through (fewer than 2: no backend key), and
	// BackendFits says why a deployment cannot run on its backend ("" when it can; nil: all can).
	Backends    []string
	BackendFits func(Deployment) string
	// DisaggFits says why a deployment cannot be disaggregated ("" when it can); nil: the
	// explorer has no agg/disagg key (disagg.go). LayoutGPUs is the GPUs of one worker of
	// d's model and GPU in layout (nil: every layout the same), which `[` and `]` trade at.
	DisaggFits func(Deployment) string
	LayoutGPUs func(d Deployment, layout string) int
	// ConditionalRule is conditional disaggregation's isl_bounding rule at the experiment's
	// thresholds, in words for `c`'s note ("": the rule without its numbers).
	ConditionalRule string
	// Catalog, when set, says which GPUs and layouts each model has step-time tables for:
	// the GPU and layout knobs step through those of the knobs' model, and a model or GPU
	// change moves the deployment onto one that exists. nil: every listed value combines.
	Catalog Catalog
	// Load lists the load-and-admission knobs, a second group of rows (knobgroups.go).
	Load  []LoadKnob
	Index IndexSpace
}

// Catalog lists the deployments the simulator can price.
type Catalog interface {
	GPUs(model string) []string         // the GPUs model has tables on
	Layouts(model, gpu string) []string // model's layouts on gpu, in the knob's order
	// Fit moves d onto a GPU and layout that exist for its model, nearest first, and says
	// what moved and why ("" when nothing did).
	Fit(d Deployment) (Deployment, string)
}

// knob identifies a row of the Knobs pane.
type knob int

const (
	knobMode knob = iota
	knobCredit
	knobScale
	knobTemperature
	knobConcurrency
	knobSpeedup
	knobReplicas
	knobLayout
	knobBatchedTokens
	knobSeqs
	knobKVCacheDtype
	knobAsync
	knobModel
	knobGPU
	knobGroup // the row that opens the load-and-admission group (knobgroups.go)
	numKnobs
)

func (k knob) key() string {
	if k.isIndex() {
		return k.indexKey()
	}
	if k >= numKnobs {
		return loadKeys[k-numKnobs]
	}
	return [...]string{"router_mode", "overlap_score_credit", "prefill_load_scale", "router_temperature",
		"replay_concurrency", "arrival_speedup_ratio", "replicas", "parallel_layout", "max_num_batched_tokens", "max_num_seqs",
		"kv_cache_dtype", "async_scheduling", "model_name", "hardware_sku", "router index & load"}[k]
}

// about is the help line of knob k: what it is in Dynamo or vLLM, and its unit.
func (k knob) about() string {
	if k.isIndex() {
		return k.indexAbout()
	}
	if k >= numKnobs {
		return loadAbout[k-numKnobs]
	}
	return [...]string{
		"Dynamo's router policy: kv_router routes by a KV-cache-aware cost; the round robin, random and least loaded policies ignore the cache",
		"Dynamo KV router (unitless, 0–1): a worker's prompt blocks already cached count against its prefill cost × this credit",
		"Dynamo KV router (unitless): weight of a worker's prefill blocks (queued + this prompt's uncached) against its decode blocks",
		"Dynamo KV router (unitless): 0 picks the cheapest worker; above 0 samples a softmax of the normalised costs",
		"benchmark client (requests): kept in flight, a new one as one finishes; open loop replays the trace's timestamps",
		"open loop (unitless): the trace's timestamps are divided by this; 2 sends the trace twice as fast",
		"vLLM workers (engine instances) behind the router; each takes the layout's GPUs",
		"vLLM parallelism of one worker: tp GPUs; MoE experts split by expert (ep) or tensor (moe_tp) parallelism; a precision after it (nvfp4) when not the checkpoint's",
		"vLLM --max-num-batched-tokens (tokens): most tokens one step schedules, prefill chunks and decodes together",
		"vLLM --max-num-seqs (sequences): most requests running at once on a worker",
		"vLLM --kv-cache-dtype: fp8 holds twice the tokens of bf16 in the same memory and prices attention lower",
		"vLLM --async-scheduling: a busy worker schedules each step as the previous one starts; an arrival waits a step more",
		"the model served, priced from its embedded tables (routerlab model list); a change moves the GPU and layout to the nearest it has tables for; like every knob, it stops at its list's ends",
		"the GPU each worker runs on: the GPUs the model has tables for (routerlab model list); a change moves the layout to the nearest there",
		"Dynamo's router index (KV events, TTL, credit decay, replicas), load accounting, queue and busy thresholds: g (or ←/→ here) shows their knobs",
	}[k]
}

// knobs lists the knob rows of this space at ks: every knob but kv_cache_dtype when the
// experiment has none, the model and GPU knobs when there is more than one to choose, and
// the row that opens the router's second group (index, load and admission knobs).
func (s Space) knobs(ks Knobs) []knob {
	var out []knob
	for k := range numKnobs {
		if k == knobGroup && !s.hasGroup() {
			continue
		}
		switch {
		case k == knobKVCacheDtype && len(s.KVCacheDtypes) == 0,
			k == knobSpeedup && (ks.Concurrency != 0 || len(s.Speedups) == 0),
			k == knobModel && len(s.Models) < 2, k == knobGPU && len(s.GPUs) < 2:
		default:
			out = append(out, k)
		}
	}
	return out
}

// backendFits is "" when d can run on its backend, else why not.
func (s Space) backendFits(d Deployment) string {
	if s.BackendFits == nil {
		return ""
	}
	return s.BackendFits(d)
}

// hasGroup reports whether the space has a second group of knobs (the router's index, load
// and admission knobs) for g to open.
func (s Space) hasGroup() bool { return len(s.Load) > 0 || len(s.Index.Routers) > 0 }

// value formats knob k of ks.
func (k knob) value(ks Knobs) string {
	if k.isIndex() {
		return k.indexValue(ks)
	}
	d := ks.Deployment
	if k >= numKnobs {
		return ks.Load[k-numKnobs]
	}
	switch k {
	case knobMode:
		return ks.Mode
	case knobCredit:
		return formatNum(ks.Credit)
	case knobScale:
		return formatNum(ks.Scale)
	case knobTemperature:
		return formatNum(ks.Temperature)
	case knobConcurrency:
		if ks.Concurrency == 0 {
			return "open loop"
		}
		return strconv.Itoa(ks.Concurrency)
	case knobSpeedup:
		return "×" + formatNum(ks.Speedup)
	case knobReplicas:
		return strconv.Itoa(d.Replicas)
	case knobLayout:
		return d.Layout
	case knobBatchedTokens:
		return strconv.Itoa(d.MaxBatchedTokens)
	case knobSeqs:
		return strconv.Itoa(d.MaxSeqs)
	case knobKVCacheDtype:
		return d.KVCacheDtype
	case knobModel: // the name without its organisation, to fit the pane
		return shortModel(d.Model)
	case knobGPU:
		return d.GPU
	case knobGroup:
		return "open: g"
	default:
		return strconv.FormatBool(d.Async)
	}
}

// step moves knob k of ks dir (±1) places through its list and, when it cannot, says why:
// every knob stops at the ends of its list (only the global `m` cycles the router modes
// round); the GPU knob lists the GPUs of the knobs' model. A current value that is not in the list moves to the
// nearest listed value in the step's direction.
func (s Space) step(ks Knobs, k knob, dir int) (Knobs, string) {
	if k.isIndex() {
		return s.stepIndex(ks, k, dir)
	}
	d := &ks.Deployment
	var moved bool
	list := func(vals []string, cur *string) {
		var v string
		v, moved = stepList(vals, *cur, dir)
		*cur = v
	}
	num := func(vals []float64, cur *float64) {
		v := stepFloat(vals, *cur, dir)
		moved = v != *cur
		*cur = v
	}
	integer := func(vals []int, cur *int) {
		v := stepInt(vals, *cur, dir)
		moved = v != *cur
		*cur = v
	}
	if i := int(k - numKnobs); i >= 0 && i < len(s.Load) {
		list(s.Load[i].Values, &ks.Load[i])
	}
	switch k {
	case knobMode:
		list(s.Modes, &ks.Mode)
	case knobCredit:
		num(s.Credits, &ks.Credit)
	case knobScale:
		num(s.Scales, &ks.Scale)
	case knobTemperature:
		num(s.Temperatures, &ks.Temperature)
	case knobConcurrency:
		integer(s.Concurrencies, &ks.Concurrency)
	case knobSpeedup:
		num(s.Speedups, &ks.Speedup)
	case knobReplicas:
		was := d.Replicas
		integer(s.Replicas, &d.Replicas)
		if moved && d.Prefill > 0 {
			if why := keepSplit(d); why != "" {
				d.Replicas = was
				return ks, why
			}
		}
	case knobLayout:
		list(s.layouts(*d), &d.Layout)
		if d.DecodeLayout == d.Layout {
			d.DecodeLayout = ""
		}
	case knobBatchedTokens:
		integer(s.BatchedTokens, &d.MaxBatchedTokens)
	case knobSeqs:
		integer(s.Seqs, &d.MaxSeqs)
	case knobKVCacheDtype:
		list(s.KVCacheDtypes, &d.KVCacheDtype)
	case knobAsync:
		v := strconv.FormatBool(d.Async)
		list([]string{"false", "true"}, &v)
		d.Async = v == "true"
	case knobModel:
		list(s.Models, &d.Model)
	case knobGPU:
		gpus := s.GPUs
		if s.Catalog != nil {
			gpus = s.Catalog.GPUs(d.Model)
		}
		if list(gpus, &d.GPU); !moved && len(gpus) == 1 {
			return ks, fmt.Sprintf("%s: %s has tables on %s only", k.key(), shortModel(d.Model), d.GPU)
		}
	}
	if !moved {
		return ks, k.atEnd(ks, dir)
	}
	return ks, ""
}

// fit puts the deployment of ks, whose model or GPU has just changed, where the catalog has
// tables, starting from the GPU and layout last chosen by hand (asked): stepping through
// models that lack that GPU does not lose it. It says what moved and why.
func (s Space) fit(ks Knobs, k knob, asked Deployment) (Knobs, string) {
	if s.Catalog == nil {
		return ks, ""
	}
	was := ks.Deployment
	want := was
	want.Layout = asked.Layout
	if k == knobModel {
		want.GPU = asked.GPU
	}
	d, note := s.Catalog.Fit(want)
	var back []string
	if d.GPU != was.GPU && d.GPU == asked.GPU {
		back = append(back, "hardware_sku back to "+d.GPU)
	}
	if d.Layout != was.Layout && d.Layout == asked.Layout {
		back = append(back, "layout back to "+d.Layout)
	}
	if len(back) > 0 {
		note = strings.Join(append(back, note), "; ")
		note = strings.TrimSuffix(note, "; ") + " (as last chosen)"
	}
	if d.DecodeLayout != "" {
		// The decode pool's own layout may not exist for the new model or GPU.
		d.DecodeLayout = ""
		note = strings.TrimPrefix(note+"; the decode pool takes the layout "+d.Layout, "; ")
	}
	ks.Deployment = d
	return ks, note
}

// atEnd says that knob k is at the end of its list in direction dir.
func (k knob) atEnd(ks Knobs, dir int) string {
	end, back := "last", "←"
	if dir < 0 {
		end, back = "first", "→"
	}
	return fmt.Sprintf("%s: %s is the %s value; %s steps back", k.key(), k.value(ks), end, back)
}

// layouts is the layout knob's list at deployment d: the layouts of d's model on d's GPU.
func (s Space) layouts(d Deployment) []string {
	if s.Catalog != nil {
		return s.Catalog.Layouts(d.Model, d.GPU)
	}
	return s.Layouts
}

// stepList moves dir places through list, stopping at its ends; false when it did not move.
func stepList(list []string, cur string, dir int) (string, bool) {
	if len(list) == 0 {
		return cur, false
	}
	i := slices.Index(list, cur)
	if i < 0 {
		return list[0], true
	}
	j := min(max(i+dir, 0), len(list)-1)
	return list[j], j != i
}

func cycle(list []string, cur string, dir int) string {
	if len(list) == 0 {
		return cur
	}
	for i, v := range list {
		if v == cur {
			return list[((i+dir)%len(list)+len(list))%len(list)]
		}
	}
	return list[0]
}

func stepInt(list []int, cur, dir int) int {
	fs := make([]float64, len(list))
	for i, c := range list {
		fs[i] = float64(c)
	}
	return int(stepFloat(fs, float64(cur), dir))
}

// stepFloat assumes list ascending (the caller sorts it).
func stepFloat(list []float64, cur float64, dir int) float64 {
	if len(list) == 0 {
		return cur
	}
	if dir > 0 {
		for _, v := range list {
			if v > cur+1e-12 {
				return v
			}
		}
		return math.Max(cur, list[len(list)-1])
	}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] < cur-1e-12 {
			return list[i]
		}
	}
	return math.Min(cur, list[0])
}

func formatNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
