package router

// Workers that come and go (engine/fleet.go). Dynamo's router routes only to the instances
// its discovery lists: a worker registers its generate endpoint once its engine is up, and
// deregisters it when it drains or dies, and the KV router then drops the worker from its
// indexer (lib/llm/src/discovery/watcher.rs, lib/kv-router/src/indexer.rs remove_worker, at
// 057096c3). A router whose serving set is restricted chooses among those workers only; the
// full fleet stays allocated, so a worker slot keeps its index across restarts.

// SetServing says whether worker w takes new requests. Until it is first called every
// worker does, and Route takes its unrestricted path.
func (r *Router) SetServing(w int, on bool) {
	if r.serving == nil {
		r.serving = make([]bool, r.workers)
		for i := range r.serving {
			r.serving[i] = true
		}
		r.free = zeroed(r.free, r.workers)
		r.freeIdx = zeroed(r.freeIdx, r.workers)
	}
	r.serving[w] = on
}

// Serving reports whether worker w takes new requests.
func (r *Router) Serving(w int) bool { return r.serving == nil || r.serving[w] }

// RestrictableMode reports whether mode can route among a subset of the fleet: the policies
// that chooseFree prices (kv_router without the overlap credit's decay, round_robin, random,
// least_loaded) and power_of_two_choices (its draws over the serving workers).
func RestrictableMode(c Config) bool {
	d, ok := findPolicy(string(c.Mode))
	if !ok {
		return false
	}
	switch d.mode {
	case ModeKV:
		return c.OverlapScoreCreditDecay == 0
	case ModeRoundRobin, ModeRandom, ModeLeastLoaded, ModePowerOfTwoChoices:
		return true
	}
	return false
}

// chooseServing is the policy's choice among the serving workers (at least one serves).
func (r *Router) chooseServing(req *Request) int {
	if p, ok := r.policy.(powerOfTwo); ok {
		return p.chooseServing(r)
	}
	copy(r.free, r.serving)
	return r.chooseFree(req)
}
