package router

// ModeRoundRobin cycles through the workers in id order.
const ModeRoundRobin Mode = "round_robin"

// roundRobin sends request k to worker k mod n, starting at worker 0.
type roundRobin struct{ next int }

func (p *roundRobin) choose(r *Router, _ *Request) int {
	w := p.next
	p.next = (p.next + 1) % r.workers
	return w
}
