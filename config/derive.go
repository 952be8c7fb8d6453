package config

// search_space.parallel_configs left empty ([]): the configurations are derived as Spica
// derives them (package layout), kept only where every deployment the file's other lists
// name fits and has a step-time table.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/routerlab/routerlab/layout"
	"github.com/routerlab/routerlab/model"
)

// DerivedParallel reports whether parallel_configs was left empty and derived.
func (f *File) DerivedParallel() bool { return f.derive }

// DerivedSkipped lists the worker shapes the derivation left out, each with its reason.
func (f *File) DerivedSkipped() []layout.Skip { return f.skipped }

// SkippedText describes DerivedSkipped, one shape a line ("" when nothing was skipped).
func (f *File) SkippedText() string {
	var b strings.Builder
	for _, s := range f.skipped {
		fmt.Fprintf(&b, "%s (%s): %s\n", s.Shape, s.Shape.Strategy(), s.Reason)
	}
	return b.String()
}

// deriveParallel replaces parallel_configs with the derived configurations of every listed
// deployment_mode: aggregated fleets, then disaggregated prefill/decode pairs.
func (f *File) deriveParallel() error {
	key := "search_space.parallel_configs"
	fail := func(format string, args ...any) error {
		return &Error{File: f.Name, Line: f.deriveLine, Key: key, Msg: "derived (left empty): " + fmt.Sprintf(format, args...)}
	}
	if f.GPUBudget < 1 {
		return fail("needs search_space.gpu_budget")
	}
	skus := f.Values(KeyHardwareSKU)
	if len(skus) != 1 {
		return fail("needs one hardware_sku, not a list of %d (the shapes a GPU can hold differ)", len(skus))
	}
	moe, err := layout.IsMoE(f.ModelName)
	if err != nil {
		return fail("%s", err)
	}
	seq := f.ContextLength
	if seq == 0 {
		seq = model.ContextLimit(f.ModelName) // the reference's default: the model's own max
	}
	if seq == 0 {
		return fail("needs search_space.context_length: %s states no context limit", f.ModelName)
	}
	// Spica pools the union of every backend's configurations and projects per backend;
	// routerlab's sweep is the product of its lists, so a fleet is kept only where every
	// listed backend accepts, fits and times it.
	var fleets []layout.Fleet
	var pairs []layout.Pair
	var skipped []layout.Skip
	backends := f.Values(KeyBackend)
	for i, b := range backends {
		rules, err := layout.RulesFor(b.Text)
		if err != nil {
			return fail("%s", err)
		}
		sp := layout.Space{MoE: moe, Rules: rules, Budget: f.GPUBudget, MinBudget: f.MinGPUBudget, MaxSeqLen: seq}
		var left []layout.Skip
		if f.hasMode(ModeAgg) {
			got, l, err := sp.Agg(f.everyDeployment(skus[0].Text, rules.Backend, false))
			if err != nil {
				return fail("%s", err)
			}
			fleets, left = keepCommon(i, fleets, got), l
		}
		if f.hasMode(ModeDisagg) {
			got, l, err := sp.Disagg(f.everyDeployment(skus[0].Text, rules.Backend, true))
			if err != nil {
				return fail("%s", err)
			}
			pairs = keepCommon(i, pairs, got)
			if left == nil {
				left = l
			}
		}
		for _, k := range left {
			if len(backends) > 1 {
				k.Reason = b.Text + ": " + k.Reason
			}
			skipped = append(skipped, k)
		}
	}
	if len(fleets)+len(pairs) == 0 || f.hasMode(ModeAgg) && len(fleets) == 0 || f.hasMode(ModeDisagg) && len(pairs) == 0 {
		return fail("no parallel configuration of %s on %s holds a %d-token sequence within gpu_budget %d with a step-time table:\n%s",
			f.ModelName, skus[0].Text, seq, f.GPUBudget, f.skippedText(skipped))
	}
	pcs := make([]ParallelConfig, len(fleets))
	for i, fl := range fleets {
		pcs[i] = parallelOf(fl)
	}
	dps := make([]DisaggParallel, len(pairs))
	for i, p := range pairs {
		dps[i] = DisaggParallel{Prefill: parallelOf(p.Prefill), Decode: parallelOf(p.Decode)}
	}
	f.setFleets(pcs, dps)
	f.skipped = skipped
	return nil
}

// keepCommon is got for the first backend (i = 0), else the configurations of kept that got
// also holds.
func keepCommon[T comparable](i int, kept, got []T) []T {
	if i == 0 {
		return got
	}
	return slices.DeleteFunc(kept, func(x T) bool { return !slices.Contains(got, x) })
}

func parallelOf(fl layout.Fleet) ParallelConfig {
	return ParallelConfig{TP: fl.TP, AttentionDP: fl.AttentionDP, MoETP: fl.MoETP, MoEEP: fl.MoEEP, Replicas: fl.Replicas}
}

