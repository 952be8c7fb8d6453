package trace

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// fuzzFormat: any input either fails with an error naming it, or parses to a trace whose
// rows written in the same format read back to the same requests and structure.
func fuzzFormat(f *testing.F, format Format, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseFormat(bytes.NewReader(data), "fuzz", 4, format)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") {
				t.Fatalf("error does not name the input: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteTrace(&buf, tr); err != nil {
			t.Fatal(err)
		}
		back := format
		if tr.Sessions == nil {
			back = FormatDetect
		}
		again, err := ParseFormat(&buf, "again", 4, back)
		if err != nil {
			t.Fatalf("re-parse of written trace: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(again.Requests, tr.Requests) || !reflect.DeepEqual(again.Sessions, tr.Sessions) {
			t.Fatal("round trip changed the trace")
		}
	})
}

func FuzzParseMooncakeSessions(f *testing.F) {
	fuzzFormat(f, FormatMooncake,
		`{"session_id":"a","timestamp":1000,"input_length":8,"output_length":3,"hash_ids":[1,2]}
{"session_id":"a","delay_ms":250.5,"input_length":12,"output_length":3,"hash_ids":[1,2,3]}
{"created_time":7,"output_tokens":1,"hash_ids":[7]}`)
}

func FuzzParseMooncakeDelta(f *testing.F) {
	fuzzFormat(f, FormatMooncakeDelta,
		`{"session_id":"a","timestamp":0,"input_length":8,"output_length":3,"hash_ids":[1,2]}
{"session_id":"a","delay":100,"input_length":5,"output_length":3,"hash_ids":[3,4]}`)
}

func FuzzParseAgentic(f *testing.F) {
	fuzzFormat(f, FormatAgentic,
		`{"request_id":"r1","session_id":"s","timestamp":100,"input_length":4,"output_length":1,"hash_ids":[1]}
{"request_id":"r3","wait_for":["r1","r2"],"delay":10,"tool_wait_ms":1500,"input_length":8,"output_length":1,"hash_ids":[1,2]}
{"request_id":"r2","timestamp":300,"input_length":4,"output_length":1,"hash_ids":[5]}`,
		`{"request_id":"a","wait_for":["b"],"input_length":4,"output_length":1,"hash_ids":[1]}
{"request_id":"b","wait_for":["a"],"input_length":4,"output_length":1,"hash_ids":[1]}`)
}

func FuzzParseAppliedCompute(f *testing.F) {
	fuzzFormat(f, FormatAppliedCompute,
		`{"num_turns": 2, "input_prompt_length": 6, "assistant_response_length": [2, 3], "tool_call_output_length": [1, 0], "tool_call_latency": [1.4, 0.0025], "final_assistant_response_length": 5}`)
}
