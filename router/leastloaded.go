package router

// ModeLeastLoaded picks the worker with the fewest in-flight requests.
const ModeLeastLoaded Mode = "least_loaded"

// leastLoaded picks the worker with the fewest in-flight requests. Ties are broken
// uniformly at random (seeded) rather than by lowest id, so an idle fleet does not pile
// every first request onto worker 0.
type leastLoaded struct{}

func (leastLoaded) choose(r *Router, _ *Request) int {
	for w := range r.workers {
		r.cost[w] = float64(r.load[w].InFlight)
	}
	return argminRandomTie(r, r.cost)
}
