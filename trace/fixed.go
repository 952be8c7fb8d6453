package trace

import (
	"fmt"
	"math/rand/v2"
)

// FixedOptions describe a synthetic trace of equal requests, as AIPerf's synthetic workload
// and DynoSim's examples run one (docs/dynosim/sweeps.md): every prompt ISL tokens and every
// output OSL tokens; the first SharedPrefixRatio of each prompt is one of PrefixGroups shared
// prefixes, picked at random, the rest its own. Timestamps are 0: replay it closed loop.
type FixedOptions struct {
	Requests, ISL, OSL int
	SharedPrefixRatio  float64
	PrefixGroups       int
	Seed               uint64
}

// Fixed synthesizes the trace o describes (hash blocks of DefaultBlockSize tokens).
func Fixed(o FixedOptions) (*Trace, error) {
	switch {
	case o.Requests < 1 || o.Requests > MaxRequests:
		return nil, fmt.Errorf("--requests: %d must be in [1, %d]", o.Requests, MaxRequests)
	case o.ISL < 1 || o.ISL > 1<<24:
		return nil, fmt.Errorf("--isl: %d must be in [1, %d]", o.ISL, 1<<24)
	case o.OSL < 1 || o.OSL > 1<<24:
		return nil, fmt.Errorf("--osl: %d must be in [1, %d]", o.OSL, 1<<24)
	case !(o.SharedPrefixRatio >= 0 && o.SharedPrefixRatio <= 1):
		return nil, fmt.Errorf("--prefix-ratio: %v must be in [0, 1]", o.SharedPrefixRatio)
	case o.SharedPrefixRatio > 0 && o.PrefixGroups < 1:
		return nil, fmt.Errorf("--prefix-groups: %d must be at least 1 with a shared prefix", o.PrefixGroups)
	}
	blocks := (o.ISL + DefaultBlockSize - 1) / DefaultBlockSize
	if int64(blocks)*int64(o.Requests) > MaxHashIDs {
		return nil, fmt.Errorf("--requests × --isl: %d hash blocks, more than %d", int64(blocks)*int64(o.Requests), MaxHashIDs)
	}
	// Only whole blocks can be shared: the prefix is rounded down to a block.
	shared := int(o.SharedPrefixRatio*float64(o.ISL)) / DefaultBlockSize
	r := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	ids := make([]int64, blocks*o.Requests)
	next := int64(o.PrefixGroups) * int64(shared)
	t := &Trace{Name: fmt.Sprintf("fixed-isl%d-osl%d", o.ISL, o.OSL), BlockSize: DefaultBlockSize,
		Digest:   fmt.Sprintf("fixed requests=%d isl=%d osl=%d prefix_ratio=%g prefix_groups=%d seed=%d", o.Requests, o.ISL, o.OSL, o.SharedPrefixRatio, o.PrefixGroups, o.Seed),
		Requests: make([]Request, o.Requests)}
	for i := range t.Requests {
		h := ids[i*blocks : (i+1)*blocks : (i+1)*blocks]
		g := int64(0)
		if shared > 0 {
			g = int64(r.IntN(o.PrefixGroups))
		}
		for j := range h {
			if j < shared {
				h[j] = g*int64(shared) + int64(j)
			} else {
				h[j] = next
				next++
			}
		}
		t.Requests[i] = Request{InputLength: o.ISL, OutputLength: o.OSL, HashIDs: h}
	}
	return t, nil
}
