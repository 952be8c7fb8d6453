package trace

import (
	"math"
	"math/rand/v2"

	"github.com/routerlab/routerlab/internal/grow"
)

// turn is one request of a session, before hash ids are assigned.
type turn struct {
	offset        float64 // ms after the session's start
	input, output int
	keep          int // leading blocks shared with the previous turn (the prompt family's on the first)
}

type session struct {
	family     int
	delay      float64 // ms after its start event (sessions of a burst start together)
	first, end int     // its turns: generator.turns[first:end]
}

// event is a burst of session starts at one point of the unit-rate arrival process.
type event struct {
	u          float64 // cumulative unit-rate exponential draws
	first, end int     // its sessions: generator.sessions[first:end]
	turns      int     // of all its sessions
	reach      float64 // ms from the event to its last turn: the largest delay + offset
}

// generator draws sessions independently of the arrival rate, then places their start
// events by time change: event times are the unit-rate points u mapped through the inverse
// of rate·∫mod (mod: a per-minute log-normal rate multiplier). The rate alone then decides
// how many requests fall within the span, so it can be calibrated without redrawing anything.
// Events, sessions and turns are drawn into three lists kept in chunks that never move (an
// event's sessions and a session's turns are runs of them): one slice per session and event
// cost a third of a synthesis in allocation and growth, and one list grown by doubling
// copied, and faulted in anew, what it held at each growth.
type generator struct {
	p         *profile
	seed      uint64
	arrivals  *rand.Rand // unit-rate points
	content   *rand.Rand // sessions
	modRNG    *rand.Rand // rate multipliers
	familyCum []float64
	mods      []float64 // rate multiplier of each minute
	cumMod    []float64 // ∫mod up to the start of each minute, in minute units
	z         float64   // AR(1) state behind mods
	events    grow.Chunks[event]
	sessions  grow.Chunks[session]
	turns     grow.Chunks[turn]
}

func newGenerator(p *profile, seed uint64) *generator {
	g := &generator{p: p, seed: seed,
		arrivals: rand.New(rand.NewPCG(seed, 0x617272)),
		content:  rand.New(rand.NewPCG(seed, 0x636f6e)),
		modRNG:   rand.New(rand.NewPCG(seed, 0x6d6f64)),
		cumMod:   []float64{0},
	}
	total := 0.0
	for _, f := range p.families {
		total += f.weight
		g.familyCum = append(g.familyCum, total)
	}
	for i := range g.familyCum {
		g.familyCum[i] /= total
	}
	return g
}

const minuteMS = 60000.0

// timeOf maps a point of the unit-rate process to ms for a start rate (events per ms).
func (g *generator) timeOf(u, rate float64) float64 {
	t, _ := g.timeFrom(0, u, rate)
	return t
}

// timeFrom is timeOf for a point at or after the one whose minute was k: the passes over
// the events, in the order of their points, walk the minutes instead of searching them.
// It returns the point's minute too.
func (g *generator) timeFrom(k int, u, rate float64) (float64, int) {
	target := u / (rate * minuteMS) // in mod-weighted minutes
	for g.cumMod[len(g.cumMod)-1] <= target {
		g.z = g.p.rateRho*g.z + math.Sqrt(1-g.p.rateRho*g.p.rateRho)*g.modRNG.NormFloat64()
		m := math.Exp(g.p.rateSigma*g.z - g.p.rateSigma*g.p.rateSigma/2)
		g.mods = append(g.mods, m)
		g.cumMod = append(g.cumMod, g.cumMod[len(g.cumMod)-1]+m)
	}
	// The minute whose start is the last at or before target (cumMod rises strictly).
	for g.cumMod[k+1] <= target {
		k++
	}
	return (float64(k) + (target-g.cumMod[k])/g.mods[k]) * minuteMS, k
}

// count returns how many requests start before span at a start rate, drawing more
// events when the ones drawn so far end before it.
func (g *generator) count(rate, span float64) int {
	for g.events.Len() == 0 || g.timeOf(g.events.At(g.events.Len()-1).u, rate) < span {
		g.drawEvents(max(64, g.events.Len()/4))
	}
	n, k := 0, 0
	for ei := range g.events.Len() {
		e := g.events.At(ei)
		var t float64
		t, k = g.timeFrom(k, e.u, rate)
		if t >= span {
			break
		}
		// Every turn of the event falls within the span (a millisecond to spare for
		// rounding, so the sum below would agree): count them at once.
		if t+e.reach+1 < span {
			n += e.turns
			continue
		}
		for si := e.first; si < e.end; si++ {
			s := g.sessions.At(si)
			for ti := s.first; ti < s.end; ti++ {
				if t+s.delay+g.turns.At(ti).offset < span {
					n++
				}
			}
		}
	}
	return n
}

// calibrate finds a start rate at which at least the wanted number of requests falls
// within the span, and hardly more. The count grows about in proportion to the rate.
func (g *generator) calibrate(requests int, span float64) float64 {
	rate := float64(requests) / (span * g.p.meanTurns)
	for range 8 {
		c := g.count(rate, span)
		if c == requests {
			return rate
		}
		rate *= float64(requests) / float64(max(c, 1))
	}
	for g.count(rate, span) < requests {
		rate *= 1.0005
	}
	return rate
}

