package engine

import (
	"fmt"
	"math"

	"github.com/routerlab/routerlab/trace"
)

// sessionSchedule schedules a trace's declared sessions and dependencies as Dynamo's replay driver
// does (lib/mocker/src/loadgen/driver.rs, WorkloadDriver, at ai-dynamo/dynamo 0c7705a4; the
// formats' scheduling rules in docs/dynosim/trace-formats.md at 3fb00074):
//
//   - closed loop (ReplayConcurrency N, the Concurrency policy): N sessions are active at a
//     time, depth first. A session holds its slot from its first turn through every later
//     turn and the waits between them; its first turn starts when it is activated (its
//     timestamp is ignored); each later turn starts its delay (and tool wait) after the
//     previous turn completes; when its last turn completes the next session in trace order
//     is activated.
//   - open loop (the Trace policy): a session's first turn arrives at its timestamp, each
//     later turn its delay after the previous one completes; timestamps and delays are
//     divided by ArrivalSpeedupRatio, as Trace::speed_up_timing divides both.
//   - agentic_mooncake (the Agentic policy, open loop only): a request without wait_for
//     arrives at its timestamp; one with wait_for its delay + tool_wait_ms after the last of
//     them completes.
//
// A turn the router rejects counts as answered at once (Dynamo's TurnOutcome::Rejected
// resolves the turn and schedules the next). A client's stream-end latency
// (Deployment.StreamEndUS) comes before a delay, as it comes before a plain closed loop's
// next send.
type sessionSchedule struct {
	agentic, closed bool
	// waitUS is, per request, how long after its predecessor (or its last dependency)
	// completes it is sent: its delay plus tool wait, in simulation µs.
	waitUS []int64
	// next is, per request, the following turn of its session (-1 after the last).
	next []int32
	// firsts are the sessions' first requests, in trace order; started counts the sessions
	// activated so far (closed loop).
	firsts  []int32
	started int
	// Agentic DAGs: per request, its dependencies not yet completed and the latest
	// completion among those that have; users[usersAt[j]:usersAt[j+1]] wait for request j.
	remaining      []int32
	readyAfter     []int64
	users, usersAt []int32
	keys           []int64 // per request: 1 + its session (the router's affinity key)
}

// checkSessions refuses what Dynamo's replay refuses: agentic_mooncake under a replay
// concurrency, and applied_compute_agentic sessions (which have no start times) without one.
func (c *Config) checkSessions(tr *trace.Trace) error {
	s := tr.Sessions
	if s == nil {
		return nil
	}
	switch {
	case s.Format == trace.FormatAgentic && c.ReplayConcurrency > 0:
		return fmt.Errorf("%s: replay_concurrency: an agentic_mooncake trace is replayed on its own schedule (timestamps and wait_for), not under a replay concurrency (%d); Dynamo's replay refuses the combination too: set replay_concurrency to 0",
			tr.Name, c.ReplayConcurrency)
	case s.Format == trace.FormatAppliedCompute && c.ReplayConcurrency == 0:
		return fmt.Errorf("%s: replay_concurrency: applied_compute_agentic sessions have no start times, so they need a replay concurrency, as Dynamo's replay requires: set replay_concurrency > 0",
			tr.Name)
	}
	if c.ReplayConcurrency > 0 {
		// Sessions run one after another in a slot: every wait of the trace could add up on
		// one clock, which must stay inside the simulation's.
		var total float64
		for i := range s.Turns {
			total += float64(s.Turns[i].DelayUS + s.Turns[i].ToolWaitUS)
		}
		if total > maxArrivalUS/2 {
			return fmt.Errorf("%s: delay: the trace's delays and tool waits add up to %.0f years, beyond the simulation clock", tr.Name, total/(365.25*24*3600e6))
		}
	}
	return nil
}

// keptSessions is the structure of tr's served requests (served: their indices in tr). A
// turn refused before routing is answered at once in Dynamo, so a session's refused turn
// passes its wait to the session's next served turn, and a served agentic row that waited
// for a refused one waits for what that one waited for, then that one's wait too (exact
// when the refused row was the latest of its dependencies; otherwise it may start later).
func keptSessions(tr *trace.Trace, served []int) *trace.Sessions {
	s := tr.Sessions
	agentic := s.Format == trace.FormatAgentic
	out := &trace.Sessions{Format: s.Format, IDs: s.IDs, Expanded: s.Expanded, Turns: make([]trace.Turn, len(served))}
	pos := make([]int32, len(tr.Requests)) // new index of a served request, -1 for a refused one
	for i := range pos {
		pos[i] = -1
	}
	for k, i := range served {
		pos[i] = int32(k)
	}
	carried := map[int32]int64{} // per session: waits of its refused turns since its last served one
	type refusedDeps struct {
		waits []int32 // the served requests it waited for
		us    int64   // its own wait, after the longest refused chain before it
	}
	refused := map[int]refusedDeps{}
	waitsOf := func(i int) ([]int32, int64) {
		var ws []int32
		var extra int64
		for _, j := range s.Turns[i].WaitFor {
			if pos[j] >= 0 {
				ws = append(ws, pos[j])
			} else {
				ws = append(ws, refused[int(j)].waits...)
				extra = max(extra, refused[int(j)].us)
			}
		}
		return ws, extra
	}
	for i := range s.Turns {
		tu := s.Turns[i]
		ws, extra := waitsOf(i)
		if pos[i] < 0 {
			if agentic {
				refused[i] = refusedDeps{ws, extra + tu.DelayUS + tu.ToolWaitUS}
			} else {
				carried[tu.Session] += tu.DelayUS + tu.ToolWaitUS
			}
			continue
		}
		if !agentic {
			extra = carried[tu.Session]
			delete(carried, tu.Session)
		}
		tu.DelayUS += extra
		tu.WaitFor = ws
		out.Turns[pos[i]] = tu
	}
	return out
}

