package config

// Disaggregated fleets in the experiment file, with Spica's keys
// (ai-dynamo/dynamo docs/components/aisimulate/spica/search-space.md at 4871677d): a
// deployment_mode of disagg, parallel_configs entries {prefill: <shape>, decode: <shape>},
// the prefill_* and decode_* engine keys, and the mocker's KV transfer settings.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/goccy/go-yaml/ast"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
)

// Deployment modes (search_space.deployment_mode).
const (
	ModeAgg    = "agg"
	ModeDisagg = "disagg"
)

// DisaggParallel is one disaggregated entry of parallel_configs: each pool's worker layout
// and replicas.
type DisaggParallel struct{ Prefill, Decode ParallelConfig }

// GPUs is how many GPUs both pools take.
func (d DisaggParallel) GPUs() int { return d.Prefill.GPUs() + d.Decode.GPUs() }

func (d DisaggParallel) String() string {
	return "prefill-" + d.Prefill.String() + "+decode-" + d.Decode.String()
}

// DisaggSettings are the scalar keys of a disaggregated fleet. Zero values mean the
// default: block size and memory utilisation as the aggregated keys give them, prefix
// caching on for prefill and off for decode (Spica's defaults), the mocker's 64 GB/s and
// full_prompt.
type DisaggSettings struct {
	PrefillBlockSize, DecodeBlockSize                       int
	PrefillGPUMemoryUtilization, DecodeGPUMemoryUtilization float64
	PrefillPrefixCaching, DecodePrefixCaching               *bool
	TransferGBps                                            *float64
	TransferMode                                            string
	// Conditional disaggregation (the frontend's --router-conditional-disagg, off by
	// default) and its isl_bounding thresholds; nil: Dynamo's defaults.
	ConditionalDisagg      *bool
	ConditionalEffISL      *int
	ConditionalEffISLRatio *float64
}

// disaggListKeys are the disaggregated engine's list keys, after every other list key.
var disaggListKeys = []string{"prefill_max_num_batched_tokens", "prefill_max_num_seqs", "decode_max_num_batched_tokens", "decode_max_num_seqs"}

// disaggListDefaults: Dynamo's mocker defaults for decode (max_num_batched_tokens 8192,
// max_num_seqs 256, lib/mocker/src/common/protocols.rs at 04c3ab60), the aggregated
// defaults' batch for prefill.
var disaggListDefaults = map[string][]string{
	"prefill_max_num_batched_tokens": {"16384"}, "prefill_max_num_seqs": {"256"},
	"decode_max_num_batched_tokens": {"8192"}, "decode_max_num_seqs": {"256"},
}

// defaultTransferGBps is the mocker's kv_transfer_bandwidth default (inter-node InfiniBand).
const defaultTransferGBps = 64

// setDisaggScalar reads one of the disaggregated fleet's scalar keys; ok is false for any
// other key.
func (f *File) setDisaggScalar(path, key string, n ast.Node) (ok bool, err error) {
	s := &f.Disagg
	switch key {
	case "prefill_block_size":
		return true, f.integer(path, n, &s.PrefillBlockSize, 1, 1<<16)
	case "decode_block_size":
		return true, f.integer(path, n, &s.DecodeBlockSize, 1, 1<<16)
	case "prefill_gpu_memory_utilization":
		return true, f.number(path, n, &s.PrefillGPUMemoryUtilization, 0.05, 1)
	case "decode_gpu_memory_utilization":
		return true, f.number(path, n, &s.DecodeGPUMemoryUtilization, 0.05, 1)
	case "prefill_enable_prefix_caching", "decode_enable_prefix_caching":
		var on bool
		if err := f.boolean(path, n, &on); err != nil {
			return true, err
		}
		if key == "prefill_enable_prefix_caching" {
			s.PrefillPrefixCaching = &on
		} else {
			s.DecodePrefixCaching = &on
		}
		return true, nil
	case "kv_transfer_bandwidth":
		var gbps float64
		if err := f.number(path, n, &gbps, 0, 1e6); err != nil {
			return true, err
		}
		s.TransferGBps = &gbps
		return true, nil
	case "kv_transfer_timing_mode":
		return true, f.oneOf(path, n, &s.TransferMode, engine.TransferModes())
	case "router_conditional_disagg":
		var on bool
		s.ConditionalDisagg = &on
		return true, f.boolean(path, n, &on)
	case "router_conditional_disagg_eff_isl_threshold":
		var tok int
		s.ConditionalEffISL = &tok
		return true, f.integer(path, n, &tok, 0, 1<<30)
	case "router_conditional_disagg_eff_isl_ratio_threshold":
		var r float64
		s.ConditionalEffISLRatio = &r
		return true, f.number(path, n, &r, 0, 1)
	}
	return false, nil
}

