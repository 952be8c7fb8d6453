package router

// policy chooses a worker for a request. Route has already filled r.overlap and
// r.newBlocks for the request; the policy only reads the router's state, except for
// drawing from r.rng and its own fields.
type policy interface {
	choose(r *Router, req *Request) int
}

// policyFor maps a router_mode onto its policy. Adding a policy means one new file with
// its type, plus its Mode constant and a line here and in ParseMode.
func policyFor(m Mode) policy {
	switch m {
	case ModeRoundRobin:
		return &roundRobin{}
	case ModeRandom:
		return randomPolicy{}
	case ModeLeastLoaded:
		return leastLoaded{}
	default:
		return kvPolicy{}
	}
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
