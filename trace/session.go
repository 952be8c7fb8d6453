package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
)

// Sessions is the session and dependency structure a trace declares (nil for independent
// rows). Turns[i] describes Requests[i].
type Sessions struct {
	Format Format
	// IDs names the sessions; "" is a row without a session_id, a session of its own.
	IDs   []string
	Turns []Turn
	// Expanded is, for applied_compute_agentic, each session's request count (num_turns+1),
	// so that a trace cut short is not written back as shorter sessions.
	Expanded []int32
}

// Turn is what a row says about when its request may start, beyond its timestamp.
type Turn struct {
	// RowTimestampMS is the row's own timestamp (when HasTimestamp): an agentic row that waits
	// for others starts after them, whatever its timestamp says. Requests[i].TimestampMS of a
	// row without one is derived as the earliest it could start: its predecessor's (or latest
	// dependency's) timestamp plus its delay and tool wait.
	RowTimestampMS int64
	// DelayUS is the row's delay (or delay_ms) when HasDelay; otherwise, for a later Mooncake
	// turn with a timestamp, the gap to its session's previous timestamp.
	DelayUS int64
	// ToolWaitUS is agentic tool_wait_ms (HasToolWait: the row gave it), or Applied Compute's
	// tool_call_latency of the previous turn.
	ToolWaitUS int64
	// RequestID and WaitFor (indices of earlier requests) are agentic_mooncake's DAG.
	RequestID string
	WaitFor   []int32
	Session   int32 // index into Sessions.IDs
	Index     int32 // of the turn within its session (0 for the first)
	// Depth is the longest chain of requests this one waits for (0 without dependencies;
	// in a session a later turn waits for its predecessor).
	Depth                               int32
	HasTimestamp, HasDelay, HasToolWait bool
}

// sessionRow is the wire form of one Mooncake, mooncake-delta or agentic_mooncake row.
// Dynamo's aliases (input_tokens, output_tokens, created_time, delay_ms) are read too.
type sessionRow struct {
	SessionID    *string  `json:"session_id"`
	Timestamp    *float64 `json:"timestamp"`
	CreatedTime  *float64 `json:"created_time"`
	InputLength  *int     `json:"input_length"`
	InputTokens  *int     `json:"input_tokens"`
	OutputLength *int     `json:"output_length"`
	OutputTokens *int     `json:"output_tokens"`
	HashIDs      *[]int64 `json:"hash_ids"`
	Delay        *float64 `json:"delay"`
	DelayMS      *float64 `json:"delay_ms"`
	// agentic_mooncake only; branches, prefix_reset and tool_events are metadata Dynamo's
	// replay does not schedule by, so they are checked for shape and not kept.
	RequestID   *string         `json:"request_id"`
	WaitFor     []string        `json:"wait_for"`
	Branches    []string        `json:"branches"`
	PrefixReset *bool           `json:"prefix_reset"`
	ToolWaitMS  *float64        `json:"tool_wait_ms"`
	ToolEvents  json.RawMessage `json:"tool_events"`
}

const (
	sessionFields = "a mooncake session row has session_id, timestamp, input_length, output_length, hash_ids, delay"
	agenticFields = "an agentic_mooncake row adds request_id, wait_for, delay, tool_wait_ms, branches, prefix_reset, tool_events"
)

// rowReader yields the non-blank lines of a trace with their numbers.
type rowReader struct {
	br     *bufio.Reader
	buf    []byte
	name   string
	lineNo int
	// pending is a row already read (numbered lineNo) that next returns first.
	pending []byte
}

func (rr *rowReader) next() ([]byte, error) {
	if raw := rr.pending; raw != nil {
		rr.pending = nil
		return raw, nil
	}
	for {
		rr.lineNo++
		raw, err := readLine(rr.br, &rr.buf)
		if err == errLineTooLong || err == errNotObject {
			return nil, fmt.Errorf("%s:%d: %w", rr.name, rr.lineNo, err)
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: read: %w", rr.name, rr.lineNo, err)
		}
		if rr.lineNo == 1 {
			raw = bytes.TrimPrefix(raw, utf8BOM)
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			return raw, nil
		}
		if err == io.EOF {
			return nil, io.EOF
		}
	}
}

func (rr *rowReader) errorf(field, format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", rr.name, rr.lineNo, field, fmt.Sprintf(format, a...))
}

