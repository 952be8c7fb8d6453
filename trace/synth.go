package trace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/routerlab/routerlab/internal/grow"
)

// Profiles lists the synthesizer's workload profiles, in presentation order.
func Profiles() []string { return []string{"toolagent", "conversation"} }

// DefaultSeed is the seed of the built-in traces.
const DefaultSeed = 1

// Builtin returns the named built-in trace ("toolagent" or "conversation"): the profile's
// full trace for DefaultSeed, named builtin:NAME; with SessionsSuffix ("toolagent-sessions")
// the same requests as sessions (SynthesizeSessions).
func Builtin(profile string) (*Trace, error) {
	synth := Synthesize
	if base, ok := strings.CutSuffix(profile, SessionsSuffix); ok {
		profile, synth = base, SynthesizeSessions
	}
	t, err := synth(profile, DefaultSeed, 0)
	if err != nil {
		return nil, err
	}
	t.Name = BuiltinPrefix + t.Name
	return t, nil
}

// quantiles is an inverse CDF given by knots (p, value), interpolated linearly.
type quantiles struct{ p, v []float64 }

func (q quantiles) sample(r *rand.Rand) float64 {
	u := r.Float64()
	i := lowerBound(q.p, u)
	if i == 0 {
		return q.v[0]
	}
	if i >= len(q.p) {
		return q.v[len(q.v)-1]
	}
	f := (u - q.p[i-1]) / (q.p[i] - q.p[i-1])
	return q.v[i-1] + f*(q.v[i]-q.v[i-1])
}

// lowerBound is the first index i with s[i] >= x (len(s) if none) in an ascending s: the
// position slices.BinarySearch finds, with plain comparisons. slices.BinarySearch orders
// floats by cmp.Compare, NaN-aware, at about three times the cost per probe; the synthesizer's
// knots and draws are never NaN (u in [0,1), constants), so both find the same index. It was
// 6 % of a one-request replay's instructions (85,000 draws per toolagent trace).
func lowerBound[T int | float64](s []T, x T) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// steps is a step function of a token count: p[i] applies below upTo[i], the last p beyond.
type steps struct {
	upTo []int
	p    []float64
}

func (s steps) at(tokens int) float64 {
	i := lowerBound(s.upTo, tokens+1)
	return s.p[i]
}

// always is a constant step function.
func always(p float64) steps { return steps{p: []float64{p}} }

// family is a system prompt (with tool definitions) shared verbatim by many sessions.
type family struct {
	blocks int // full trace blocks, so every one of them is shareable
	weight float64
}

// profile describes a workload as sessions of turns.
//
// A session picks a prompt family, and its first turn is that prompt plus a user part. Each
// later turn is usually the previous turn's input and output plus new tokens (a user message
// or a tool result), so it reuses the previous turn's full blocks; sometimes it repeats the
// previous turn exactly (a retry) or branches from an early point of it (an edited history).
// A session's pace scales its gaps; sessions start on a drifting Poisson rate, in bursts.
type profile struct {
	requests      int
	spanMS        int64
	tickMS        int64 // > 0: timestamps quantized to ticks, as the Mooncake traces were sampled
	families      []family
	firstUser     quantiles // tokens after the shared prompt in a session's first turn
	output        quantiles // output tokens of any turn
	appended      quantiles // tokens added after the previous turn's output on the second turn (may be negative)
	appendedLater quantiles // the same on later turns
	pRepeat       steps     // a turn repeats the previous one, by the previous input length
	pBranch       steps     // a turn keeps only part of the previous one's blocks, likewise
	branchKeep    quantiles // share of the previous turn's full blocks a branch keeps
	branchTail    quantiles // tokens after the kept blocks in a branch
	cont          []float64 // P(another turn) after turn k+1 at pace 1; the last value repeats
	// Each session has a pace: a log-normal multiplier of its gaps (median 1, paceSigma).
	// Brisk sessions also go on longer: P(stop) scales with pace^paceStop.
	paceSigma, paceStop float64
	firstContScale      steps     // multiplies P(a second turn) by the first turn's input length: documents are mostly one-shot
	gapMS               quantiles // time between a turn and the next
	burst               quantiles // sessions started together (agent fan-out)
	rateSigma           float64   // per-minute log-normal modulation of the session start rate
	rateRho             float64   // its minute-to-minute correlation
	meanTurns           float64   // first guess of requests per session, refined by calibration
	maxContext          int       // input + output of any turn fits this
	maxFirstUser        int       // cap of the first user part
}