// everyDeployment probes a shape under every deployment the other lists name with backend b:
// the KV dtype, the step budget (activation memory) and the timing reference all move its
// capacity or its table, and it must fit and be timed under each. With disagg the
// deployments are both pools' (their prefill_* and decode_* keys): layout.Space.Disagg takes
// one probe, so a shape serves either role only where it fits both.
func (f *File) everyDeployment(sku string, b model.Backend, disagg bool) layout.Probe {
	var probes []layout.Probe
	one := ParallelConfig{TP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 1}
	if !disagg {
		for _, mbt := range f.Values("agg_max_num_batched_tokens") {
			for _, seqs := range f.Values("agg_max_num_seqs") {
				for _, kv := range f.Values(KeyKVCacheDtype) {
					for _, ref := range f.Values(KeyTimingReference) {
						probes = append(probes, layout.ModelProbe(f.deployment(sku, one, int(mbt.Num), int(seqs.Num), kvCacheDtype(kv), ref.Text, b)))
					}
				}
			}
		}
		return worstOf(probes)
	}
	f.eachDisaggEngine(func(pmbt, pseqs, dmbt, dseqs int, kvDtype, ref string) {
		p, d := f.disaggDeployments(sku, DisaggParallel{one, one}, pmbt, pseqs, dmbt, dseqs, kvDtype, ref, b)
		probes = append(probes, layout.ModelProbe(p), layout.ModelProbe(d))
	})
	return worstOf(probes)
}

// worstOf probes a shape with every probe: the least KV tokens, the first untimed reason.
func worstOf(probes []layout.Probe) layout.Probe {
	return func(s layout.Shape) (layout.Fit, error) {
		var worst layout.Fit
		for i, p := range probes {
			fit, err := p(s)
			if err != nil {
				return layout.Fit{}, err
			}
			if i == 0 || fit.KVTokens < worst.KVTokens {
				worst.KVTokens = fit.KVTokens
			}
			if worst.Untimed == "" {
				worst.Untimed = fit.Untimed
			}
		}
		return worst, nil
	}
}

func (f *File) skippedText(s []layout.Skip) string {
	g := *f
	g.skipped = s
	return g.SkippedText()
}

// Fleets returns parallel_configs' aggregated entries as layout fleets, in the list's order.
func (f *File) Fleets() []layout.Fleet {
	pcs := f.list("parallel_configs").parallel
	out := make([]layout.Fleet, len(pcs))
	for i, pc := range pcs {
		out[i] = pc.fleet()
	}
	return out
}

func (pc ParallelConfig) fleet() layout.Fleet {
	return layout.Fleet{Shape: layout.Shape{TP: pc.TP, AttentionDP: pc.AttentionDP, MoETP: pc.MoETP, MoEEP: pc.MoEEP}, Replicas: pc.Replicas}
}

// Branch is one deployment_mode's part of parallel_configs: values First … First +
// Projector.Len() − 1, configuration j of the projector being value First + j.
type Branch struct {
	Mode      string
	First     int
	Projector *layout.Projector
}

// Branches are the projections of parallel_configs (derived, or a menu of several entries)
// onto which the sweep's search over shapes lands, one per deployment mode it holds
// (aggregated, then disaggregated), as Spica's projector maps a latent request (GPU share,
// prefill share, engine sizes, modes) onto a valid configuration of one branch.
func (f *File) Branches() ([]Branch, error) {
	moe, err := layout.IsMoE(f.ModelName)
	if err != nil {
		return nil, err
	}
	l := f.list("parallel_configs")
	pairs := make([]layout.Pair, len(l.disagg))
	budget := f.GPUBudget
	for _, fl := range f.Fleets() {
		budget = max(budget, fl.GPUs()) // a file without gpu_budget: the largest fleet is the whole
	}
	for i, dp := range l.disagg {
		pairs[i] = layout.Pair{Prefill: dp.Prefill.fleet(), Decode: dp.Decode.fleet()}
		budget = max(budget, pairs[i].GPUs())
	}
	var out []Branch
	if len(l.parallel) > 0 {
		pr, err := layout.NewAggProjector(f.Fleets(), budget, moe)
		if err != nil {
			return nil, err
		}
		out = append(out, Branch{ModeAgg, 0, pr})
	}
	if len(pairs) > 0 {
		pr, err := layout.NewDisaggProjector(pairs, budget, moe)
		if err != nil {
			return nil, err
		}
		out = append(out, Branch{ModeDisagg, len(l.parallel), pr})
	}
	return out, nil
}

// defaultParallel is the derived list's default: the reference's default request (the whole
// budget, prefill share 0.5, the engine size at the geometric centre, attention TP, experts
// EP) projected onto the branch of the first deployment_mode listed.
func (f *File) defaultParallel() string {
	brs, err := f.Branches()
	if err != nil || len(brs) == 0 {
		return ""
	}
	br := brs[0]
	for _, b := range brs {
		if b.Mode == f.Values("deployment_mode")[0].Text {
			br = b
		}
	}
	return f.list("parallel_configs").values[br.First+br.Projector.Project(br.Projector.Default()).Index].Text
}