// builder collects requests and turns and checks the memory budget as they come.
type builder struct {
	t        *Trace
	s        *Sessions
	ids      int
	sessions map[string]int32
}

func (b *builder) add(rr *rowReader, req Request, turn Turn) error {
	if b.ids += len(req.HashIDs); len(b.t.Requests) == MaxRequests || b.ids > MaxHashIDs {
		return fmt.Errorf("%s:%d: the trace exceeds the memory budget of %d requests and %d hash ids",
			rr.name, rr.lineNo, MaxRequests, MaxHashIDs)
	}
	b.t.Requests = append(b.t.Requests, req)
	b.t.Lines = append(b.t.Lines, rr.lineNo)
	b.s.Turns = append(b.s.Turns, turn)
	return nil
}

// session returns the index of the named session ("" always opens a new one) and whether
// it is new.
func (b *builder) session(id string) (int32, bool) {
	if id != "" {
		if s, ok := b.sessions[id]; ok {
			return s, false
		}
	}
	s := int32(len(b.s.IDs))
	b.s.IDs = append(b.s.IDs, id)
	if id != "" {
		b.sessions[id] = s
	}
	return s, true
}

func parseSessions(br *bufio.Reader, name string, blockSize int, format Format) (*Trace, error) {
	b := &builder{t: &Trace{Name: name, BlockSize: blockSize}, s: &Sessions{Format: format}, sessions: map[string]int32{}}
	return b.read(&rowReader{br: br, name: name})
}

// continueAsSessions goes on reading a plain trace whose row raw (at lineNo) opened a
// session: the rows before it become sessions of one request each.
func continueAsSessions(br *bufio.Reader, t *Trace, ids, lineNo int, raw []byte) (*Trace, error) {
	b := &builder{t: t, s: &Sessions{Format: FormatMooncake}, ids: ids, sessions: map[string]int32{}}
	for i, r := range t.Requests {
		b.s.IDs = append(b.s.IDs, "")
		b.s.Turns = append(b.s.Turns, Turn{Session: int32(i), HasTimestamp: true, RowTimestampMS: r.TimestampMS})
	}
	return b.read(&rowReader{br: br, name: t.Name, lineNo: lineNo, pending: raw})
}

func (b *builder) read(rr *rowReader) (*Trace, error) {
	name, format := rr.name, b.s.Format
	var err error
	switch format {
	case FormatAppliedCompute:
		err = readAppliedCompute(rr, b)
	case FormatAgentic:
		err = readAgentic(rr, b)
	default:
		err = readMooncakeSessions(rr, b, format == FormatMooncakeDelta)
	}
	if err != nil {
		return nil, err
	}
	if len(b.t.Requests) == 0 {
		return nil, fmt.Errorf("%s: no requests (the trace is empty)", name)
	}
	t := b.t
	t.Sessions = b.s
	if format == FormatMooncake && !declaresSessions(b.s) {
		t.Sessions = nil // --trace-format mooncake on independent rows: nothing to keep
	}
	t.arrivalOrder()
	return t, nil
}

func declaresSessions(s *Sessions) bool {
	for _, id := range s.IDs {
		if id != "" {
			return true
		}
	}
	for _, tu := range s.Turns {
		if tu.Index > 0 || tu.HasDelay {
			return true
		}
	}
	return false
}

// decodeNext decodes the next row into v strictly (unknown fields and trailing data are
// errors naming the line); io.EOF after the last row.
func (rr *rowReader) decodeNext(v any, fields string) error {
	raw, err := rr.next()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s:%d: %w", rr.name, rr.lineNo, jsonProblem(err, fields))
	}
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0 {
		return rr.errorf("json", "unexpected data after the object")
	}
	return nil
}

// rowRequest reads the request fields shared by the Mooncake-shaped formats.
func rowRequest(rr *rowReader, row *sessionRow, blockSize int) (Request, bool, error) {
	var req Request
	in, err := alias(rr, row.InputLength, row.InputTokens, "input_length", "input_tokens")
	if err != nil {
		return req, false, err
	}
	out, err := alias(rr, row.OutputLength, row.OutputTokens, "output_length", "output_tokens")
	if err != nil {
		return req, false, err
	}
	ts, err := alias(rr, row.Timestamp, row.CreatedTime, "timestamp", "created_time")
	if err != nil {
		return req, false, err
	}
	switch {
	case row.HashIDs == nil:
		return req, false, rr.errorf("hash_ids", "missing")
	case out == nil:
		return req, false, rr.errorf("output_length", "missing")
	}
	req.HashIDs = *row.HashIDs
	req.OutputLength = *out
	if in != nil {
		req.InputLength = *in
	} else {
		// Dynamo's reading: a row without input_length fills its blocks.
		req.InputLength = len(req.HashIDs) * blockSize
	}
	if ts != nil {
		ms, err := wholeMS(*ts)
		if err != nil {
			return req, false, rr.errorf("timestamp", "%v", err)
		}
		req.TimestampMS = ms
	}
	return req, ts != nil, nil
}

