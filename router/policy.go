package router

import (
	"slices"
	"strings"
)

// policy chooses a worker for a request. Route has already filled r.overlap and
// r.activePrefix for the request; the policy only reads the router's state, except for
// drawing from r.rng and its own fields.
type policy interface {
	choose(r *Router, req *Request) int
}

// policyDef ties a router_mode to its policy.
type policyDef struct {
	mode    Mode
	aliases []string // other accepted spellings, lower case with "_"
	build   func() policy
}

// policies is the list of routing policies. Adding one means one new file (its Mode
// constant and its type) and one line here.
func policies() []policyDef {
	return []policyDef{
		{ModeKV, []string{"kv"}, func() policy { return kvPolicy{} }},
		{ModeRoundRobin, nil, func() policy { return &roundRobin{} }},
		{ModeRandom, nil, func() policy { return randomPolicy{} }},
		{ModeLeastLoaded, nil, func() policy { return leastLoaded{} }},
		{ModePowerOfTwoChoices, []string{"p2c"}, func() policy { return powerOfTwo{} }},
		{ModeDeviceAwareWeighted, nil, func() policy { return deviceAware{} }},
	}
}

// findPolicy looks a router_mode value up, case-insensitively and with "-" for "_".
func findPolicy(s string) (policyDef, bool) {
	key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	for _, d := range policies() {
		if key == string(d.mode) || slices.Contains(d.aliases, key) {
			return d, true
		}
	}
	return policyDef{}, false
}

// argminRandomTie returns the index of the smallest value, breaking exact ties uniformly
// at random (reservoir sampling, so one pass and one draw per tie).
func argminRandomTie(r *Router, vals []float64) int {
	best, ties := 0, 1
	for w := 1; w < len(vals); w++ {
		switch {
		case vals[w] < vals[best]:
			best, ties = w, 1
		case vals[w] == vals[best]:
			ties++
			if r.rng.IntN(ties) == 0 {
				best = w
			}
		}
	}
	return best
}