// conditional is the engine's conditional disaggregation at the file's settings, nil when
// off (Dynamo's default).
func (s DisaggSettings) conditional() *engine.ConditionalDisagg {
	if !s.ConditionalOn() {
		return nil
	}
	c := s.ConditionalThresholds()
	return &c
}

// ConditionalOn reports whether the file turns conditional disaggregation on.
func (s DisaggSettings) ConditionalOn() bool {
	return s.ConditionalDisagg != nil && *s.ConditionalDisagg
}

// ConditionalThresholds is the isl_bounding policy at the file's thresholds (Dynamo's
// defaults where it sets none), whether or not the file turns it on: the explorer's `c`
// turns it on at these.
func (s DisaggSettings) ConditionalThresholds() engine.ConditionalDisagg {
	c := engine.DefaultConditionalDisagg()
	if s.ConditionalEffISL != nil {
		c.EffISLThreshold = *s.ConditionalEffISL
	}
	if s.ConditionalEffISLRatio != nil {
		c.EffISLRatioThreshold = *s.ConditionalEffISLRatio
	}
	return c
}

// parseDisaggEntry reads a parallel_configs entry {prefill: <shape>, decode: <shape>}.
func (f *File) parseDisaggEntry(path string, m *ast.MappingNode) (DisaggParallel, error) {
	var dp DisaggParallel
	seen := map[string]bool{}
	for _, kv := range m.Values {
		k := keyText(kv)
		inner, ok := kv.Value.(*ast.MappingNode)
		if (k != "prefill" && k != "decode") || seen[k] {
			return dp, f.errAt(kv.Key, path+"."+k, "a disaggregated entry has exactly the keys prefill and decode")
		}
		if !ok {
			return dp, f.errAt(kv.Value, path+"."+k, "want a mapping like {tp: 4, replicas: 3}")
		}
		seen[k] = true
		pc, err := f.parseShape(path+"."+k, inner)
		if err != nil {
			return dp, err
		}
		if k == "prefill" {
			dp.Prefill = pc
		} else {
			dp.Decode = pc
		}
	}
	if !seen["prefill"] || !seen["decode"] {
		return dp, f.errAt(m, path, "a disaggregated entry needs both prefill and decode")
	}
	return dp, nil
}

// isDisaggEntry reports whether a parallel_configs entry is {prefill: …, decode: …}.
func isDisaggEntry(m *ast.MappingNode) bool {
	for _, kv := range m.Values {
		if k := keyText(kv); k == "prefill" || k == "decode" {
			return true
		}
	}
	return false
}

// setDisaggParallel replaces search_space.parallel_configs with disaggregated entries.
func (f *File) setDisaggParallel(dps []DisaggParallel) {
	f.derive, f.skipped = false, nil
	f.setFleets(nil, dps)
}

// setFleets replaces parallel_configs' entries: the aggregated ones first, then the
// disaggregated ones, so value i < len(pcs) is aggregated entry i and every later value
// disaggregated entry i − len(pcs).
func (f *File) setFleets(pcs []ParallelConfig, dps []DisaggParallel) {
	l := f.list("parallel_configs")
	l.parallel, l.disagg, l.values = pcs, dps, make([]Value, 0, len(pcs)+len(dps))
	for _, pc := range pcs {
		l.values = append(l.values, Value{Text: pc.String()})
	}
	for _, dp := range dps {
		l.values = append(l.values, Value{Text: dp.String()})
	}
}

// disaggregated reports whether any of the file's fleets is disaggregated.
func (f *File) disaggregated() bool { return len(f.list("parallel_configs").disagg) > 0 }

// disaggAt reports whether parallel_configs' value named pcText is a disaggregated entry,
// and which.
func (f *File) disaggAt(pcText string) (DisaggParallel, bool) {
	l := f.list("parallel_configs")
	for i, v := range l.values {
		if v.Text == pcText && i >= len(l.parallel) {
			return l.disagg[i-len(l.parallel)], true
		}
	}
	return DisaggParallel{}, false
}