// field is a row's field and whether the row set it.
type field struct {
	name string
	set  bool
}

// firstWhere names the first field whose set is the given value ("" for none).
func firstWhere(set bool, fields ...field) string {
	for _, f := range fields {
		if f.set == set {
			return f.name
		}
	}
	return ""
}

// alias returns whichever of a field and its Dynamo alias the row set, refusing both.
func alias[T any](rr *rowReader, v, alt *T, name, altName string) (*T, error) {
	if v != nil && alt != nil {
		return nil, rr.errorf(altName, "given together with %s (it is the same field)", name)
	}
	if v != nil {
		return v, nil
	}
	return alt, nil
}

// wholeMS accepts a timestamp in whole milliseconds, the simulator's trace clock.
func wholeMS(v float64) (int64, error) {
	if v < 0 || v > 1<<52 || v != math.Trunc(v) {
		return 0, fmt.Errorf("%v is not a whole number of milliseconds between 0 and 2^52", v)
	}
	return int64(v), nil
}

// toUS converts a delay in milliseconds (scale 1e3) or seconds (1e6) to microseconds.
func toUS(v, scale float64) (int64, error) {
	if math.IsNaN(v) || v < 0 || v*scale > 1<<52 {
		return 0, fmt.Errorf("%v must be a finite number from 0 to 2^52 µs", v)
	}
	return int64(math.Round(v * scale)), nil
}

// usToMS rounds microseconds to the trace's millisecond clock.
func usToMS(us int64) int64 { return (us + 500) / 1000 }

// maxDerivedMS bounds a derived start time (2^52 ms, the bound of a row's own timestamp), so
// that long chains of delays cannot overflow the clock.
const maxDerivedMS = 1 << 52

// after is the start time delayUS after ms, or an error past maxDerivedMS.
func after(ms, delayUS int64) (int64, error) {
	if t := ms + usToMS(delayUS); t <= maxDerivedMS {
		return t, nil
	}
	return 0, fmt.Errorf("the delays add up past 2^52 ms")
}

