package kvtier

import "math"

// link is one direction of a transfer path, shared by its transfers by processor sharing,
// as Dynamo's mocker prices a link (lib/mocker/src/kvbm_offload/bandwidth_sharing_model.rs
// @ b4c8ca0e): n transfers in flight each move at bandwidth/n, so a transfer's end moves
// later when another starts beside it. Time is in µs as float64 between events; a transfer
// ends at the first whole µs at or after its exact end.
//
// A link may cap its transfers in flight, as the mocker's offload pipelines do
// (max_concurrent_transfers, kvbm_offload/engine.rs @ 11b6254c: offload_batch_size for
// G1→G2, one for G2→G3); a transfer beyond the cap waits, first come first served, and
// starts when one ends.
type link struct {
	perUS  float64 // bytes per µs; +Inf: instant (a non-positive bandwidth, as Dynamo's)
	at     float64 // the time the transfers' remaining bytes are stated at
	active []flow
	cap    int    // transfers in flight at most; 0: no cap
	queued []flow // waiting for a place in flight
	qhead  int
	busy   float64 // µs with a transfer in flight
}

// flow is a transfer in flight: its id (an index into Manager.xfers) and bytes still to move.
type flow struct {
	id   int32
	left float64
}

func newLink(gbps float64, inFlight int) link {
	if gbps <= 0 {
		return link{perUS: math.Inf(1), cap: inFlight}
	}
	return link{perUS: gbps * 1e3, cap: inFlight}
}

// start puts a transfer of bytes on the link at now (the link advanced to now).
func (l *link) start(now float64, id int32, bytes float64) {
	l.progress(now)
	if math.IsInf(l.perUS, 1) {
		bytes = 0
	}
	if l.cap > 0 && len(l.active) >= l.cap {
		l.queued = append(l.queued, flow{id, bytes})
		return
	}
	l.active = append(l.active, flow{id, bytes})
}

// next is when the next transfer ends if none starts meanwhile; +Inf when idle.
func (l *link) next() float64 {
	if len(l.active) == 0 {
		return math.Inf(1)
	}
	least := l.active[0].left
	for _, f := range l.active[1:] {
		least = min(least, f.left)
	}
	if least == 0 {
		return l.at
	}
	return l.at + least*float64(len(l.active))/l.perUS
}

// deadline is when transfer id ends if none starts meanwhile: every transfer moves at the
// shared rate until it or id is done.
func (l *link) deadline(id int32) float64 {
	var left float64
	for _, f := range l.active {
		if f.id == id {
			left = f.left
		}
	}
	if math.IsInf(l.perUS, 1) {
		return l.at
	}
	sum := 0.0
	for _, f := range l.active {
		sum += min(f.left, left)
	}
	return l.at + sum/l.perUS
}

// advance moves the link to to (not before its next end), calling done for each transfer
// ending by then, in order of their ends.
func (l *link) advance(to float64, done func(id int32, end float64)) {
	for len(l.active) > 0 {
		end := l.next()
		if end > to+1e-9 {
			break
		}
		l.progress(end)
		least := 0 // the transfer that ends now, whatever rounding left of it
		for i, f := range l.active {
			if f.left < l.active[least].left {
				least = i
			}
		}
		l.active[least].left = 0
		for i := 0; i < len(l.active); {
			if l.active[i].left <= 1e-6 {
				id := l.active[i].id
				l.active = append(l.active[:i], l.active[i+1:]...)
				if l.qhead < len(l.queued) {
					l.active = append(l.active, l.queued[l.qhead])
					if l.qhead++; l.qhead == len(l.queued) {
						l.queued, l.qhead = l.queued[:0], 0
					}
				}
				done(id, end)
				continue
			}
			i++
		}
	}
	if to > l.at {
		l.progress(to)
	}
}

// progress moves every transfer in flight on to t at the shared rate.
func (l *link) progress(t float64) {
	if n := len(l.active); n > 0 && t > l.at {
		each := (t - l.at) * l.perUS / float64(n)
		for i := range l.active {
			l.active[i].left = max(0, l.active[i].left-each)
		}
		l.busy += t - l.at
	}
	l.at = max(l.at, t)
}

// whole is the first whole µs at or after t.
func whole(t float64) int64 { return int64(math.Ceil(t - 1e-6)) }
