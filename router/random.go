package router

// ModeRandom picks a worker uniformly at random (seeded).
const ModeRandom Mode = "random"

// randomPolicy picks a worker uniformly at random from the router's seeded stream.
type randomPolicy struct{}

func (randomPolicy) choose(r *Router, _ *Request) int { return r.rng.IntN(r.workers) }