// checkDisagg checks deployment_mode against parallel_configs: each mode listed is a branch
// with entries of its kind (derived, or listed), and no entry is of a mode not listed.
func (f *File) checkDisagg() error {
	l := f.list("parallel_configs")
	agg, disagg := f.hasMode(ModeAgg), f.hasMode(ModeDisagg)
	switch {
	case disagg && len(l.disagg) == 0:
		return &Error{File: f.Name, Key: "search_space.parallel_configs",
			Msg: "deployment_mode disagg needs entries {prefill: {tp, replicas, …}, decode: {tp, replicas, …}}"}
	case !disagg && len(l.disagg) > 0:
		return &Error{File: f.Name, Key: "search_space.deployment_mode",
			Msg: "parallel_configs holds disaggregated entries {prefill, decode}: add disagg to deployment_mode"}
	case agg && len(l.parallel) == 0:
		return &Error{File: f.Name, Key: "search_space.parallel_configs",
			Msg: "deployment_mode agg needs aggregated entries {tp, replicas, …} beside the disaggregated ones (or [] to derive both)"}
	case !agg && len(l.parallel) > 0:
		return &Error{File: f.Name, Key: "search_space.deployment_mode",
			Msg: "parallel_configs holds aggregated entries {tp, replicas, …}: add agg to deployment_mode"}
	}
	if len(l.disagg) > 0 && slices.ContainsFunc(f.Values(KeyBackend), func(v Value) bool { return v.Text == string(model.BackendTRTLLM) }) {
		return &Error{File: f.Name, Key: "search_space.backend",
			Msg: "trtllm in a disaggregated fleet: Dynamo's replay rejects TensorRT-LLM disaggregation, so Spica leaves it out of disagg branches (search-space.md)"}
	}
	if f.Disagg.conditional() != nil {
		if !disagg {
			return &Error{File: f.Name, Key: "search_space.router_conditional_disagg",
				Msg: "needs a disaggregated fleet (deployment_mode disagg): it chooses between a prefill worker and the decode worker for each request"}
		}
		if slices.ContainsFunc(f.Values(KeyRouterMode), func(v Value) bool { return v.Text != string(router.ModeKV) }) {
			return &Error{File: f.Name, Key: "search_space.router_conditional_disagg",
				Msg: "needs router_mode kv_router only: Dynamo's frontend refuses --router-conditional-disagg outside --router-mode kv"}
		}
	}
	for _, dp := range l.disagg {
		if g := dp.GPUs(); f.GPUBudget > 0 && g > f.GPUBudget {
			return &Error{File: f.Name, Key: "search_space.parallel_configs",
				Msg: fmt.Sprintf("%s needs %d GPUs, more than gpu_budget %d (raise search_space.gpu_budget to %d to allow it)", dp, g, f.GPUBudget, g)}
		}
	}
	return nil
}

// ModeOf is the deployment mode of parallel_configs' value pcText: disagg for a
// {prefill, decode} entry, else agg.
func (f *File) ModeOf(pcText string) string {
	if _, ok := f.disaggAt(pcText); ok {
		return ModeDisagg
	}
	return ModeAgg
}

// aggListKeys are the aggregated engine's list keys.
var aggListKeys = []string{"agg_max_num_batched_tokens", "agg_max_num_seqs"}

// ModeKnobIgnored reports whether key is an engine list key of the other deployment mode than
// the parallel_configs entry at p: a sweep over both modes then leaves it out of the
// candidate, as it leaves out the knobs a router mode ignores.
func (f *File) ModeKnobIgnored(p Point, key string) bool {
	agg, disagg := slices.Contains(aggListKeys, key), slices.Contains(disaggListKeys, key)
	if !agg && !disagg {
		return false
	}
	v, err := f.At(p, "parallel_configs")
	if err != nil {
		return false
	}
	return (f.ModeOf(v.Text) == ModeDisagg) == agg
}

// hasMode reports whether deployment_mode lists mode.
func (f *File) hasMode(mode string) bool {
	return slices.ContainsFunc(f.Values("deployment_mode"), func(v Value) bool { return v.Text == mode })
}

