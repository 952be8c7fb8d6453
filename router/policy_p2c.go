package router

// ModePowerOfTwoChoices is Dynamo's power-of-two-choices mode (RoutingPolicy::
// PowerOfTwoChoices, lib/router-policy/src/lib.rs at 7654df8a, which the runtime's push
// router and lib/kv-router/src/scheduling/selector/simple.rs run): two distinct workers drawn
// at random, the one with fewer requests in flight taken, the first on a tie.
const ModePowerOfTwoChoices Mode = "power_of_two_choices"

type powerOfTwo struct{}

func (powerOfTwo) choose(r *Router, _ *Request) int {
	n := r.workers
	first := r.rng.IntN(n)
	if n == 1 {
		return first
	}
	second := (first + 1 + r.rng.IntN(n-1)) % n
	if r.load[first].InFlight <= r.load[second].InFlight {
		return first
	}
	return second
}

// chooseServing is the choice among the serving workers only, as the push router draws from
// the instances registered (a worker starting or draining is not among them): the same
// draws over the serving workers in order.
func (powerOfTwo) chooseServing(r *Router) int {
	idx := r.freeIdx[:0]
	for w := range r.workers {
		if r.serving[w] {
			idx = append(idx, w)
		}
	}
	r.freeIdx = idx
	n := len(idx)
	first := r.rng.IntN(n)
	if n == 1 {
		return idx[first]
	}
	second := (first + 1 + r.rng.IntN(n-1)) % n
	if r.load[idx[first]].InFlight <= r.load[idx[second]].InFlight {
		return idx[first]
	}
	return idx[second]
}
