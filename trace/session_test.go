package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func parseStr(t *testing.T, format Format, text string) (*Trace, error) {
	t.Helper()
	return ParseFormat(strings.NewReader(text), "t.jsonl", 4, format)
}

func mustParse(t *testing.T, format Format, text string) *Trace {
	t.Helper()
	tr, err := parseStr(t, format, text)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// roundTrip writes tr in its format and reads it back: requests and structure must match.
func roundTrip(t *testing.T, tr *Trace) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteTrace(&buf, tr); err != nil {
		t.Fatal(err)
	}
	format := FormatDetect
	if tr.Sessions != nil {
		format = tr.Sessions.Format
	}
	back, err := ParseFormat(bytes.NewReader(buf.Bytes()), "back.jsonl", tr.BlockSize, format)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(back.Requests, tr.Requests) || !reflect.DeepEqual(back.Sessions, tr.Sessions) {
		t.Fatalf("round trip differs:\n%s\nwant %+v %+v\ngot  %+v %+v", buf.String(), tr.Requests, tr.Sessions, back.Requests, back.Sessions)
	}
}

func TestPlainRowsHaveNoSessions(t *testing.T) {
	text := `{"timestamp": 0, "input_length": 5, "output_length": 2, "hash_ids": [1, 2]}` + "\n"
	for _, f := range []Format{FormatDetect, FormatMooncake} {
		tr := mustParse(t, f, text)
		if tr.Sessions != nil || tr.Requests[0].InputLength != 5 {
			t.Fatalf("%q: %+v", f, tr)
		}
	}
}

func TestMooncakeSessions(t *testing.T) {
	text := `{"session_id":"a","timestamp":1000,"input_length":8,"output_length":3,"hash_ids":[1,2]}
{"session_id":"b","timestamp":500,"input_length":4,"output_length":1,"hash_ids":[9]}
{"session_id":"a","delay_ms":250.5,"input_length":12,"output_length":3,"hash_ids":[1,2,3]}
{"session_id":"a","timestamp":4000,"input_length":16,"output_length":3,"hash_ids":[1,2,3,4]}
{"timestamp":700,"output_length":1,"hash_ids":[7]}
`
	tr := mustParse(t, FormatDetect, text)
	s := tr.Sessions
	if s == nil || s.Format != FormatMooncake {
		t.Fatalf("not detected as mooncake sessions: %+v", s)
	}
	// Arrival order: b@500, anonymous@700, a@1000, a@1000+251 (derived), a@4000.
	var got []int64
	for _, r := range tr.Requests {
		got = append(got, r.TimestampMS)
	}
	if want := []int64{500, 700, 1000, 1251, 4000}; !reflect.DeepEqual(got, want) {
		t.Fatalf("timestamps %v, want %v", got, want)
	}
	if !reflect.DeepEqual(s.IDs, []string{"b", "", "a"}) || !reflect.DeepEqual(tr.Lines, []int{2, 5, 1, 3, 4}) {
		t.Fatalf("ids %q lines %v", s.IDs, tr.Lines)
	}
	// The timestamped third turn's delay is measured from the session's last timestamp (1000).
	if s.Turns[3].DelayUS != 250500 || s.Turns[4].DelayUS != 3_000_000 || s.Turns[4].Index != 2 || s.Turns[4].Depth != 2 {
		t.Fatalf("turns %+v", s.Turns)
	}
	if tr.Requests[1].InputLength != 4 { // a row without input_length fills its blocks
		t.Fatalf("input_length %d", tr.Requests[1].InputLength)
	}
	st := Stats(tr).SessionStructure
	if st.Sessions != 3 || st.DependentRequests != 2 || st.TurnsPerSession.Max != 3 || st.DependencyDepth.Max != 2 {
		t.Fatalf("stats %+v", st)
	}
	roundTrip(t, tr)
	roundTrip(t, tr.First(3))
}