// disaggDeployments are the prefill and decode deployments of entry dp at the point's engine
// values.
func (f *File) disaggDeployments(sku string, dp DisaggParallel, pmbt, pseqs, dmbt, dseqs int, kvDtype, ref string, backend model.Backend) (prefill, decode model.Deployment) {
	prefill = f.deployment(sku, dp.Prefill, pmbt, pseqs, kvDtype, ref, backend)
	decode = f.deployment(sku, dp.Decode, dmbt, dseqs, kvDtype, ref, backend)
	f.poolSettings(&prefill, &decode)
	return prefill, decode
}

// SplitPools are the prefill and decode deployments of a fleet of d's workers split into
// two pools (the explorer's `a`): d with each pool's scalar keys of the file (block size,
// GPU memory utilisation, prefix caching: on for prefill, off for decode unless set).
func (f *File) SplitPools(d model.Deployment) (prefill, decode model.Deployment) {
	prefill, decode = d, d
	f.poolSettings(&prefill, &decode)
	return prefill, decode
}

// poolSettings applies the disaggregated scalar keys to each pool's deployment.
func (f *File) poolSettings(prefill, decode *model.Deployment) {
	s := f.Disagg
	if s.PrefillBlockSize > 0 {
		prefill.BlockSize = s.PrefillBlockSize
	}
	if s.DecodeBlockSize > 0 {
		decode.BlockSize = s.DecodeBlockSize
	}
	if s.PrefillGPUMemoryUtilization > 0 {
		prefill.GPUMemoryUtilization = s.PrefillGPUMemoryUtilization
	}
	if s.DecodeGPUMemoryUtilization > 0 {
		decode.GPUMemoryUtilization = s.DecodeGPUMemoryUtilization
	}
	prefill.NoPrefixCaching = s.PrefillPrefixCaching != nil && !*s.PrefillPrefixCaching
	decode.NoPrefixCaching = s.DecodePrefixCaching == nil || !*s.DecodePrefixCaching
}

// transfer is the KV transfer's bandwidth (GB/s) and timing mode: the file's, else the
// mocker's defaults.
func (f *File) transfer() (gbps float64, mode engine.TransferMode) {
	s := f.Disagg
	gbps = defaultTransferGBps
	if s.TransferGBps != nil {
		gbps = *s.TransferGBps
	}
	return gbps, engine.TransferMode(cmp.Or(s.TransferMode, string(engine.TransferFullPrompt)))
}

// disaggPoint is the disaggregated entry and engine values at point p.
// kvBytes is the prefill worker model's KV bytes per token (looked up before num_gpu_blocks
// is resolved: a file that pins num_gpu_blocks keys its worker models with it).
func (e *Experiment) disaggPoint(p Point, pcText string) (prefill, decode model.Deployment, dp DisaggParallel, kvBytes int64, err error) {
	f := e.File
	val := func(key string) Value {
		v, _ := f.At(p, key)
		return v
	}
	dp, _ = f.disaggAt(pcText)
	prefill, decode = f.disaggDeployments(val(KeyHardwareSKU).Text, dp,
		int(val("prefill_max_num_batched_tokens").Num), int(val("prefill_max_num_seqs").Num),
		int(val("decode_max_num_batched_tokens").Num), int(val("decode_max_num_seqs").Num),
		kvCacheDtype(val(KeyKVCacheDtype)), val(KeyTimingReference).Text, model.Backend(val(KeyBackend).Text))
	for _, d := range []*model.Deployment{&prefill, &decode} {
		w, ok := e.workers[*d]
		if !ok {
			return prefill, decode, dp, 0, fmt.Errorf("config: no worker model for %+v", *d)
		}
		if d == &prefill {
			kvBytes = w.KVBytesPerTokenModel()
		}
		if d.NumGPUBlocks == 0 {
			d.NumGPUBlocks = w.Capacity().NumGPUBlocks
		}
	}
	return prefill, decode, dp, kvBytes, nil
}

// disaggEngine is engine.Disagg at point p, and the prefill pool's deployment and replicas.
func (e *Experiment) disaggEngine(p Point, pcText string) (model.Deployment, int, *engine.Disagg, error) {
	prefill, decode, dp, kvBytes, err := e.disaggPoint(p, pcText)
	if err != nil {
		return prefill, 0, nil, err
	}
	return prefill, dp.Prefill.Replicas, e.File.DisaggEngine(dp.Decode.Replicas, decode, kvBytes), nil
}

