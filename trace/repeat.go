package trace

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxCopies bounds Repeat's copy count; MaxRequests bounds what the copies add up to.
const MaxCopies = 10000

// The memory budget of a trace: a request is a 56-byte value and a replay adds about 136
// bytes of its own, so 5 M requests (×200 of the toolagent trace) replay in about 1 GB; hash
// ids are 8 bytes each. Parse, Repeat and Synthesize refuse more, naming the budget.
const (
	MaxRequests = 5_000_000
	MaxHashIDs  = 1 << 27
)

// Repeat returns copies of t back to back, as a longer stretch of the same traffic: copy k
// arrives k periods later (a period is t's span plus one millisecond, so timestamps stay
// non-decreasing) and its hash ids are shifted by k × (t's largest id + 1), so copies share
// no prefix with each other and each copy caches like the original. The copies share t's
// hash id arrays (Request.IDOffset carries the shift), so a copy costs one Request value.
func Repeat(t *Trace, copies int) (*Trace, error) {
	if copies < 1 || copies > MaxCopies {
		return nil, fmt.Errorf("%s: copies: %d out of range (1..%d)", t.Name, copies, MaxCopies)
	}
	if n := copies * len(t.Requests); n > MaxRequests {
		return nil, fmt.Errorf("%s:x%d: %d copies of %d requests are %d, beyond the memory budget of %d requests in a trace (at most :x%d)",
			t.Name, copies, copies, len(t.Requests), n, MaxRequests, MaxRequests/len(t.Requests))
	}
	out := &Trace{Name: fmt.Sprintf("%s:x%d", t.Name, copies), BlockSize: t.BlockSize,
		Requests: make([]Request, 0, copies*len(t.Requests)),
		Digest:   fmt.Sprintf("%s, %d copies", t.Digest, copies)}
	if len(t.Requests) == 0 {
		return out, nil
	}
	first, last := t.Requests[0].TimestampMS, t.Requests[len(t.Requests)-1].TimestampMS
	period := last - first + 1
	var maxID int64 = -1
	for i := range t.Requests {
		r := &t.Requests[i]
		for _, id := range r.HashIDs {
			maxID = max(maxID, id+r.IDOffset)
		}
	}
	for k := range int64(copies) {
		for _, r := range t.Requests {
			r.TimestampMS += k * period
			r.IDOffset += k * (maxID + 1)
			out.Requests = append(out.Requests, r)
		}
	}
	if t.Sessions != nil {
		out.Sessions = repeatSessions(t.Sessions, copies, period)
	}
	return out, nil
}

// repeatSessions is the structure of copies of a trace: each copy's sessions are its own
// (their ids suffixed ":copy-K" for K ≥ 1), its dependencies within the copy.
func repeatSessions(s *Sessions, copies int, period int64) *Sessions {
	n, ns := len(s.Turns), int32(len(s.IDs))
	out := &Sessions{Format: s.Format, IDs: make([]string, 0, copies*len(s.IDs)), Turns: make([]Turn, 0, copies*n)}
	for k := range copies {
		for _, id := range s.IDs {
			if id != "" && k > 0 {
				id = fmt.Sprintf("%s:copy-%d", id, k)
			}
			out.IDs = append(out.IDs, id)
		}
		if s.Expanded != nil {
			out.Expanded = append(out.Expanded, s.Expanded...)
		}
		for _, tu := range s.Turns {
			tu.Session += int32(k) * ns
			if tu.HasTimestamp {
				tu.RowTimestampMS += int64(k) * period
			}
			if tu.RequestID != "" && k > 0 {
				tu.RequestID = fmt.Sprintf("%s:copy-%d", tu.RequestID, k)
			}
			if tu.WaitFor != nil {
				w := make([]int32, len(tu.WaitFor))
				for i, j := range tu.WaitFor {
					w[i] = j + int32(k*n)
				}
				tu.WaitFor = w
			}
			out.Turns = append(out.Turns, tu)
		}
	}
	return out
}

// cutCopies splits the ":xN" suffix (N copies, see Repeat) from a built-in trace name.
func cutCopies(spec string) (name string, copies int, err error) {
	i := strings.LastIndex(spec, ":x")
	if i < 0 {
		return spec, 1, nil
	}
	digits := spec[i+2:]
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || n > MaxCopies || digits != strconv.Itoa(n) {
		return "", 0, fmt.Errorf("%s%s: copies: want :xN with N in 1..%d after the trace name", BuiltinPrefix, spec, MaxCopies)
	}
	return spec[:i], n, nil
}