func (g *generator) drawEvents(n int) {
	u := 0.0
	if n := g.events.Len(); n > 0 {
		u = g.events.At(n - 1).u
	}
	for range n {
		u += g.arrivals.ExpFloat64()
		e := event{u: u, first: g.sessions.Len()}
		fam := g.pickFamily()
		for i := range max(1, int(g.p.burst.sample(g.content))) {
			s := session{family: fam, first: g.turns.Len()}
			if i > 0 {
				s.delay = g.content.Float64() * 200
			}
			g.drawTurns(fam)
			s.end = g.turns.Len()
			for ti := s.first; ti < s.end; ti++ {
				e.reach = max(e.reach, s.delay+g.turns.At(ti).offset)
			}
			e.turns += s.end - s.first
			g.sessions.Append(s)
		}
		e.end = g.sessions.Len()
		g.events.Append(e)
	}
}

func (g *generator) pickFamily() int {
	i := lowerBound(g.familyCum, g.content.Float64())
	return min(i, len(g.familyCum)-1)
}

func blocksOf(tokens int) int { return (tokens + DefaultBlockSize - 1) / DefaultBlockSize }

// drawTurns draws one session's requests onto g.turns.
func (g *generator) drawTurns(fam int) {
	p, r := g.p, g.content
	shared := p.families[fam].blocks
	user := min(p.maxFirstUser, max(1, int(p.firstUser.sample(r))))
	cur := turn{input: shared*DefaultBlockSize + user, output: g.output(), keep: shared}
	if cur.input+cur.output > p.maxContext {
		cur.input = p.maxContext - cur.output
	}
	pace := math.Exp(p.paceSigma * r.NormFloat64())
	stopScale := math.Pow(pace, p.paceStop)
	for k := 0; ; k++ {
		g.turns.Append(cur)
		pCont := 1 - (1-p.cont[min(k, len(p.cont)-1)])*stopScale
		if k == 0 {
			pCont *= p.firstContScale.at(cur.input)
		}
		if r.Float64() >= pCont {
			return
		}
		next := turn{offset: cur.offset + pace*p.gapMS.sample(r), output: g.output()}
		pRepeat, pBranch := p.pRepeat.at(cur.input), p.pBranch.at(cur.input)
		switch u := r.Float64(); {
		case u < pRepeat:
			next.keep, next.input = blocksOf(cur.input), cur.input
		case u < pRepeat+pBranch && cur.input/DefaultBlockSize > 2:
			// A branch keeps at least two blocks: with one it would be a new session.
			next.keep = max(2, int(math.Round(float64(cur.input/DefaultBlockSize)*p.branchKeep.sample(r))))
			next.input = next.keep*DefaultBlockSize + max(1, int(p.branchTail.sample(r)))
		default:
			add := p.appended
			if k > 0 {
				add = p.appendedLater
			}
			next.keep = cur.input / DefaultBlockSize
			next.input = max(next.keep*DefaultBlockSize+1, cur.input+cur.output+int(add.sample(r)))
		}
		if next.input+next.output > p.maxContext {
			return
		}
		cur = next
	}
}

func (g *generator) output() int { return max(1, int(g.p.output.sample(g.content))) }

// emit places every turn at the calibrated rate, keeps the first n in time order and
// builds their requests: timestamps (on ticks if the profile has them) and hash ids
// numbered by first appearance, as in the Mooncake traces.
// sess, when not nil, receives each request's generator session.
func (g *generator) emit(rate float64, n int, sess *[]int32) []Request {
	all := make([]placed, 0, g.turns.Len())
	k := 0
	for ei := range g.events.Len() {
		e := g.events.At(ei)
		var t float64
		t, k = g.timeFrom(k, e.u, rate)
		for si := e.first; si < e.end; si++ {
			s := g.sessions.At(si)
			for ti := s.first; ti < s.end; ti++ {
				all = append(all, placed{at: t + s.delay + g.turns.At(ti).offset, seq: int32(len(all)), sess: int32(si), turn: int32(ti)})
			}
		}
	}
	sortPlaced(all)
	all = all[:min(n, len(all))]

	familyIDs := make([][]int64, len(g.p.families))
	history := make([][]int64, g.sessions.Len()) // ids of each session's latest turn
	nextID := int64(0)
	fresh := func(ids []int64, blocks int) []int64 {
		for len(ids) < blocks {
			ids = append(ids, nextID)
			nextID++
		}
		return ids
	}
	ticks := rand.New(rand.NewPCG(g.seed, 0x7469636b))
	lastTick, lastTS := int64(-1), int64(0)
	total := 0
	for _, pl := range all {
		total += blocksOf(g.turns.At(int(pl.turn)).input)
	}
	arena := make([]int64, 0, total) // every request's ids, in one allocation
	out := make([]Request, len(all))
	for i, pl := range all {
		s := g.sessions.At(int(pl.sess))
		tu := *g.turns.At(int(pl.turn))
		blocks := blocksOf(tu.input)
		ids := arena[len(arena) : len(arena) : len(arena)+blocks]
		if int(pl.turn) == s.first { // the session's first turn
			if familyIDs[s.family] == nil {
				familyIDs[s.family] = fresh(nil, tu.keep)
			}
			ids = append(ids, familyIDs[s.family]...)
		} else {
			ids = append(ids, history[pl.sess][:tu.keep]...)
		}
		ids = fresh(ids, blocks)
		arena = arena[:len(arena)+blocks]
		history[pl.sess] = ids
		ts := int64(pl.at)
		if tick := g.p.tickMS; tick > 0 {
			if k := ts / tick; k != lastTick {
				lastTick, lastTS = k, k*tick
				// The real traces' tick stamps wander by a millisecond.
				if u := ticks.Float64(); k > 0 && u < 0.29 {
					lastTS--
				} else if u > 0.99 {
					lastTS++
				}
			}
			ts = lastTS
		}
		out[i] = Request{TimestampMS: ts, InputLength: tu.input, OutputLength: tu.output, HashIDs: ids}
		if sess != nil {
			*sess = append(*sess, pl.sess)
		}
	}
	return out
}
