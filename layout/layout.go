// Package layout derives the parallel configurations of a search space that leaves
// parallel_configs empty, as Dynamo's Spica does (ai-dynamo/dynamo
// docs/components/aisimulate/spica/search-space.md and aisimulate/spica/parallel_enum.py at
// 4871677d, aisimulate/spica/model_hw.py at 8a8960af): GPUs per worker from the ladder
// 1, 2, 4, 8, 16; for a MoE model the four pure patterns TEP, DEP, TP and DTP under the width
// constraint tp × attention_dp = moe_tp × moe_ep; each backend's filters; a shape kept only if
// its KV cache holds the longest sequence; replica counts filling [min_gpu_budget,
// gpu_budget]; for disaggregated serving prefill and decode enumerated independently and
// paired within the budget. It also projects a latent request (GPU share, engine size, modes)
// onto the nearest valid configuration, as Spica's ParallelConfigProjector does
// (projector.go).
//
// Everything here is a pure function of its arguments; the model's memory arithmetic comes in
// through a Probe (probe.go builds one from the embedded tables).
package layout

import (
	"fmt"
	"maps"
	"slices"

	"github.com/routerlab/routerlab/model"
)

// Shape is one worker's parallel layout; a worker spans TP × AttentionDP GPUs (pipeline
// parallelism is pinned to 1, as in the reference).
type Shape struct {
	TP, AttentionDP, MoETP, MoEEP int
}

// GPUs is the worker's GPU count.
func (s Shape) GPUs() int { return s.TP * s.AttentionDP }

// Strategy names the shape's pattern: tep (attention TP, experts EP), dep (attention DP,
// experts EP), tp (dense, or MoE tensor-parallel under attention TP), dtp (MoE tensor-parallel
// under attention DP), mixed for anything else (the enumeration never emits it).
func (s Shape) Strategy() string {
	switch {
	case s.MoETP == 1 && s.MoEEP == 1 || s.TP > 1 && s.AttentionDP == 1 && s.MoETP > 1 && s.MoEEP == 1:
		return "tp"
	case s.TP > 1 && s.AttentionDP == 1 && s.MoETP == 1 && s.MoEEP > 1:
		return "tep"
	case s.TP == 1 && s.AttentionDP > 1 && s.MoETP == 1 && s.MoEEP > 1:
		return "dep"
	case s.TP == 1 && s.AttentionDP > 1 && s.MoETP > 1 && s.MoEEP == 1:
		return "dtp"
	}
	return "mixed"
}

// AttentionMode is "dp" with attention data parallelism, else "tp" (one GPU is "tp").
func (s Shape) AttentionMode() string {
	if s.AttentionDP > 1 {
		return "dp"
	}
	return "tp"
}

// FFNMode is "ep" with expert parallelism, else "tp" (one GPU is "tp").
func (s Shape) FFNMode() string {
	if s.MoEEP > 1 {
		return "ep"
	}
	return "tp"
}

func (s Shape) String() string {
	return fmt.Sprintf("tp%d-dp%d-moetp%d-ep%d", s.TP, s.AttentionDP, s.MoETP, s.MoEEP)
}

// Fleet is a worker shape and how many workers of it run: an aggregated configuration, or one
// role of a disaggregated one.
type Fleet struct {
	Shape
	Replicas int
}

// GPUs is the fleet's GPU count.
func (f Fleet) GPUs() int { return f.Shape.GPUs() * f.Replicas }

func (f Fleet) String() string { return fmt.Sprintf("%s-x%d", f.Shape, f.Replicas) }

// Pair is a disaggregated configuration: a prefill fleet and a decode fleet sharing the
// budget, each with its own shape and replicas.
type Pair struct {
	Prefill, Decode Fleet
}

// GPUs is both fleets' GPU count.
func (p Pair) GPUs() int { return p.Prefill.GPUs() + p.Decode.GPUs() }

func (p Pair) String() string {
	return "prefill " + p.Prefill.String() + " decode " + p.Decode.String()
}

