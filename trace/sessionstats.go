package trace

// SessionStats describes the session and dependency structure a trace declares.
type SessionStats struct {
	Format          Format       `json:"format"`
	Sessions        int          `json:"sessions"`
	TurnsPerSession Distribution `json:"turns_per_session"`
	// Requests that wait for another: a later session turn, or an agentic row with wait_for.
	DependentRequests int `json:"dependent_requests"`
	// Turns with a tool wait, and its distribution over them.
	ToolWaits  int          `json:"tool_waits"`
	ToolWaitMS Distribution `json:"tool_wait_ms"`
	// Turns with a delay (beyond any tool wait) after their predecessor or dependencies
	// complete, and its distribution over them (absent without one).
	Delays  int           `json:"delays,omitempty"`
	DelayMS *Distribution `json:"delay_ms,omitempty"`
	// DependencyDepth is the longest chain of requests each request waits for.
	DependencyDepth Distribution `json:"dependency_depth"`
}

func sessionStats(s *Sessions) *SessionStats {
	st := &SessionStats{Format: s.Format, Sessions: len(s.IDs)}
	turns := make([]float64, len(s.IDs))
	depth := make([]float64, len(s.Turns))
	var waits, delays []float64
	for i, tu := range s.Turns {
		if tu.DelayUS > 0 {
			delays = append(delays, float64(tu.DelayUS)/1000)
		}
		turns[tu.Session]++
		depth[i] = float64(tu.Depth)
		if tu.Depth > 0 {
			st.DependentRequests++
		}
		if tu.ToolWaitUS > 0 {
			waits = append(waits, float64(tu.ToolWaitUS)/1000)
		}
	}
	st.ToolWaits = len(waits)
	st.TurnsPerSession = distribution(turns)
	st.DependencyDepth = distribution(depth)
	if len(waits) > 0 {
		st.ToolWaitMS = distribution(waits)
	}
	if st.Delays = len(delays); st.Delays > 0 {
		d := distribution(delays)
		st.DelayMS = &d
	}
	return st
}
