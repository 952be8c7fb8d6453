package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// WriteTrace writes a trace in its own format: plain Mooncake rows (Write) without
// Sessions, else rows of t.Sessions.Format that ParseFormat reads back to the same requests
// and structure (agentic metadata such as branches is not kept, so not written).
func WriteTrace(w io.Writer, t *Trace) error {
	if t.Sessions == nil {
		return Write(w, t.Requests)
	}
	if t.Sessions.Format == FormatAppliedCompute {
		return writeAppliedCompute(w, t)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	s := t.Sessions
	last := make([]int, len(s.IDs)) // per session: its latest request written, -1 before
	for i := range last {
		last[i] = -1
	}
	var b []byte
	for i := range t.Requests {
		r, tu := &t.Requests[i], &s.Turns[i]
		b = append(b[:0], '{')
		if s.Format == FormatAgentic {
			b = append(b, `"request_id": `...)
			b = strconv.AppendQuote(b, tu.RequestID)
			b = append(b, ", "...)
		}
		if id := s.IDs[tu.Session]; id != "" {
			b = append(b, `"session_id": `...)
			b = strconv.AppendQuote(b, id)
			b = append(b, ", "...)
		}
		if tu.HasTimestamp {
			b = append(b, `"timestamp": `...)
			b = strconv.AppendInt(b, tu.RowTimestampMS, 10)
			b = append(b, ", "...)
		}
		in, ids := r.InputLength, r.HashIDs
		if p := last[tu.Session]; s.Format == FormatMooncakeDelta && p >= 0 {
			in -= t.Requests[p].InputLength
			ids = ids[len(t.Requests[p].HashIDs):]
		}
		b = append(b, `"input_length": `...)
		b = strconv.AppendInt(b, int64(in), 10)
		b = append(b, `, "output_length": `...)
		b = strconv.AppendInt(b, int64(r.OutputLength), 10)
		b = append(b, `, "hash_ids": [`...)
		off := len(r.HashIDs) - len(ids)
		for j := range ids {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, r.ID(off+j), 10)
		}
		b = append(b, ']')
		if tu.HasDelay {
			b = append(b, `, "delay": `...)
			b = appendScaled(b, tu.DelayUS, 1e3)
		}
		if len(tu.WaitFor) > 0 {
			b = append(b, `, "wait_for": [`...)
			for k, j := range tu.WaitFor {
				if k > 0 {
					b = append(b, ", "...)
				}
				b = strconv.AppendQuote(b, s.Turns[j].RequestID)
			}
			b = append(b, ']')
		}
		if tu.HasToolWait {
			b = append(b, `, "tool_wait_ms": `...)
			b = appendScaled(b, tu.ToolWaitUS, 1e3)
		}
		b = append(b, "}\n"...)
		last[tu.Session] = i
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendScaled writes microseconds in milliseconds (scale 1e3) or seconds (1e6), in the
// shortest form that reads back to the same microseconds.
func appendScaled(b []byte, us int64, scale float64) []byte {
	return strconv.AppendFloat(b, float64(us)/scale, 'f', -1, 64)
}

// writeAppliedCompute writes each session back as its summary row. A session cut short (by
// First) has no summary: its last request is not its final answer.
func writeAppliedCompute(w io.Writer, t *Trace) error {
	s := t.Sessions
	bySession := make([][]int, len(s.IDs))
	for i, tu := range s.Turns {
		bySession[tu.Session] = append(bySession[tu.Session], i)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var b []byte
	for si, idx := range bySession {
		if len(idx) != int(s.Expanded[si]) {
			return fmt.Errorf("%s: session %d has %d of its %d requests; only whole sessions have an applied_compute_agentic summary",
				t.Name, si+1, len(idx), s.Expanded[si])
		}
		req := func(k int) *Request { return &t.Requests[idx[k]] }
		n := len(idx) - 1
		b = append(b[:0], `{"num_turns": `...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, `, "input_prompt_length": `...)
		b = strconv.AppendInt(b, int64(req(0).InputLength), 10)
		list := func(key string, v func(b []byte, k int) []byte) {
			b = append(b, `, "`+key+`": [`...)
			for k := range n {
				if k > 0 {
					b = append(b, ", "...)
				}
				b = v(b, k)
			}
			b = append(b, ']')
		}
		list("assistant_response_length", func(b []byte, k int) []byte { return strconv.AppendInt(b, int64(req(k).OutputLength), 10) })
		list("tool_call_output_length", func(b []byte, k int) []byte {
			return strconv.AppendInt(b, int64(req(k+1).InputLength-req(k).InputLength-req(k).OutputLength), 10)
		})
		list("tool_call_latency", func(b []byte, k int) []byte { return appendScaled(b, s.Turns[idx[k+1]].ToolWaitUS, 1e6) })
		b = append(b, `, "final_assistant_response_length": `...)
		b = strconv.AppendInt(b, int64(req(n).OutputLength), 10)
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}
