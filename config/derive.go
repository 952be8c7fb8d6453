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

// deriveParallel replaces parallel_configs with the derived aggregated configurations.
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
	var skipped []layout.Skip
	backends := f.Values(KeyBackend)
	for i, b := range backends {
		rules, err := layout.RulesFor(b.Text)
		if err != nil {
			return fail("%s", err)
		}
		sp := layout.Space{MoE: moe, Rules: rules, Budget: f.GPUBudget, MinBudget: f.MinGPUBudget, MaxSeqLen: seq}
		got, left, err := sp.Agg(f.everyDeployment(skus[0].Text, rules.Backend))
		if err != nil {
			return fail("%s", err)
		}
		for _, k := range left {
			if len(backends) > 1 {
				k.Reason = b.Text + ": " + k.Reason
			}
			skipped = append(skipped, k)
		}
		if i == 0 {
			fleets = got
		} else {
			fleets = slices.DeleteFunc(fleets, func(fl layout.Fleet) bool { return !slices.Contains(got, fl) })
		}
	}
	if len(fleets) == 0 {
		return fail("no parallel configuration of %s on %s holds a %d-token sequence within gpu_budget %d with a step-time table:\n%s",
			f.ModelName, skus[0].Text, seq, f.GPUBudget, f.skippedText(skipped))
	}
	pcs := make([]ParallelConfig, len(fleets))
	for i, fl := range fleets {
		pcs[i] = ParallelConfig{TP: fl.TP, AttentionDP: fl.AttentionDP, MoETP: fl.MoETP, MoEEP: fl.MoEEP, Replicas: fl.Replicas}
	}
	f.setParallelList(pcs)
	f.skipped = skipped
	return nil
}

// everyDeployment probes a shape under every deployment the other lists name with backend b:
// the KV dtype, the step budget (activation memory) and the timing reference all move its
// capacity or its table, and it must fit and be timed under each.
func (f *File) everyDeployment(sku string, b model.Backend) layout.Probe {
	var probes []layout.Probe
	for _, mbt := range f.Values("agg_max_num_batched_tokens") {
		for _, seqs := range f.Values("agg_max_num_seqs") {
			for _, kv := range f.Values(KeyKVCacheDtype) {
				for _, ref := range f.Values(KeyTimingReference) {
					d := f.deployment(sku, ParallelConfig{TP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 1}, int(mbt.Num), int(seqs.Num), kvCacheDtype(kv), ref.Text, b)
					probes = append(probes, layout.ModelProbe(d))
				}
			}
		}
	}
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

// Fleets returns parallel_configs as layout fleets, in the list's order.
func (f *File) Fleets() []layout.Fleet {
	pcs := f.list("parallel_configs").parallel
	out := make([]layout.Fleet, len(pcs))
	for i, pc := range pcs {
		out[i] = layout.Fleet{Shape: layout.Shape{TP: pc.TP, AttentionDP: pc.AttentionDP, MoETP: pc.MoETP, MoEEP: pc.MoEEP}, Replicas: pc.Replicas}
	}
	return out
}

// Projector is the projection of parallel_configs (derived, or a menu of several entries)
// onto which the sweep's search over shapes lands, as Spica's projector maps a latent request
// (GPU share, engine size, modes) onto a valid configuration; value j of the list is
// configuration j of the projector.
func (f *File) Projector() (*layout.Projector, error) {
	moe, err := layout.IsMoE(f.ModelName)
	if err != nil {
		return nil, err
	}
	budget := f.GPUBudget
	for _, fl := range f.Fleets() {
		budget = max(budget, fl.GPUs()) // a file without gpu_budget: the largest fleet is the whole
	}
	return layout.NewAggProjector(f.Fleets(), budget, moe)
}

// defaultParallel is the derived list's default: the reference's default request (the whole
// budget, the engine size at the geometric centre, attention TP, experts EP) projected onto
// it.
func (f *File) defaultParallel() string {
	pr, err := f.Projector()
	if err != nil {
		return ""
	}
	return f.list("parallel_configs").values[pr.Project(pr.Default()).Index].Text
}
