package trace

import (
	"fmt"
	"io"
)

// appliedRow is one Applied Compute TRIE session summary: num_turns turns, each answered and
// followed by a tool call, then a final answer.
type appliedRow struct {
	NumTurns                     *int       `json:"num_turns"`
	InputPromptLength            *int       `json:"input_prompt_length"`
	AssistantResponseLength      *[]int     `json:"assistant_response_length"`
	ToolCallOutputLength         *[]int     `json:"tool_call_output_length"`
	ToolCallLatency              *[]float64 `json:"tool_call_latency"`
	FinalAssistantResponseLength *int       `json:"final_assistant_response_length"`
}

const appliedFields = "an applied_compute_agentic row has num_turns, input_prompt_length, assistant_response_length, tool_call_output_length, tool_call_latency, final_assistant_response_length"

// readAppliedCompute expands each session summary into num_turns+1 requests as Dynamo's
// Trace::from_applied_compute_agentic (lib/mocker/src/loadgen/trace.rs) does: turn k's prompt
// is the first prompt plus every earlier answer and tool output, the next turn follows
// tool_call_latency seconds after, and the final request answers with
// final_assistant_response_length. Prompt blocks get fresh hash ids from 1 upwards in file
// order (no prefix shared across sessions; a partial last block keeps its id as the prompt
// grows into it). Sessions have no start times: each starts at 0.
func readAppliedCompute(rr *rowReader, b *builder) error {
	bs := b.t.BlockSize
	next := int64(1)
	for {
		var row appliedRow
		err := rr.decodeNext(&row, appliedFields)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if name := firstWhere(false, field{"num_turns", row.NumTurns != nil}, field{"input_prompt_length", row.InputPromptLength != nil},
			field{"assistant_response_length", row.AssistantResponseLength != nil}, field{"tool_call_output_length", row.ToolCallOutputLength != nil},
			field{"tool_call_latency", row.ToolCallLatency != nil}, field{"final_assistant_response_length", row.FinalAssistantResponseLength != nil}); name != "" {
			return rr.errorf(name, "missing")
		}
		n := *row.NumTurns
		if n < 0 {
			return rr.errorf("num_turns", "negative (%d)", n)
		}
		for _, f := range []struct {
			name string
			len  int
		}{{"assistant_response_length", len(*row.AssistantResponseLength)}, {"tool_call_output_length", len(*row.ToolCallOutputLength)},
			{"tool_call_latency", len(*row.ToolCallLatency)}} {
			if f.len != n {
				return rr.errorf(f.name, "has %d values, want num_turns = %d", f.len, n)
			}
		}
		// Lengths: each turn's prompt, checked against the budget before ids are made.
		lengths := make([]int, n+1)
		lengths[0] = *row.InputPromptLength
		if lengths[0] < 1 {
			return rr.errorf("input_prompt_length", "must be at least 1, got %d", lengths[0])
		}
		for k := range n {
			ans, tool := (*row.AssistantResponseLength)[k], (*row.ToolCallOutputLength)[k]
			switch {
			case ans < 1:
				return rr.errorf(fmt.Sprintf("assistant_response_length[%d]", k), "must be at least 1, got %d", ans)
			case tool < 0:
				return rr.errorf(fmt.Sprintf("tool_call_output_length[%d]", k), "negative (%d)", tool)
			}
			lengths[k+1] = lengths[k] + ans + tool
			if lengths[k+1] > MaxHashIDs*bs || lengths[k+1] < lengths[k] {
				return rr.errorf(fmt.Sprintf("tool_call_output_length[%d]", k), "the prompt grows past the budget of %d hash ids", MaxHashIDs)
			}
		}
		final := *row.FinalAssistantResponseLength
		if final < 1 {
			return rr.errorf("final_assistant_response_length", "must be at least 1, got %d", final)
		}
		blocks := (lengths[n] + bs - 1) / bs
		if b.ids+blocks > MaxHashIDs {
			return fmt.Errorf("%s:%d: the trace exceeds the memory budget of %d requests and %d hash ids", rr.name, rr.lineNo, MaxRequests, MaxHashIDs)
		}
		ids := make([]int64, blocks)
		for j := range ids {
			ids[j] = next
			next++
		}
		s, _ := b.session("")
		b.s.Expanded = append(b.s.Expanded, int32(n+1))
		var ts int64
		for k := 0; k <= n; k++ {
			turn := Turn{Session: s, Index: int32(k), Depth: int32(k)}
			out := final
			if k < n {
				out = (*row.AssistantResponseLength)[k]
			}
			if k > 0 {
				lat := (*row.ToolCallLatency)[k-1]
				if turn.ToolWaitUS, err = toUS(lat, 1e6); err != nil {
					return rr.errorf(fmt.Sprintf("tool_call_latency[%d]", k-1), "%v seconds", err)
				}
				if ts, err = after(ts, turn.ToolWaitUS); err != nil {
					return rr.errorf(fmt.Sprintf("tool_call_latency[%d]", k-1), "%v", err)
				}
			}
			nb := (lengths[k] + bs - 1) / bs
			req := Request{TimestampMS: ts, InputLength: lengths[k], OutputLength: out, HashIDs: ids[:nb:nb]}
			if err := b.add(rr, req, turn); err != nil {
				return err
			}
		}
	}
}
