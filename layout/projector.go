package layout

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Latent is a request in the sweep's latent space of parallel configurations, or a valid
// configuration's own features, as Spica's ParallelConfigProjector encodes them: the share of
// the budget used, (disaggregated) prefill's share of the GPUs used, and per role (one for
// aggregated serving; prefill then decode) GPUs per engine, attention mode ("tp", "dp") and,
// for a MoE pool, FFN mode ("ep", "tp").
type Latent struct {
	UsedGPURatio    float64
	PrefillGPUShare float64 // disaggregated only
	GPUsPerEngine   []float64
	AttentionModes  []string
	FFNModes        []string // nil for a dense pool
}

func (z Latent) String() string {
	s := fmt.Sprintf("used_gpu_ratio %.3f", z.UsedGPURatio)
	if len(z.GPUsPerEngine) == 2 {
		s += fmt.Sprintf(" prefill_gpu_share %.3f", z.PrefillGPUShare)
	}
	return fmt.Sprintf("%s gpus_per_engine %v attention %v ffn %v", s, z.GPUsPerEngine, z.AttentionModes, z.FFNModes)
}

// Projector maps latent requests onto one branch's pool of valid configurations.
type Projector struct {
	feats  []Latent
	keys   [][]int // the stable tie-break: per role tp, pp, attention_dp, moe_tp, moe_ep, replicas
	moe    bool
	lo, hi []float64 // per numeric feature, the pool's span (engine sizes on log2)
}

// NewAggProjector is the projector of an aggregated pool under gpu_budget; moe adds the FFN
// modes.
func NewAggProjector(pool []Fleet, budget int, moe bool) (*Projector, error) {
	roles := make([][]Fleet, len(pool))
	for i, f := range pool {
		roles[i] = []Fleet{f}
	}
	return newProjector(roles, budget, moe)
}

// NewDisaggProjector is the projector of a disaggregated pool under gpu_budget.
func NewDisaggProjector(pool []Pair, budget int, moe bool) (*Projector, error) {
	roles := make([][]Fleet, len(pool))
	for i, p := range pool {
		roles[i] = []Fleet{p.Prefill, p.Decode}
	}
	return newProjector(roles, budget, moe)
}

func newProjector(pool [][]Fleet, budget int, moe bool) (*Projector, error) {
	if len(pool) == 0 {
		return nil, fmt.Errorf("layout: projection needs at least one valid configuration")
	}
	if budget < 1 {
		return nil, fmt.Errorf("layout: projection needs a gpu_budget")
	}
	p := &Projector{moe: moe}
	for _, roles := range pool {
		var z Latent
		var key []int
		used := 0
		for _, f := range roles {
			used += f.GPUs()
			z.GPUsPerEngine = append(z.GPUsPerEngine, float64(f.Shape.GPUs()))
			z.AttentionModes = append(z.AttentionModes, f.AttentionMode())
			if p.moe {
				z.FFNModes = append(z.FFNModes, f.FFNMode())
			}
			key = append(key, f.TP, 1, f.AttentionDP, f.MoETP, f.MoEEP, f.Replicas)
		}
		z.UsedGPURatio = float64(used) / float64(budget)
		if len(roles) == 2 {
			z.PrefillGPUShare = float64(roles[0].GPUs()) / float64(used)
		}
		p.feats, p.keys = append(p.feats, z), append(p.keys, key)
	}
	n := len(p.numeric(p.feats[0]))
	p.lo, p.hi = make([]float64, n), make([]float64, n)
	for j := range n {
		p.lo[j], p.hi[j] = math.Inf(1), math.Inf(-1)
	}
	for _, z := range p.feats {
		for j, v := range p.numeric(z) {
			p.lo[j], p.hi[j] = min(p.lo[j], v), max(p.hi[j], v)
		}
	}
	return p, nil
}

// numeric is z's numeric features as distances compare them: ratios linear, engine sizes on
// log2.
func (p *Projector) numeric(z Latent) []float64 {
	out := []float64{z.UsedGPURatio}
	if len(z.GPUsPerEngine) == 2 {
		out = append(out, z.PrefillGPUShare)
	}
	for _, g := range z.GPUsPerEngine {
		out = append(out, math.Log2(g))
	}
	return out
}

// Features is the i-th configuration's own features.
func (p *Projector) Features(i int) Latent { return p.feats[i] }

// Len is the pool's size.
func (p *Projector) Len() int { return len(p.feats) }