func readMooncakeSessions(rr *rowReader, b *builder, delta bool) error {
	bs := b.t.BlockSize
	last := make([]int32, len(b.s.IDs))   // per session: its latest request
	lastTS := make([]int64, len(b.s.IDs)) // per session: its latest explicit timestamp, -1 before one
	for i, tu := range b.s.Turns {
		last[tu.Session], lastTS[tu.Session] = int32(i), -1
		if tu.HasTimestamp {
			lastTS[tu.Session] = tu.RowTimestampMS
		}
	}
	for {
		var row sessionRow
		err := rr.decodeNext(&row, sessionFields)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if name := firstWhere(true, field{"request_id", row.RequestID != nil}, field{"wait_for", row.WaitFor != nil}, field{"tool_wait_ms", row.ToolWaitMS != nil},
			field{"branches", row.Branches != nil}, field{"prefix_reset", row.PrefixReset != nil}, field{"tool_events", row.ToolEvents != nil}); name != "" {
			return rr.errorf(name, "an agentic_mooncake field in a %s trace (use --trace-format agentic_mooncake)", b.s.Format)
		}
		req, hasTS, err := rowRequest(rr, &row, bs)
		if err != nil {
			return err
		}
		id := ""
		if row.SessionID != nil {
			if id = *row.SessionID; id == "" {
				return rr.errorf("session_id", "empty")
			}
		}
		d, err := alias(rr, row.Delay, row.DelayMS, "delay", "delay_ms")
		if err != nil {
			return err
		}
		s, first := b.session(id)
		turn := Turn{Session: s, HasTimestamp: hasTS, RowTimestampMS: req.TimestampMS, HasDelay: d != nil}
		if d != nil {
			if turn.DelayUS, err = toUS(*d, 1e3); err != nil {
				return rr.errorf("delay", "%v", err)
			}
		}
		if first {
			last, lastTS = append(last, -1), append(lastTS, -1)
			if turn.DelayUS != 0 {
				return rr.errorf("delay", "set on the first turn of session %q (a first turn starts at its timestamp)", id)
			}
		} else {
			p := last[s]
			prev, pt := &b.t.Requests[p], &b.s.Turns[p]
			turn.Index, turn.Depth = pt.Index+1, pt.Depth+1
			switch {
			case turn.HasDelay && !hasTS:
				if req.TimestampMS, err = after(prev.TimestampMS, turn.DelayUS); err != nil {
					return rr.errorf("delay", "%v", err)
				}
			case !turn.HasDelay && hasTS:
				// As Dynamo infers it: the gap to the session's latest explicit timestamp.
				switch {
				case lastTS[s] < 0:
					return rr.errorf("timestamp", "session %q has no earlier timestamp to measure this turn's delay from (give delay)", id)
				case req.TimestampMS < lastTS[s]:
					return rr.errorf("timestamp", "%d is earlier than session %q's previous timestamp %d", req.TimestampMS, id, lastTS[s])
				}
				turn.DelayUS = (req.TimestampMS - lastTS[s]) * 1000
			case !turn.HasDelay:
				req.TimestampMS = prev.TimestampMS
			}
			if delta {
				if prev.InputLength%bs != 0 {
					return rr.errorf("input_length", "session %q's prompt so far is %d tokens, not whole %d-token blocks, so this turn's hash_ids cannot extend it",
						id, prev.InputLength, bs)
				}
				if err := validate(&req, bs); err != nil {
					return fmt.Errorf("%s:%d: %w", rr.name, rr.lineNo, err)
				}
				req.InputLength += prev.InputLength
				req.HashIDs = append(prev.HashIDs[:len(prev.HashIDs):len(prev.HashIDs)], req.HashIDs...)
			}
		}
		if err := validate(&req, bs); err != nil {
			return fmt.Errorf("%s:%d: %w", rr.name, rr.lineNo, err)
		}
		last[s] = int32(len(b.t.Requests))
		if hasTS {
			lastTS[s] = req.TimestampMS
		}
		if err := b.add(rr, req, turn); err != nil {
			return err
		}
	}
}

// arrivalOrder sorts requests by timestamp, dependencies first among equal ones (stable, so
// a file already in order stays as it is), and renumbers WaitFor.
func (t *Trace) arrivalOrder() {
	reqs, turns := t.Requests, t.Sessions
	n := len(reqs)
	sorted := sort.SliceIsSorted(reqs, func(i, j int) bool { return reqs[i].TimestampMS < reqs[j].TimestampMS })
	if sorted && turns == nil {
		return
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	depth := func(i int) int32 {
		if turns == nil {
			return 0
		}
		return turns.Turns[i].Depth
	}
	sort.SliceStable(order, func(a, b int) bool {
		i, j := order[a], order[b]
		if reqs[i].TimestampMS != reqs[j].TimestampMS {
			return reqs[i].TimestampMS < reqs[j].TimestampMS
		}
		return depth(i) < depth(j)
	})
	if sort.IntsAreSorted(order) {
		return
	}
	pos := make([]int32, n)
	nr, nl := make([]Request, n), make([]int, n)
	for k, i := range order {
		pos[i] = int32(k)
		nr[k], nl[k] = reqs[i], t.Lines[i]
	}
	t.Requests, t.Lines = nr, nl
	if turns != nil {
		// Sessions are numbered in order of first appearance, in the new order too.
		renum := make([]int32, len(turns.IDs))
		for i := range renum {
			renum[i] = -1
		}
		ids := make([]string, 0, len(turns.IDs))
		for _, i := range order {
			if s := turns.Turns[i].Session; renum[s] < 0 {
				renum[s] = int32(len(ids))
				ids = append(ids, turns.IDs[s])
			}
		}
		if turns.Expanded != nil {
			exp := make([]int32, len(ids))
			for old, nw := range renum {
				exp[nw] = turns.Expanded[old]
			}
			turns.Expanded = exp
		}
		turns.IDs = ids
		nt := make([]Turn, n)
		for k, i := range order {
			nt[k] = turns.Turns[i]
			nt[k].Session = renum[nt[k].Session]
			for w, dep := range nt[k].WaitFor {
				nt[k].WaitFor[w] = pos[dep]
			}
		}
		turns.Turns = nt
	}
}
