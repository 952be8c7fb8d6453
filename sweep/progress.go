package sweep

import "fmt"

// Phase is a stage of a sweep; a sweep walks search → saturation → validation → done (the
// saturation and validation phases are skipped when there is nothing to run in them).
type Phase string

// Phases of a sweep.
const (
	PhaseSearch     Phase = "search"
	PhaseSaturation Phase = "saturation" // prefill_load_scale values the search did not evaluate
	PhaseValidation Phase = "validation" // round_robin, default_kv and the winner on the validation requests
	PhaseDone       Phase = "done"
	// A sweep that stopped before done: its last record says where and why (Stop). The ledger
	// keeps its finished evaluations for --resume.
	PhaseInterrupted Phase = "interrupted" // its context ended: SIGINT/SIGTERM, a server stopping, a cancel
	PhaseFailed      Phase = "failed"      // an error or a crash (panic)
)

// Ended reports whether a sweep in phase p has stopped writing: done, interrupted or failed.
func (p Phase) Ended() bool { return p == PhaseDone || p == PhaseInterrupted || p == PhaseFailed }

// Stop reasons of a finished sweep (Progress.Stop), besides "converged at round r of R".
const (
	StopBudget    = "budget spent"
	StopExhausted = "every configuration evaluated"
	StopCancelled = "cancelled"
)

// Progress is where a sweep stands, as a plain value for status lines: the explorer, stderr
// and anything reading a sweep from outside. Done and Total count simulations finished and
// planned in the current phase (search: evaluations, which may stop early).
type Progress struct {
	Phase  Phase  `json:"phase"`
	Round  int    `json:"round,omitempty"`  // search round, 1-based; on done, the last round searched
	Rounds int    `json:"rounds,omitempty"` // round budget
	Done   int    `json:"done"`
	Total  int    `json:"total"`
	Stop   string `json:"stop,omitempty"` // done: why the search ended; interrupted, failed: why the sweep did
	// Remote is the status of the remote fleet running the simulations (Remote.Status), when
	// there is one: connected workers and tasks in flight.
	Remote string `json:"remote,omitempty"`
}

// Cancelled is the progress of a sweep stopped by its caller after reaching p.
func (p Progress) Cancelled() Progress {
	return Progress{Phase: PhaseDone, Round: p.Round, Rounds: p.Rounds, Stop: StopCancelled}
}

// String is a one-line status: "search round 3/6 · evaluations 24/60", "saturation 2/5",
// "validation 1/3", "done · converged at round 3 of 6".
func (p Progress) String() string {
	var s string
	switch p.Phase {
	case PhaseSearch:
		s = fmt.Sprintf("search round %d/%d · evaluations %d/%d", p.Round, p.Rounds, p.Done, p.Total)
	case PhaseDone, PhaseInterrupted, PhaseFailed:
		s = string(p.Phase) + " · " + p.Stop
	default:
		s = fmt.Sprintf("%s %d/%d", p.Phase, p.Done, p.Total)
	}
	if p.Remote != "" && !p.Phase.Ended() {
		s += " · " + p.Remote
	}
	return s
}

// converged is the stop reason of a search that stopped early after round r of R.
func converged(r, rounds int) string { return fmt.Sprintf("converged at round %d of %d", r, rounds) }
