package model

import (
	"cmp"
	"errors"
	"fmt"
	"math"
)

// Attention data parallelism (a DEP layout: attention_dp > 1 with the experts spread over
// all the worker's GPUs) runs attention_dp ranks of tp GPUs each. Every rank holds the
// attention and dense weights (split over its tp GPUs), its own KV cache and its own
// scheduler, and computes attention, the projections, norms and the LM head on its own
// batch; the MoE layers run on the tokens of all ranks at once, the experts spread over all
// tp × attention_dp GPUs as moe_tp × moe_ep. AIConfigurator prices it so
// (ai-dynamo/aiconfigurator src/aiconfigurator/sdk/models/moe.py and operations.py at
// 74bb4b1889abef784c855cae1c7e01ebe51db482: every op on the rank's tokens with heads / tp,
// MoE.query on x × attention_dp_size tokens, MoEDispatch an all-gather before and a
// reduce-scatter after of volume × attention_dp_size over the tp × attention_dp GPUs).
// vLLM steps the ranks in lockstep: while any rank has unfinished requests, a rank with
// nothing scheduled runs a dummy batch so that the experts' collectives stay in step
// (vllm-project/vllm vllm/v1/engine/core.py at ac3cb2e2eca80290181abb9365d572af6d287473,
// DPEngineCoreProc.run_busy_loop, execute_dummy_batch), so a step takes the slowest rank's own
// part plus the shared MoE part.
//
// The tables are per layout without data parallelism (Import refuses attention_dp), so a
// DEP worker is composed from two of them: the rank's table (layout tp, attention_dp 1,
// any expert split) for everything but the routed experts, and the table of the worker's
// whole width (tp × attention_dp GPUs, the same moe_tp × moe_ep) for the routed experts at
// the summed tokens. The all-gather + reduce-scatter pair moves the bytes of one all-reduce
// of the summed tokens' hidden states, so it is priced as one all-reduce per MoE layer from
// the whole width's table (AIConfigurator queries NCCL's all-gather and reduce-scatter
// rows, which the tables do not carry: an approximation, documented in docs/attention-dp.md).

// ErrNoRankTable and ErrNoExpertsTable say which of a DEP worker's two tables is missing
// (errors.Is on NewWorker's error).
var (
	ErrNoRankTable    = errors.New("no step-time table of its rank")
	ErrNoExpertsTable = errors.New("no step-time table of its experts' width")
)

// rankGroup is what a DEP worker adds to its rank's Worker: the MoE part of a lockstep step.
type rankGroup struct {
	ranks    int
	experts  curve // routed experts, all MoE layers, by the summed tokens of all ranks
	dispatch curve // the all-gather + reduce-scatter around them, by the summed tokens
	digest   string
}

// newAttentionDPWorker builds d's worker (d.AttentionDP > 1): a Worker pricing one rank
// (its own table without the routed experts) with the group's MoE part beside it.
func newAttentionDPWorker(d Deployment) (*Worker, error) {
	if d.Dynosim() {
		return nil, fmt.Errorf("model: attention_dp %d: the dynosim timing reference prices attention_dp 1 only", d.AttentionDP)
	}
	whole := d
	whole.TP, whole.AttentionDP = d.TP*d.AttentionDP, 1
	wholeTable, err := loadTable(whole)
	if err != nil {
		return nil, fmt.Errorf("model: attention_dp %d prices its experts from the table of the worker's %d GPUs (%w): %w", d.AttentionDP, whole.TP, ErrNoExpertsTable, err)
	}
	if !wholeTable.LLM.MoE() {
		return nil, fmt.Errorf("model: attention_dp %d: %s is a dense model; attention data parallelism is modelled for MoE models (use replicas for data parallelism)", d.AttentionDP, d.ModelName)
	}
	rankTable, err := rankTableOf(d, wholeTable)
	if err != nil {
		return nil, err
	}
	// The rank's table with its routed experts taken out: they run once for all ranks.
	rt := *rankTable
	rt.MoE = Grid{Cols: rankTable.MoE.Cols, Values: make([]float64, len(rankTable.MoE.Values))}
	w, err := newWorker(d, &rt)
	if err != nil {
		return nil, err
	}
	s := wholeTable.LLM
	share := float64(s.MoELayers()) / float64(2*s.Layers) // one of the two all-reduces of each MoE layer
	dispatch := make([]float64, len(wholeTable.Collective.Values))
	for i, v := range wholeTable.Collective.Values {
		dispatch[i] = v * share
	}
	w.ranks = &rankGroup{
		ranks:    d.AttentionDP,
		experts:  newCurve(wholeTable.MoE.Values, 1),
		dispatch: newCurve(dispatch, 1),
		digest:   wholeTable.digest,
	}
	return w, nil
}

// rankTableOf finds the table of one rank of d: tp d.TP without data parallelism, with the
// experts split any way over its GPUs and by any MoE kernel backend (only the parts outside
// the routed experts are used), served in the same precision as the experts' table whole.
func rankTableOf(d Deployment, whole *Table) (*Table, error) {
	var first error
	for i := range 2 * d.TP {
		moeTP := i%d.TP + 1
		if d.TP%moeTP != 0 || i >= d.TP && d.MoEBackend == "" {
			continue
		}
		r := d
		r.AttentionDP, r.MoETP, r.MoEEP = 1, moeTP, d.TP/moeTP
		if i >= d.TP {
			r.MoEBackend = "" // the release's default experts: the rest of the model is the same
		}
		t, err := loadTable(r)
		if err == nil && (t.Quantization != whole.Quantization || t.GEMMQuant != whole.GEMMQuant) {
			err = fmt.Errorf("the tp %d table %s is served in %s, the experts' table %s in %s",
				d.TP, TableFileName(t), cmp.Or(t.Quantization, t.GEMMQuant), TableFileName(whole), cmp.Or(whole.Quantization, whole.GEMMQuant))
		}
		if err == nil {
			return t, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, fmt.Errorf("model: attention_dp %d prices each rank from a table of tp %d (%w): %w", d.AttentionDP, d.TP, ErrNoRankTable, first)
}

// Ranks is how many attention data-parallel ranks the worker runs (1: none).
func (w *Worker) Ranks() int {
	if w.ranks == nil {
		return 1
	}
	return w.ranks.ranks
}

// RanksStepUS is the duration of one lockstep step of a DEP worker whose ranks run
// batches (one per rank; an empty batch is a rank's dummy batch): the slowest rank's own
// part plus the routed experts and their dispatch on the summed tokens. A dummy batch
// counts one token, as vLLM's dummy run feeds the experts one token per idle rank.
func (w *Worker) RanksStepUS(batches []Batch) int64 {
	var slowest int64
	tokens := 0
	for i := range batches {
		b := &batches[i]
		n := b.Decodes
		for _, c := range b.Prefill {
			n += c.NewTokens
		}
		if n == 0 {
			tokens++
			continue
		}
		tokens += n
		slowest = max(slowest, w.StepTimeUS(b))
	}
	if w.ranks == nil {
		return max(1, slowest)
	}
	x := float64(tokens)
	return slowest + int64(math.Ceil(w.ranks.experts.at(x)+w.ranks.dispatch.at(x)))
}

// ExpertsTableDigest names the table a DEP worker prices its experts from ("" without
// attention data parallelism).
func (w *Worker) ExpertsTableDigest() string {
	if w.ranks == nil {
		return ""
	}
	return w.ranks.digest
}