func lookupProfile(name string) (profile, error) {
	switch name {
	case "toolagent":
		return toolagentProfile(), nil
	case "conversation":
		return conversationProfile(), nil
	}
	return profile{}, fmt.Errorf("unknown trace profile %q (known: toolagent, conversation, and either with %s)", name, SessionsSuffix)
}

// Synthesize generates a trace of the named profile, deterministically for a seed.
// requests <= 0 means the profile's full size; a smaller or larger trace keeps the
// profile's arrival rate, so its span scales with the request count.
func Synthesize(profileName string, seed uint64, requests int) (*Trace, error) {
	reqs, _, requests, err := synthesize(profileName, seed, requests, false)
	if err != nil {
		return nil, err
	}
	return &Trace{Name: profileName, BlockSize: DefaultBlockSize, Requests: reqs,
		Digest: fmt.Sprintf("synthesized: profile %s, seed %d, %d requests", profileName, seed, requests)}, nil
}

// synthesize draws a profile's requests (requests <= 0: its size, which it returns) and,
// with sessions, each request's generator session.
func synthesize(profileName string, seed uint64, requests int, sessions bool) ([]Request, []int32, int, error) {
	p, err := lookupProfile(profileName)
	if err != nil {
		return nil, nil, 0, err
	}
	if requests <= 0 {
		requests = p.requests
	}
	if requests > MaxRequests {
		return nil, nil, 0, fmt.Errorf("%s: %d requests exceed the memory budget of %d requests in a trace", profileName, requests, MaxRequests)
	}
	span := float64(p.spanMS) * float64(requests) / float64(p.requests)
	g := newGenerator(&p, seed)
	rate := g.calibrate(requests, span)
	var sess []int32
	out := &sess
	if !sessions {
		out = nil
	}
	return g.emit(rate, requests, out), sess, requests, nil
}

// SessionsSuffix names a built-in trace's session form: builtin:toolagent-sessions.
const SessionsSuffix = "-sessions"

// SynthesizeSessions is Synthesize with each request's session declared, as Mooncake session
// rows (session_id, timestamp): the same requests, and each later turn's delay is the gap to
// its session's previous timestamp, as Dynamo infers it from the timestamps. A closed-loop
// replay then sends a turn that gap after the previous turn completes.
func SynthesizeSessions(profileName string, seed uint64, requests int) (*Trace, error) {
	reqs, sess, requests, err := synthesize(profileName, seed, requests, true)
	if err != nil {
		return nil, err
	}
	st := &Sessions{Format: FormatMooncake, Turns: make([]Turn, len(reqs))}
	renum := map[int32]int32{} // generator session → 1 + its number here
	last := []int32{}          // per session: its latest request
	for i, gs := range sess {
		tu := &st.Turns[i]
		tu.HasTimestamp, tu.RowTimestampMS = true, reqs[i].TimestampMS
		if renum[gs] == 0 {
			renum[gs] = int32(len(st.IDs)) + 1
			st.IDs = append(st.IDs, fmt.Sprintf("%s-%d", profileName, len(st.IDs)+1))
			last = append(last, int32(i))
			tu.Session = renum[gs] - 1
			continue
		}
		tu.Session = renum[gs] - 1
		prev := last[tu.Session]
		pt := &st.Turns[prev]
		tu.Index, tu.Depth = pt.Index+1, pt.Depth+1
		tu.DelayUS = (reqs[i].TimestampMS - reqs[prev].TimestampMS) * 1000
		last[tu.Session] = int32(i)
	}
	t := &Trace{Name: profileName + SessionsSuffix, BlockSize: DefaultBlockSize, Requests: reqs, Sessions: st,
		Digest: fmt.Sprintf("synthesized: profile %s, seed %d, %d requests, as sessions", profileName, seed, requests)}
	// Among equal timestamps earlier turns first, as a session trace is read.
	t.Lines = make([]int, len(reqs))
	t.arrivalOrder()
	t.Lines = nil
	return t, nil
}

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