func TestMooncakeDeltaAccumulates(t *testing.T) {
	text := `{"session_id":"a","timestamp":0,"input_length":8,"output_length":3,"hash_ids":[1,2]}
{"session_id":"a","delay":100,"input_length":5,"output_length":3,"hash_ids":[3,4]}
`
	// Delta rows look like session rows: only the flag reads them as deltas.
	if tr := mustParse(t, FormatDetect, text); tr.Requests[1].InputLength != 5 {
		t.Fatalf("detected as deltas: %+v", tr.Requests[1])
	}
	tr := mustParse(t, FormatMooncakeDelta, text)
	if r := tr.Requests[1]; r.InputLength != 13 || !reflect.DeepEqual(r.HashIDs, []int64{1, 2, 3, 4}) || r.TimestampMS != 100 {
		t.Fatalf("accumulated %+v", r)
	}
	roundTrip(t, tr)
	_, err := parseStr(t, FormatMooncakeDelta, text+`{"session_id":"a","delay":1,"input_length":4,"output_length":1,"hash_ids":[5]}`)
	if err == nil || !strings.Contains(err.Error(), `t.jsonl:3: input_length: session "a"'s prompt so far is 13 tokens`) {
		t.Fatalf("a delta after a partial block: %v", err)
	}
}

func TestAgenticDAG(t *testing.T) {
	text := `{"request_id":"r1","session_id":"s","timestamp":100,"input_length":4,"output_length":1,"hash_ids":[1]}
{"request_id":"r3","session_id":"s","wait_for":["r1","r2"],"delay":10,"tool_wait_ms":1500,"input_length":8,"output_length":1,"hash_ids":[1,2],"branches":["x"],"prefix_reset":false}
{"request_id":"r2","timestamp":300,"input_length":4,"output_length":1,"hash_ids":[5]}
{"request_id":"r4","wait_for":["r3"],"timestamp":0,"input_length":4,"output_length":1,"hash_ids":[6]}
`
	tr := mustParse(t, FormatDetect, text)
	s := tr.Sessions
	if s.Format != FormatAgentic {
		t.Fatalf("format %q", s.Format)
	}
	// r3 starts 1,510 ms after r2 (the later dependency); r4 after r3 despite its timestamp 0.
	var ids []string
	var ts []int64
	for i, r := range tr.Requests {
		ids, ts = append(ids, s.Turns[i].RequestID), append(ts, r.TimestampMS)
	}
	if !reflect.DeepEqual(ids, []string{"r1", "r2", "r3", "r4"}) || !reflect.DeepEqual(ts, []int64{100, 300, 1810, 1810}) {
		t.Fatalf("order %v %v", ids, ts)
	}
	if s.Turns[2].Depth != 1 || s.Turns[3].Depth != 2 || !reflect.DeepEqual(s.Turns[2].WaitFor, []int32{0, 1}) {
		t.Fatalf("turns %+v", s.Turns)
	}
	st := Stats(tr).SessionStructure
	if st.ToolWaits != 1 || st.ToolWaitMS.Max != 1500 || st.DependencyDepth.Max != 2 || st.DependentRequests != 2 {
		t.Fatalf("stats %+v", st)
	}
	roundTrip(t, tr)
}

func TestAgenticRefusesBadDependencies(t *testing.T) {
	row := func(id, waits string) string {
		return `{"request_id":"` + id + `","wait_for":[` + waits + `],"input_length":4,"output_length":1,"hash_ids":[1]}` + "\n"
	}
	for _, c := range []struct{ text, want string }{
		{row("a", "") + row("b", `"zz"`), `t.jsonl:2: wait_for[0]: request "b" waits for "zz", which no row defines`},
		{row("a", `"a"`), `t.jsonl:1: wait_for[0]: request "a" waits for itself`},
		{row("x", "") + row("a", `"c"`) + row("b", `"a"`) + row("c", `"b","x"`),
			`wait_for: a dependency cycle: "a" → "c" → "b" → "a" (each waits for the next)`},
		{row("a", "") + row("a", ""), `t.jsonl:2: request_id: "a" is already line 1's`},
		{`{"wait_for":[],"input_length":4,"output_length":1,"hash_ids":[1],"request_id":""}`, "t.jsonl:1: request_id: missing or empty"},
		{`{"request_id":"a","input_length":4,"output_length":1,"hash_ids":[1],"tool_wait_ms":-1}`, "t.jsonl:1: tool_wait_ms: -1 must be"},
		{`{"request_id":"a","input_length":4,"output_length":1,"hash_ids":[1],"colour":1}`, "t.jsonl:1: colour: unknown field (an agentic_mooncake row"},
	} {
		_, err := parseStr(t, FormatDetect, c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.text, err, c.want)
		}
	}
}

