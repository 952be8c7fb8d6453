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