// placed is a turn at its time in the trace.
type placed struct {
	at         float64
	seq        int32 // placement order: a session's turns in order
	sess, turn int32 // indices into generator.sessions and generator.turns
}

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

// before orders placed turns by time, equal times in placement order, so a session's turns
// never swap. (Times are never NaN, so plain comparisons order them as cmp.Compare would.)
// seq is unique, so the order is total: every correct sort gives the same list.
func (a placed) before(b placed) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// sortPlaced sorts by before in place: an introsort (quicksort on a ninther pivot, insertion
// sort for 16 elements or fewer, heapsort past a depth limit) with the comparison inlined. It
// replaced slices.SortFunc, whose comparison is a call through a func value: the sort was
// about 15 % of a one-request replay's instructions (30,000 turns in the toolagent trace).
// It allocates nothing (a radix sort, tried before, cost more in page faults than it saved).
func sortPlaced(s []placed) {
	depth := 0
	for n := len(s); n > 0; n >>= 1 {
		depth += 2
	}
	introsortPlaced(s, depth)
}

func introsortPlaced(s []placed, depth int) {
	for len(s) > 16 {
		if depth == 0 {
			heapsortPlaced(s)
			return
		}
		depth--
		// Tukey's ninther (the median of three medians of three) to s[0], then a partition
		// around it: turns arrive as interleaved rising runs, where a plain median of three
		// kept picking poor pivots.
		l, m := len(s)-1, len(s)/2
		e := len(s) / 8
		m = median3(s, median3(s, 0, e, 2*e), median3(s, m-e, m, m+e), median3(s, l-2*e, l-e, l))
		s[0], s[m] = s[m], s[0]
		pivot := s[0]
		i, j := 1, l
		for {
			for i <= j && s[i].before(pivot) {
				i++
			}
			for i <= j && pivot.before(s[j]) {
				j--
			}
			if i >= j {
				break
			}
			s[i], s[j] = s[j], s[i]
			i++
			j--
		}
		s[0], s[j] = s[j], s[0]
		// Recurse into the smaller side, loop on the larger.
		if j < len(s)-1-j {
			introsortPlaced(s[:j], depth)
			s = s[j+1:]
		} else {
			introsortPlaced(s[j+1:], depth)
			s = s[:j]
		}
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].before(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// median3 is the index of the median of s[a], s[b], s[c].
func median3(s []placed, a, b, c int) int {
	if s[b].before(s[a]) {
		a, b = b, a
	}
	if s[c].before(s[b]) {
		b = c
		if s[b].before(s[a]) {
			b = a
		}
	}
	return b
}

func heapsortPlaced(s []placed) {
	down := func(root, n int) {
		for {
			c := 2*root + 1
			if c >= n {
				return
			}
			if c+1 < n && s[c].before(s[c+1]) {
				c++
			}
			if !s[root].before(s[c]) {
				return
			}
			s[root], s[c] = s[c], s[root]
			root = c
		}
	}
	for i := len(s)/2 - 1; i >= 0; i-- {
		down(i, len(s))
	}
	for i := len(s) - 1; i > 0; i-- {
		s[0], s[i] = s[i], s[0]
		down(0, i)
	}
}