// Normalised is configuration i's numeric features on [0, 1] (each over the pool's span; 0
// where the pool does not vary), then its modes as 0/1 (attention dp, FFN ep): the sweep's
// Gaussian process compares configurations on these axes.
func (p *Projector) Normalised(i int) []float64 {
	z := p.feats[i]
	var out []float64
	for j, v := range p.numeric(z) {
		if p.hi[j] > p.lo[j] {
			out = append(out, (v-p.lo[j])/(p.hi[j]-p.lo[j]))
		} else {
			out = append(out, 0)
		}
	}
	for _, m := range z.AttentionModes {
		out = append(out, b2f(m == "dp"))
	}
	for _, m := range z.FFNModes {
		out = append(out, b2f(m == "ep"))
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Default is the reference's default request: used_gpu_ratio 1 and prefill share 0.5, each
// clipped to the pool's span; per role the engine size nearest the geometric centre of the
// pool's sizes in log space (a tie takes the smaller); the first mode present in the order
// tp, dp (attention) and ep, tp (FFN).
func (p *Projector) Default() Latent {
	clip := func(v float64, j int) float64 { return min(max(v, p.lo[j]), p.hi[j]) }
	first := p.feats[0]
	z := Latent{UsedGPURatio: clip(1, 0)}
	roles := len(first.GPUsPerEngine)
	if roles == 2 {
		z.PrefillGPUShare = clip(0.5, 1)
	}
	for r := range roles {
		var sizes []float64
		present := map[string]bool{}
		ffn := map[string]bool{}
		for _, f := range p.feats {
			sizes = append(sizes, f.GPUsPerEngine[r])
			present[f.AttentionModes[r]] = true
			if p.moe {
				ffn[f.FFNModes[r]] = true
			}
		}
		z.GPUsPerEngine = append(z.GPUsPerEngine, geometricCentre(sizes))
		z.AttentionModes = append(z.AttentionModes, firstPresent(present, "tp", "dp"))
		if p.moe {
			z.FFNModes = append(z.FFNModes, firstPresent(ffn, "ep", "tp"))
		}
	}
	return z
}

func firstPresent(present map[string]bool, order ...string) string {
	for _, m := range order {
		if present[m] {
			return m
		}
	}
	return order[0]
}

// geometricCentre is the value nearest sqrt(min × max) in log space, the smaller on a tie
// (in log2, where the ladder's sizes and their centres are exact).
func geometricCentre(vals []float64) float64 {
	target := (math.Log2(slices.Min(vals)) + math.Log2(slices.Max(vals))) / 2
	best := vals[0]
	for _, v := range vals {
		d, bd := math.Abs(math.Log2(v)-target), math.Abs(math.Log2(best)-target)
		if d < bd || d == bd && v < best {
			best = v
		}
	}
	return best
}

// Projection is where a request landed.
type Projection struct {
	Index int // in the pool
	// ModeProjected: no configuration realises every requested mode; the least mismatched
	// ones competed.
	ModeProjected bool
	Distance      float64
}

// Project maps z onto the pool: keep the configurations with the fewest mode mismatches
// (an exact mode combination beats any numerically closer one), then the least sum of
// squared deltas of the numeric features, each divided by the pool's span of it, then the
// lexicographically smallest shape-and-replica key. It depends on z and the pool only, never
// on what was evaluated before.
func (p *Projector) Project(z Latent) Projection {
	mismatches := func(f Latent) int {
		n := 0
		for r := range f.AttentionModes {
			if r < len(z.AttentionModes) && f.AttentionModes[r] != z.AttentionModes[r] {
				n++
			}
			if r < len(f.FFNModes) && r < len(z.FFNModes) && f.FFNModes[r] != z.FFNModes[r] {
				n++
			}
		}
		return n
	}
	want := p.numeric(z)
	distance := func(f Latent) float64 {
		d := 0.0
		for j, v := range p.numeric(f) {
			if span := p.hi[j] - p.lo[j]; span > 0 {
				x := (v - want[j]) / span
				d += x * x
			}
		}
		return d
	}
	best, bestMis := -1, math.MaxInt
	bestD := math.Inf(1)
	for i, f := range p.feats {
		m := mismatches(f)
		d := distance(f)
		switch {
		case best < 0, m < bestMis, m == bestMis && d < bestD,
			m == bestMis && d == bestD && slices.Compare(p.keys[i], p.keys[best]) < 0:
			best, bestMis, bestD = i, m, d
		}
	}
	return Projection{Index: best, ModeProjected: bestMis > 0, Distance: bestD}
}

// Sample draws a latent request uniformly, as a black-box optimiser's random suggestion over
// the pool's latent parameters: each ratio uniform over the pool's span, each engine size
// one of the pool's sizes for that role, each mode one of the modes present.
func (p *Projector) Sample(rng *rand.Rand) Latent {
	uniform := func(j int) float64 { return p.lo[j] + rng.Float64()*(p.hi[j]-p.lo[j]) }
	roles := len(p.feats[0].GPUsPerEngine)
	z := Latent{UsedGPURatio: uniform(0)}
	if roles == 2 {
		z.PrefillGPUShare = uniform(1)
	}
	pick := func(vals []string) string {
		slices.Sort(vals)
		vals = slices.Compact(vals)
		return vals[rng.IntN(len(vals))]
	}
	for r := range roles {
		var sizes []float64
		var attn, ffn []string
		for _, f := range p.feats {
			sizes = append(sizes, f.GPUsPerEngine[r])
			attn = append(attn, f.AttentionModes[r])
			if p.moe {
				ffn = append(ffn, f.FFNModes[r])
			}
		}
		slices.Sort(sizes)
		sizes = slices.Compact(sizes)
		z.GPUsPerEngine = append(z.GPUsPerEngine, sizes[rng.IntN(len(sizes))])
		z.AttentionModes = append(z.AttentionModes, pick(attn))
		if p.moe {
			z.FFNModes = append(z.FFNModes, pick(ffn))
		}
	}
	return z
}
