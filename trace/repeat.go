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
	return out, nil
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
