package engine

// Event phases at one instant, in processing order. Everything that happens at time t is
// ordered (t, phase, id): first every step that ends at t finishes (tokens, completions,
// KV "stored"), then tokenizer batches whose 2 ms window ends at t are handed to the thread (a
// prompt arriving exactly then waits for the next batch), then requests sent at t, then
// requests whose HTTP request path (Deployment.RequestPathUS) ends at t are routed — so
// routing sees all of t's completions and first tokens — then requests whose tokenisation ends at t reach their
// engine, then idle or finished workers start their next step — so a step starting at t sees
// every request that arrived by t — and last the snapshot.
//
// The id breaks remaining ties without a global sequence number: the worker for step
// events, the trace index for arrivals. Ties therefore do not depend on how the loop got
// there, which keeps the decode fast path and the step-by-step loop identical.
const (
	phaseStepEnd uint8 = iota
	phaseTokenizerClose
	phaseArrival
	phaseReachServer
	phaseTokenized
	phaseTransferDone // a disaggregated request's KV lands on its decode worker (disagg.go)
	phaseStepStart
	phaseSnapshot
	phaseRouterRecheck // the router queue's periodic release under the AIC model (admission.go)
	phaseFleet         // a worker's start-up ends or it fails; the planner's tick (fleet.go)
)

type event struct {
	time  int64
	phase uint8
	gen   uint32 // step events: worker generation; stale events are skipped
	id    int32
}

func (a *event) less(b *event) bool {
	if a.time != b.time {
		return a.time < b.time
	}
	if a.phase != b.phase {
		return a.phase < b.phase
	}
	return a.id < b.id
}

// eventHeap is a binary min-heap of events, by value (no interface boxing, no allocation
// once grown).
type eventHeap []event

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q[i].less(&q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	*h = q
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q[r].less(&q[l]) {
			m = r
		}
		if !q[m].less(&q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	return top
}