func TestAppliedComputeExpands(t *testing.T) {
	text := `{"num_turns": 2, "input_prompt_length": 6, "assistant_response_length": [2, 3], "tool_call_output_length": [1, 0], "tool_call_latency": [1.4, 0.0025], "final_assistant_response_length": 5}
{"num_turns": 0, "input_prompt_length": 1, "assistant_response_length": [], "tool_call_output_length": [], "tool_call_latency": [], "final_assistant_response_length": 1}
`
	tr := mustParse(t, FormatDetect, text)
	if tr.Sessions.Format != FormatAppliedCompute || len(tr.Requests) != 4 {
		t.Fatalf("%+v", tr.Sessions)
	}
	// Session 1: prompts 6, 6+2+1 = 9, 9+3+0 = 12 tokens in 4-token blocks with ids 1..3;
	// session 2 (at time 0 too) takes id 4.
	type r struct {
		ts      int64
		in, out int
		ids     []int64
	}
	var got []r
	for _, q := range tr.Requests {
		got = append(got, r{q.TimestampMS, q.InputLength, q.OutputLength, q.HashIDs})
	}
	want := []r{{0, 6, 2, []int64{1, 2}}, {0, 1, 1, []int64{4}}, {1400, 9, 3, []int64{1, 2, 3}}, {1403, 12, 5, []int64{1, 2, 3}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	roundTrip(t, tr)
	var buf bytes.Buffer
	if err := WriteTrace(&buf, tr.First(3)); err == nil || !strings.Contains(err.Error(), "session 1 has 2 of its 3 requests") {
		t.Fatalf("a cut session written as a summary: %v", err)
	}
	for _, c := range []struct{ text, want string }{
		{`{"num_turns": 1, "input_prompt_length": 6, "assistant_response_length": [2, 3], "tool_call_output_length": [1], "tool_call_latency": [1], "final_assistant_response_length": 5}`,
			"t.jsonl:1: assistant_response_length: has 2 values, want num_turns = 1"},
		{`{"num_turns": 0, "input_prompt_length": 6, "assistant_response_length": [], "tool_call_output_length": [], "tool_call_latency": []}`,
			"t.jsonl:1: final_assistant_response_length: missing"},
		{`{"num_turns": 1, "input_prompt_length": 6, "assistant_response_length": [2], "tool_call_output_length": [1], "tool_call_latency": [-1], "final_assistant_response_length": 5}`,
			"t.jsonl:1: tool_call_latency[0]:"},
	} {
		if _, err := parseStr(t, FormatAppliedCompute, c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestSessionRowErrorsNameLineAndField(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`{"session_id":"a","timestamp":1.5,"input_length":4,"output_length":1,"hash_ids":[1]}`, "t.jsonl:1: timestamp: 1.5 is not a whole number"},
		{`{"session_id":"a","delay":5,"timestamp":1,"input_length":4,"output_length":1,"hash_ids":[1]}`, `t.jsonl:1: delay: set on the first turn of session "a"`},
		{`{"session_id":"","input_length":4,"output_length":1,"hash_ids":[1]}`, "t.jsonl:1: session_id: empty"},
		{`{"session_id":"a","input_length":4,"hash_ids":[1]}`, "t.jsonl:1: output_length: missing"},
		{`{"session_id":"a","input_length":4,"input_tokens":4,"output_length":1,"hash_ids":[1]}`, "t.jsonl:1: input_tokens: given together with input_length"},
		{`{"session_id":"a","timestamp":5,"input_length":4,"output_length":1,"hash_ids":[1]}` + "\n" +
			`{"session_id":"a","timestamp":2,"input_length":4,"output_length":1,"hash_ids":[1]}`, `t.jsonl:2: timestamp: 2 is earlier than session "a"'s previous timestamp 5`},
		{`{"session_id":"a","input_length":4,"output_length":1,"hash_ids":[1],"wait_for":["b"]}`, "t.jsonl:1: wait_for: an agentic_mooncake field in a mooncake trace"},
		{`{"session_id":"a","input_length":4,"output_length":0,"hash_ids":[1]}`, "t.jsonl:1: output_length: must be at least 1"},
	} {
		if _, err := parseStr(t, FormatDetect, c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.text, err, c.want)
		}
	}
}

// A generated agentic DAG (each row waits for some earlier ones, in a shuffled file order):
// after reading, every request comes after the requests it waits for, starts no earlier than
// the latest of them plus its delay and tool wait, and the file written back reads the same.
func TestAgenticOrderProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "n")
		rows := make([]string, n)
		for i := range rows {
			var waits []string
			for j := range i {
				if rapid.Bool().Draw(t, "wait") {
					waits = append(waits, fmt.Sprintf("%q", fmt.Sprint("r", j)))
				}
			}
			ts := ""
			if rapid.Bool().Draw(t, "hasTS") {
				ts = fmt.Sprintf(`"timestamp":%d,`, rapid.IntRange(0, 5000).Draw(t, "ts"))
			}
			rows[i] = fmt.Sprintf(`{"request_id":"r%d",%s"wait_for":[%s],"delay":%d,"tool_wait_ms":%d.5,"input_length":4,"output_length":1,"hash_ids":[%d]}`,
				i, ts, strings.Join(waits, ","), rapid.IntRange(0, 300).Draw(t, "delay"), rapid.IntRange(0, 3000).Draw(t, "tool"), i)
		}
		perm := rapid.Permutation(rows).Draw(t, "order")
		tr, err := ParseFormat(strings.NewReader(strings.Join(perm, "\n")), "p.jsonl", 4, FormatDetect)
		if err != nil {
			t.Fatal(err)
		}
		for i, tu := range tr.Sessions.Turns {
			for _, j := range tu.WaitFor {
				earliest := tr.Requests[j].TimestampMS + usToMS(tu.DelayUS+tu.ToolWaitUS)
				if int(j) >= i || tr.Requests[i].TimestampMS < earliest {
					t.Fatalf("request %d (%s at %d) vs its dependency %d at %d", i, tu.RequestID, tr.Requests[i].TimestampMS, j, tr.Requests[j].TimestampMS)
				}
			}
			if i > 0 && tr.Requests[i].TimestampMS < tr.Requests[i-1].TimestampMS {
				t.Fatalf("timestamps out of order at %d", i)
			}
		}
		var buf bytes.Buffer
		if err := WriteTrace(&buf, tr); err != nil {
			t.Fatal(err)
		}
		back, err := ParseFormat(&buf, "back", 4, FormatAgentic)
		if err != nil || !reflect.DeepEqual(back.Requests, tr.Requests) || !reflect.DeepEqual(back.Sessions, tr.Sessions) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// Sessions may start after independent rows, however far into the trace: the rows before
// become sessions of one request each.
func TestSessionsAfterPlainRows(t *testing.T) {
	plain := `{"timestamp": 0, "input_length": 4, "output_length": 1, "hash_ids": [1]}` + "\n"
	session := `{"session_id":"a","timestamp":0,"input_length":4,"output_length":1,"hash_ids":[1]}` + "\n" +
		`{"session_id":"a","delay":7,"input_length":4,"output_length":1,"hash_ids":[1]}` + "\n"
	n := 1<<20/len(plain) + 1
	for _, f := range []Format{FormatDetect, FormatMooncake} {
		tr := mustParse(t, f, strings.Repeat(plain, n)+session)
		s := tr.Sessions
		if s == nil || len(s.IDs) != n+1 || s.IDs[n] != "a" || s.Turns[n+1].Index != 1 || tr.Requests[n+1].TimestampMS != 7 || tr.Lines[n+1] != n+2 {
			t.Fatalf("%q: %d sessions", f, len(s.IDs))
		}
	}
	if _, err := parseStr(t, FormatDetect, plain+`{"session_id":"a","delay":-1,"input_length":4,"output_length":1,"hash_ids":[1]}`); err == nil || !strings.Contains(err.Error(), "t.jsonl:2: delay: -1 must be") {
		t.Fatalf("got %v", err)
	}
}

func TestDerivedStartsStayOnTheClock(t *testing.T) {
	big := `{"session_id":"a","timestamp":4503599627370000,"input_length":4,"output_length":1,"hash_ids":[1]}
{"session_id":"a","delay":1000000,"input_length":4,"output_length":1,"hash_ids":[1]}`
	if _, err := parseStr(t, FormatDetect, big); err == nil || !strings.Contains(err.Error(), "t.jsonl:2: delay: the delays add up past 2^52 ms") {
		t.Fatalf("got %v", err)
	}
}

// BenchmarkDetectConversation is the share of BenchmarkParseConversation that looks for a
// session format before reading plain rows as before.
func BenchmarkDetectConversation(b *testing.B) {
	data, err := os.ReadFile(sharedConversation)
	if err != nil {
		b.Skip("../shared/traces/conversation_trace.jsonl not present: ", err)
	}
	// The buffer is filled once: parsing reads those bytes anyway.
	br := bufio.NewReaderSize(bytes.NewReader(data), 1<<20)
	for b.Loop() {
		if f := detect(br); f != FormatDetect {
			b.Fatalf("detected %q", f)
		}
	}
}