// startSessions builds the schedule of s.tr.Sessions (not nil) and sends what starts first.
func (s *Sim) startSessions() {
	st := s.tr.Sessions
	n := len(s.reqs)
	ss := &sessionSchedule{
		agentic: st.Format == trace.FormatAgentic,
		closed:  s.cfg.ReplayConcurrency > 0,
		waitUS:  make([]int64, n),
		keys:    make([]int64, n),
	}
	s.sess = ss
	s.nextReq = n // no request is sent in trace order
	ratio := s.cfg.ArrivalSpeedupRatio
	if ratio == 0 || ss.closed {
		ratio = 1
	}
	for i := range st.Turns {
		tu := &st.Turns[i]
		ss.waitUS[i] = int64(math.Round(float64(tu.DelayUS+tu.ToolWaitUS) / ratio))
		ss.keys[i] = int64(tu.Session) + 1
	}
	if ss.agentic {
		ss.buildDAG(st.Turns)
		for i := range st.Turns {
			if len(st.Turns[i].WaitFor) == 0 {
				s.heap.push(event{time: s.arrivalTime(i), phase: phaseArrival, id: int32(i)})
			}
		}
		return
	}
	ss.next = make([]int32, n)
	last := make([]int32, len(st.IDs))
	for i := range last {
		last[i] = -1
	}
	for i := range st.Turns {
		ss.next[i] = -1
		sid := st.Turns[i].Session
		if p := last[sid]; p >= 0 {
			ss.next[p] = int32(i)
		} else {
			ss.firsts = append(ss.firsts, int32(i))
		}
		last[sid] = int32(i)
	}
	if ss.closed {
		for range min(s.cfg.ReplayConcurrency, len(ss.firsts)) {
			s.activateSession(0)
		}
		return
	}
	for _, i := range ss.firsts {
		s.heap.push(event{time: s.arrivalTime(int(i)), phase: phaseArrival, id: i})
	}
}

// buildDAG lays out, per request, who waits for it.
func (ss *sessionSchedule) buildDAG(turns []trace.Turn) {
	n := len(turns)
	ss.remaining = make([]int32, n)
	ss.readyAfter = make([]int64, n)
	ss.usersAt = make([]int32, n+1)
	for i := range turns {
		ss.remaining[i] = int32(len(turns[i].WaitFor))
		for _, j := range turns[i].WaitFor {
			ss.usersAt[j+1]++
		}
	}
	for j := range n {
		ss.usersAt[j+1] += ss.usersAt[j]
	}
	ss.users = make([]int32, ss.usersAt[n])
	fill := append([]int32(nil), ss.usersAt[:n]...)
	for i := range turns {
		for _, j := range turns[i].WaitFor {
			ss.users[fill[j]] = int32(i)
			fill[j]++
		}
	}
}

// activateSession starts the next session in trace order at t (closed loop).
func (s *Sim) activateSession(t int64) {
	ss := s.sess
	if ss.started == len(ss.firsts) {
		return
	}
	s.heap.push(event{time: t, phase: phaseArrival, id: ss.firsts[ss.started]})
	ss.started++
}

// turnDone schedules what request i's completion (or rejection) at t lets start.
func (s *Sim) turnDone(i int, t int64) {
	ss := s.sess
	t += s.streamEndUS
	if ss.agentic {
		for _, u := range ss.users[ss.usersAt[i]:ss.usersAt[i+1]] {
			ss.readyAfter[u] = max(ss.readyAfter[u], t)
			if ss.remaining[u]--; ss.remaining[u] == 0 {
				s.heap.push(event{time: ss.readyAfter[u] + ss.waitUS[u], phase: phaseArrival, id: u})
			}
		}
		return
	}
	if nx := ss.next[i]; nx >= 0 {
		s.heap.push(event{time: t + ss.waitUS[nx], phase: phaseArrival, id: nx})
		return
	}
	if ss.closed {
		s.activateSession(t)
	}
}
