package trace

import (
	"fmt"
	"io"
	"strings"
)

// readAgentic reads agentic_mooncake rows: Mooncake rows with a request_id, the request_ids
// they wait_for, and the delay and tool_wait_ms that follow their dependencies
// (lib/data-gen/src/mooncake.rs AgenticMooncakeRow at ai-dynamo/dynamo c1b1ab0). Unknown and
// self dependencies and cycles are refused by name, as Dynamo's loader refuses them.
func readAgentic(rr *rowReader, b *builder) error {
	bs := b.t.BlockSize
	byID := map[string]int32{}
	var waits [][]string // per request, its wait_for as written
	var lines []int
	var count []int32 // per session: its rows so far
	for {
		var row sessionRow
		err := rr.decodeNext(&row, agenticFields)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if row.RequestID == nil || strings.TrimSpace(*row.RequestID) == "" {
			return rr.errorf("request_id", "missing or empty")
		}
		rid := *row.RequestID
		if first, dup := byID[rid]; dup {
			return rr.errorf("request_id", "%q is already line %d's", rid, lines[first])
		}
		req, hasTS, err := rowRequest(rr, &row, bs)
		if err != nil {
			return err
		}
		if err := validate(&req, bs); err != nil {
			return fmt.Errorf("%s:%d: %w", rr.name, rr.lineNo, err)
		}
		d, err := alias(rr, row.Delay, row.DelayMS, "delay", "delay_ms")
		if err != nil {
			return err
		}
		turn := Turn{RequestID: rid, HasTimestamp: hasTS, RowTimestampMS: req.TimestampMS, HasDelay: d != nil, HasToolWait: row.ToolWaitMS != nil}
		if d != nil {
			if turn.DelayUS, err = toUS(*d, 1e3); err != nil {
				return rr.errorf("delay", "%v", err)
			}
		}
		if row.ToolWaitMS != nil {
			if turn.ToolWaitUS, err = toUS(*row.ToolWaitMS, 1e3); err != nil {
				return rr.errorf("tool_wait_ms", "%v", err)
			}
		}
		sid := ""
		if row.SessionID != nil {
			if sid = *row.SessionID; sid == "" {
				return rr.errorf("session_id", "empty")
			}
		}
		s, first := b.session(sid)
		if first {
			count = append(count, 0)
		}
		turn.Session, turn.Index = s, count[s]
		count[s]++
		byID[rid] = int32(len(b.t.Requests))
		waits = append(waits, row.WaitFor)
		lines = append(lines, rr.lineNo)
		if err := b.add(rr, req, turn); err != nil {
			return err
		}
	}
	return resolveDependencies(rr.name, b, byID, waits, lines)
}

// resolveDependencies turns wait_for names into indices, refuses unknown names, self waits and
// cycles, and derives each request's depth and, for a row with dependencies, its earliest
// start: its latest dependency's plus its delay and tool wait.
func resolveDependencies(name string, b *builder, byID map[string]int32, waits [][]string, lines []int) error {
	turns, reqs := b.s.Turns, b.t.Requests
	for i, ws := range waits {
		for k, w := range ws {
			j, ok := byID[w]
			switch {
			case !ok:
				return fmt.Errorf("%s:%d: wait_for[%d]: request %q waits for %q, which no row defines", name, lines[i], k, turns[i].RequestID, w)
			case int(j) == i:
				return fmt.Errorf("%s:%d: wait_for[%d]: request %q waits for itself", name, lines[i], k, w)
			}
			turns[i].WaitFor = append(turns[i].WaitFor, j)
		}
	}
	// Kahn's algorithm: a request is placed once every dependency is; what remains is cyclic.
	pending := make([]int, len(turns))
	users := make([][]int32, len(turns))
	var ready []int32
	for i := range turns {
		pending[i] = len(turns[i].WaitFor)
		for _, j := range turns[i].WaitFor {
			users[j] = append(users[j], int32(i))
		}
		if pending[i] == 0 {
			ready = append(ready, int32(i))
		}
	}
	placed := 0
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		placed++
		tu, r := &turns[i], &reqs[i]
		if len(tu.WaitFor) > 0 {
			var latest int64
			for _, j := range tu.WaitFor {
				tu.Depth = max(tu.Depth, turns[j].Depth+1)
				latest = max(latest, reqs[j].TimestampMS)
			}
			// Dynamo starts a dependent row after its dependencies, whatever its timestamp.
			var err error
			if r.TimestampMS, err = after(latest, tu.DelayUS+tu.ToolWaitUS); err != nil {
				return fmt.Errorf("%s:%d: wait_for: %v", name, lines[i], err)
			}
		}
		for _, u := range users[i] {
			if pending[u]--; pending[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	if placed == len(turns) {
		return nil
	}
	return cycleError(name, turns, pending, lines)
}

// cycleError names one cycle among the requests Kahn's algorithm could not place: each of
// them waits for another unplaced one, so following those waits must come back around.
func cycleError(name string, turns []Turn, pending []int, lines []int) error {
	start := -1
	for i := range pending {
		if pending[i] > 0 {
			start = i
			break
		}
	}
	seen := map[int]int{}
	var path []int
	for i := start; ; {
		if at, ok := seen[i]; ok {
			path = path[at:]
			break
		}
		seen[i] = len(path)
		path = append(path, i)
		for _, j := range turns[i].WaitFor {
			if pending[j] > 0 {
				i = int(j)
				break
			}
		}
	}
	ids := make([]string, 0, len(path)+1)
	for _, i := range path {
		ids = append(ids, fmt.Sprintf("%q", turns[i].RequestID))
	}
	ids = append(ids, ids[0])
	return fmt.Errorf("%s:%d: wait_for: a dependency cycle: %s (each waits for the next)", name, lines[path[0]], strings.Join(ids, " → "))
}