// GPUsPerWorker is the ladder of worker sizes the enumeration tries (Spica's
// _DEFAULT_GPUS_PER_WORKER, AIConfigurator's default num_gpu_per_worker).
var GPUsPerWorker = []int{1, 2, 4, 8, 16}

// Rules are a backend's filters on worker shapes: the backend, and for SGLang whether its
// MoE kernel is expert-parallel only. The filters themselves are model.Backend.CheckLayout
// (AIConfigurator's enumerate_parallel_config, mirrored by Spica's parallel_enum.py), the
// check every deployment passes, so the derivation and a replay cannot disagree.
type Rules struct {
	Backend model.Backend
	// EPOnlyMoE: SGLang's expert-parallel-only MoE kernels (deepep_moe, megamoe) force
	// moe_tp = 1.
	EPOnlyMoE bool
}

// backendRules names every backend's filters: "vllm", "trtllm", "sglang", and SGLang with an
// expert-parallel-only MoE kernel ("sglang/deepep_moe", "sglang/megamoe").
var backendRules = map[string]Rules{
	"vllm": {Backend: model.BackendVLLM}, "trtllm": {Backend: model.BackendTRTLLM}, "sglang": {Backend: model.BackendSGLang},
	"sglang/deepep_moe": {Backend: model.BackendSGLang, EPOnlyMoE: true}, "sglang/megamoe": {Backend: model.BackendSGLang, EPOnlyMoE: true},
}

// RulesFor returns the filters of a backend by the names backendRules gives.
func RulesFor(backend string) (Rules, error) {
	if r, ok := backendRules[backend]; ok {
		return r, nil
	}
	return Rules{}, fmt.Errorf("layout: unknown backend %q (want one of %v)", backend, slices.Sorted(maps.Keys(backendRules)))
}

// allows reports whether the backend accepts the shape.
func (r Rules) allows(s Shape) bool {
	return r.Backend.CheckLayout(model.Layout{TP: s.TP, AttentionDP: s.AttentionDP, MoETP: s.MoETP, MoEEP: s.MoEEP}, r.EPOnlyMoE) == nil
}

// powersUpTo is 1, 2, 4, … up to n.
func powersUpTo(n int) []int {
	var out []int
	for v := 1; v <= n; v *= 2 {
		out = append(out, v)
	}
	return out
}

