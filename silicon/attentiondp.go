package silicon

import (
	"errors"
	"fmt"

	"github.com/routerlab/routerlab/model"
)

// attentionDPSkip says why a row with attention data parallelism (sim.AttentionDP > 1) cannot
// be replayed, or "" when its worker can be priced: each rank from the table of its tp, the
// experts from the table of the worker's tp × attention_dp GPUs (model/attentiondp.go). seen
// keeps the answers by deployment.
func attentionDPSkip(sim Row, d model.Deployment, seen map[model.Deployment]string) string {
	if reason, ok := seen[d]; ok {
		return reason
	}
	kind := "DEP"
	if sim.Layout() == "DP" {
		kind = fmt.Sprintf("data-parallel attention, experts split over %d GPUs", sim.MoETP)
	}
	reason := ""
	if _, err := model.NewWorker(d); err != nil {
		reason = fmt.Sprintf("attention_dp %d (%s): %s", sim.AttentionDP, kind, attentionDPWhat(err, d))
	}
	seen[d] = reason
	return reason
}

// attentionDPWhat says which of DEP deployment d's tables NewWorker's err misses.
func attentionDPWhat(err error, d model.Deployment) string {
	switch {
	case errors.Is(err, model.ErrNoRankTable):
		return fmt.Sprintf("no step-time table for its rank (tp %d) in this precision", d.TP)
	case errors.Is(err, model.ErrNoExpertsTable):
		return fmt.Sprintf("no step-time table for its experts (%d GPUs, moe_tp %d, moe_ep %d)", d.TP*d.AttentionDP, d.MoETP, d.MoEEP)
	}
	return err.Error()
}

// scriptAttentionDP reads a row of a run whose script enabled attention data parallelism
// itself (Benchmark.AttentionDP) as the worker that served it: the label's tp GPUs as that
// many one-GPU attention ranks, the experts spread over all of them (TensorRT-LLM's
// enable_attention_dp with --ep_size the GPU count).
func scriptAttentionDP(r Row, b Benchmark) (Row, string, bool) {
	if !b.AttentionDP || r.AttentionDP > 1 || r.TP <= 1 {
		return r, "", false
	}
	n := r.TP
	note := fmt.Sprintf("labelled tp %d, moe_tp %d, moe_ep %d: replayed as attention_dp %d, moe_ep %d (the script enabled attention data parallelism at this shape)", r.TP, r.MoETP, r.MoEEP, n, n)
	r.TP, r.AttentionDP, r.MoETP, r.MoEEP = 1, n, 1, n
	return r, note, true
}
