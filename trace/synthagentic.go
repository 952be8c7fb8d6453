package trace

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// AgenticSpec states the agentic synthesizer's workload (`trace synth --agentic`): tool-agent
// sessions whose every turn sends the whole context so far (the previous prompt, the model's
// answer and the tool's result), after the tool has run.
type AgenticSpec struct {
	Sessions int // sessions
	Turns    int // requests per session (fewer when the context would pass MaxContext)
	// SessionRate is session starts per second (a Poisson process).
	SessionRate float64
	// SystemTokens is the system prompt with tool definitions; each session draws one of
	// PromptGroups such prompts uniformly, shared verbatim (whole blocks) with its group.
	SystemTokens, PromptGroups int
	// Means of exponential draws (each at least 1 token or 0 ms): the first user message,
	// the tool result appended before each later turn, each turn's output, and the tool's
	// run time before each later turn.
	UserTokens, ToolTokens, OutputTokens, ToolWaitMS float64
	// Format is FormatMooncake (session_id, a first timestamp, each later turn's delay = its
	// tool wait) or FormatAgentic (request_id, wait_for the previous turn, tool_wait_ms).
	Format Format
	Seed   uint64
}

// MaxContext bounds a synthesized request's input plus output (the seed model's 131,072).
const MaxContext = 131072

// DefaultAgenticSpec is `trace synth --agentic` without other flags.
func DefaultAgenticSpec() AgenticSpec {
	return AgenticSpec{Sessions: 1000, Turns: 8, SessionRate: 1, SystemTokens: 4096, PromptGroups: 4,
		UserTokens: 1024, ToolTokens: 512, OutputTokens: 256, ToolWaitMS: 2000, Format: FormatMooncake, Seed: DefaultSeed}
}

func (a AgenticSpec) validate() error {
	switch {
	case a.Sessions < 1 || a.Turns < 1 || a.Sessions*a.Turns > MaxRequests || a.Sessions > MaxRequests || a.Turns > MaxRequests:
		return fmt.Errorf("--sessions × --turns: %d × %d must be from 1 to %d requests", a.Sessions, a.Turns, MaxRequests)
	case !(a.SessionRate > 0) || math.IsInf(a.SessionRate, 0):
		return fmt.Errorf("--session-rate: %v must be a positive number of sessions per second", a.SessionRate)
	case a.SystemTokens < 0 || a.SystemTokens > MaxContext/2:
		return fmt.Errorf("--system-tokens: %d must be from 0 to %d", a.SystemTokens, MaxContext/2)
	case a.PromptGroups < 1 || a.PromptGroups > 1<<20:
		return fmt.Errorf("--prompt-groups: %d must be from 1 to %d", a.PromptGroups, 1<<20)
	case a.Format != FormatMooncake && a.Format != FormatAgentic:
		return fmt.Errorf("--trace-format: %q: the agentic synthesizer writes mooncake or agentic_mooncake", a.Format)
	}
	for _, m := range []struct {
		name string
		v    float64
	}{{"--user-tokens", a.UserTokens}, {"--tool-tokens", a.ToolTokens}, {"--output-tokens", a.OutputTokens}, {"--tool-wait-ms", a.ToolWaitMS}} {
		if math.IsNaN(m.v) || m.v < 0 || m.v > MaxContext && m.name != "--tool-wait-ms" || m.v > 3.6e6 {
			return fmt.Errorf("%s: %v out of range (0 to %d tokens, or an hour)", m.name, m.v, MaxContext)
		}
	}
	return nil
}

// SynthesizeAgentic generates tool-agent sessions per spec, deterministically for its seed.
func SynthesizeAgentic(spec AgenticSpec) (*Trace, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(spec.Seed, 0x6167656e74)) // "agent"
	draw := func(mean float64, least int) int {
		return max(least, int(math.Round(mean*r.ExpFloat64())))
	}
	bs := DefaultBlockSize
	shared := spec.SystemTokens / bs // whole blocks of a system prompt
	next := int64(spec.PromptGroups*shared) + 1
	st := &Sessions{Format: spec.Format}
	t := &Trace{Name: "agentic", BlockSize: bs, Sessions: st,
		Digest: fmt.Sprintf("synthesized: agentic %+v", spec)}
	var start float64
	for s := range spec.Sessions {
		start += 1000 * r.ExpFloat64() / spec.SessionRate
		group := int64(r.IntN(spec.PromptGroups))
		sid := fmt.Sprintf("agent-%d", s+1)
		st.IDs = append(st.IDs, sid)
		in := spec.SystemTokens + draw(spec.UserTokens, 1)
		var ids []int64
		for j := range int64(shared) {
			ids = append(ids, group*int64(shared)+j+1)
		}
		for k := range spec.Turns {
			out := draw(spec.OutputTokens, 1)
			if in+out > MaxContext {
				break
			}
			for len(ids) < (in+bs-1)/bs { // the prompt so far keeps its ids, a partial last block too
				ids = append(ids, next)
				next++
			}
			req := Request{InputLength: in, OutputLength: out, HashIDs: ids[:len(ids):len(ids)]}
			tu := Turn{Session: int32(s), Index: int32(k), Depth: int32(k)}
			if spec.Format == FormatAgentic {
				tu.RequestID = fmt.Sprintf("%s-turn-%d", sid, k+1)
			}
			if k == 0 {
				req.TimestampMS = int64(start)
				tu.HasTimestamp, tu.RowTimestampMS = true, req.TimestampMS
			} else {
				prev := len(t.Requests) - 1
				wait := int64(draw(spec.ToolWaitMS, 0))
				req.TimestampMS = t.Requests[prev].TimestampMS + wait
				if spec.Format == FormatAgentic {
					tu.WaitFor, tu.HasToolWait, tu.ToolWaitUS = []int32{int32(prev)}, true, wait*1000
				} else {
					tu.HasDelay, tu.DelayUS = true, wait*1000
				}
			}
			t.Requests = append(t.Requests, req)
			st.Turns = append(st.Turns, tu)
			in += out + draw(spec.ToolTokens, 1)
		}
	}
	t.Lines = make([]int, len(t.Requests)) // arrivalOrder reorders them with the requests
	t.arrivalOrder()
	t.Lines = nil
	return t, nil
}