// WorkerShapes returns the legal shapes of one worker of exactly gpus GPUs: a dense model
// runs plain TP (its MLP split like experts over all tp GPUs, moe_tp = tp, as routerlab's
// tables key a dense layout); a MoE model every TEP, DEP, TP or DTP shape the backend allows, in the
// reference's scan order (tp, attention_dp, moe_tp, moe_ep ascending).
func WorkerShapes(moe bool, r Rules, gpus int) []Shape {
	if !moe {
		return []Shape{{TP: gpus, AttentionDP: 1, MoETP: gpus, MoEEP: 1}}
	}
	var out []Shape
	ladder := powersUpTo(gpus)
	for _, tp := range ladder {
		for _, dp := range ladder {
			if tp*dp != gpus {
				continue
			}
			for _, mtp := range ladder {
				for _, ep := range ladder {
					s := Shape{TP: tp, AttentionDP: dp, MoETP: mtp, MoEEP: ep}
					if mtp*ep != gpus || !r.allows(s) {
						continue
					}
					if st := s.Strategy(); st == "mixed" || st == "tp" && mtp == 1 {
						continue // not one of the four pure patterns (one GPU: no MoE pattern)
					}
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// Fit is what a Probe learns of a shape: how many tokens its KV cache holds and whether
// routerlab can time it.
type Fit struct {
	KVTokens int64
	// Untimed says why no step-time table prices the shape ("" when one does).
	Untimed string
}

// Probe sizes a shape's KV cache and looks up its timing table.
type Probe func(Shape) (Fit, error)

// Skip is a shape the enumeration left out, and why.
type Skip struct {
	Shape  Shape
	Reason string
}

// Space is the input of the enumeration.
type Space struct {
	MoE       bool
	Rules     Rules
	Budget    int // gpu_budget
	MinBudget int // min_gpu_budget (0: none)
	// MaxSeqLen is the longest sequence a worker must hold: context_length.
	MaxSeqLen int
}

// Check returns an error when the space cannot be enumerated.
func (sp Space) Check() error {
	switch {
	case sp.Budget < 1:
		return fmt.Errorf("layout: gpu_budget %d must be at least 1", sp.Budget)
	case sp.MinBudget < 0 || sp.MinBudget > sp.Budget:
		return fmt.Errorf("layout: min_gpu_budget %d must be in [1, gpu_budget %d]", sp.MinBudget, sp.Budget)
	case sp.MaxSeqLen < 1:
		return fmt.Errorf("layout: the longest sequence (context_length) must be set to check KV feasibility")
	}
	return nil
}

// Shapes returns every shape the ladder and the backend allow within the budget, those whose
// KV cache holds the longest sequence and that have a timing table (kept), and the others
// with the reason (skipped).
func (sp Space) Shapes(probe Probe) (kept []Shape, skipped []Skip, err error) {
	if err := sp.Check(); err != nil {
		return nil, nil, err
	}
	for _, g := range GPUsPerWorker {
		if g > sp.Budget {
			continue
		}
		for _, s := range WorkerShapes(sp.MoE, sp.Rules, g) {
			fit, err := probe(s)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case fit.KVTokens <= int64(sp.MaxSeqLen):
				skipped = append(skipped, Skip{s, fmt.Sprintf("its KV cache holds %d tokens, not more than the longest sequence (%d)", max(fit.KVTokens, 0), sp.MaxSeqLen)})
			case fit.Untimed != "":
				skipped = append(skipped, Skip{s, fit.Untimed})
			default:
				kept = append(kept, s)
			}
		}
	}
	return kept, skipped, nil
}

// fleets returns every replica count of every shape with total GPUs in [lo, Budget].
func (sp Space) fleets(shapes []Shape, lo int) []Fleet {
	var out []Fleet
	for _, s := range shapes {
		for r := 1; r*s.GPUs() <= sp.Budget; r++ {
			if r*s.GPUs() >= lo {
				out = append(out, Fleet{s, r})
			}
		}
	}
	return out
}

// Agg returns the aggregated configurations: every kept shape with each replica count whose
// GPUs lie in [min_gpu_budget, gpu_budget], in shape order then replicas ascending.
func (sp Space) Agg(probe Probe) ([]Fleet, []Skip, error) {
	kept, skipped, err := sp.Shapes(probe)
	if err != nil {
		return nil, nil, err
	}
	return sp.fleets(kept, sp.MinBudget), skipped, nil
}

// Disagg returns the disaggregated configurations: prefill and decode fleets enumerated
// independently (each any kept shape and replica count), paired when their GPUs together
// lie in [min_gpu_budget, gpu_budget]. Rate matching between the roles is left to the
// replay, as in the reference.
func (sp Space) Disagg(probe Probe) ([]Pair, []Skip, error) {
	kept, skipped, err := sp.Shapes(probe)
	if err != nil {
		return nil, nil, err
	}
	roles := sp.fleets(kept, 0)
	if len(roles) == 0 {
		return nil, skipped, nil
	}
	// A role can take at most the budget less the other role's smallest fleet.
	least := slices.MinFunc(roles, func(a, b Fleet) int { return a.GPUs() - b.GPUs() }).GPUs()
	var out []Pair
	for _, p := range roles {
		if p.GPUs() > sp.Budget-least {
			continue
		}
		for _, d := range roles {
			if t := p.GPUs() + d.GPUs(); t <= sp.Budget && t >= sp.MinBudget {
				out = append(out, Pair{p, d})
			}
		}
	}
	return out, skipped, nil
}