// DisaggEngine is the decode stage of a fleet whose decode pool is decodeWorkers × decode
// (KV blocks resolved) after a prefill pool whose model holds kvBytes per token: the file's
// KV transfer and conditional disaggregation. A replay and the explorer's `a` build it here.
func (f *File) DisaggEngine(decodeWorkers int, decode model.Deployment, kvBytes int64) *engine.Disagg {
	gbps, _ := f.transfer()
	return &engine.Disagg{
		DecodeWorkers: decodeWorkers, Decode: decode, TransferGBps: gbps,
		KVBytesPerToken: kvBytes,
		TransferMode:    engine.TransferMode(f.Disagg.TransferMode),
		Conditional:     f.Disagg.conditional(),
	}
}

// eachDisaggEngine calls fn with every combination of the pools' engine lists, the KV cache
// dtype and the timing reference, in list order.
func (f *File) eachDisaggEngine(fn func(pmbt, pseqs, dmbt, dseqs int, kvDtype, ref string)) {
	for _, pm := range f.Values("prefill_max_num_batched_tokens") {
		for _, ps := range f.Values("prefill_max_num_seqs") {
			for _, dm := range f.Values("decode_max_num_batched_tokens") {
				for _, ds := range f.Values("decode_max_num_seqs") {
					for _, kv := range f.Values(KeyKVCacheDtype) {
						for _, ref := range f.Values(KeyTimingReference) {
							fn(int(pm.Num), int(ps.Num), int(dm.Num), int(ds.Num), kvCacheDtype(kv), ref.Text)
						}
					}
				}
			}
		}
	}
}

// addDisaggWorkers builds the worker models of every disaggregated deployment the space names.
func (e *Experiment) addDisaggWorkers() error {
	f := e.File
	var err error
	for _, sku := range f.Values(KeyHardwareSKU) {
		for _, dp := range f.list("parallel_configs").disagg {
			f.eachDisaggEngine(func(pmbt, pseqs, dmbt, dseqs int, kvDtype, ref string) {
				for _, b := range f.Values(KeyBackend) {
					p, d := f.disaggDeployments(sku.Text, dp, pmbt, pseqs, dmbt, dseqs, kvDtype, ref, model.Backend(b.Text))
					for _, dep := range []model.Deployment{p, d} {
						if _, ok := e.workers[dep]; ok || err != nil {
							continue
						}
						w, werr := model.NewWorker(dep)
						if werr != nil {
							err = fmt.Errorf("%s: search_space: %w", f.Name, werr)
							continue
						}
						e.workers[dep] = w
						e.deployments = append(e.deployments, dep)
					}
				}
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// disaggSettings are the fingerprint's disaggregated keys, present only for a disaggregated
// file so that every other file keeps its fingerprint.
func (f *File) disaggSettings(add func(key, value string)) {
	if !f.disaggregated() {
		return
	}
	s := f.Disagg
	or := func(x, def int) string {
		if x == 0 {
			x = def
		}
		return strconv.Itoa(x)
	}
	util := func(x float64) string {
		if x == 0 {
			x = f.GPUMemoryUtilization
		}
		if x == 0 {
			x = 0.9
		}
		return num(x)
	}
	on := func(b *bool, def bool) string {
		if b != nil {
			def = *b
		}
		return strconv.FormatBool(def)
	}
	gbps, mode := f.transfer()
	add("search_space.prefill_block_size", or(s.PrefillBlockSize, f.BlockSize))
	add("search_space.decode_block_size", or(s.DecodeBlockSize, f.BlockSize))
	add("search_space.prefill_gpu_memory_utilization", util(s.PrefillGPUMemoryUtilization))
	add("search_space.decode_gpu_memory_utilization", util(s.DecodeGPUMemoryUtilization))
	add("search_space.prefill_enable_prefix_caching", on(s.PrefillPrefixCaching, true))
	add("search_space.decode_enable_prefix_caching", on(s.DecodePrefixCaching, false))
	add("search_space.kv_transfer_bandwidth", num(gbps))
	add("search_space.kv_transfer_timing_mode", string(mode))
	if c := s.conditional(); c != nil {
		add("search_space.router_conditional_disagg", "true")
		add("search_space.router_conditional_disagg_eff_isl_threshold", strconv.Itoa(c.EffISLThreshold))
		add("search_space.router_conditional_disagg_eff_isl_ratio_threshold", num(c.EffISLRatioThreshold))
	}
}
