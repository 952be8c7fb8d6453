package trace

import (
	"fmt"
	"math/rand/v2"
	"strings"
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
