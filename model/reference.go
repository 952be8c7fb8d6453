package model

import "math"

// Timing references: how a step is priced and scheduled.
const (
	// ReferenceSilicon prices a step as the one forward pass vLLM runs over its whole batch
	// (the kernels of the checkpoint, validated against measured runs).
	ReferenceSilicon = "silicon"
	// ReferenceDynosim prices and schedules as Dynamo's mocker does with AIConfigurator's
	// forward-pass model (ai-dynamo/dynamo lib/mocker/src/scheduler/vllm/core.rs and
	// common/perf_model.rs): a pass costs AIConfigurator's prefill prediction for the
	// step's prefill chunks plus, separately, its decode prediction for every request that
	// emits a token in the pass (decode floored at 1 ms), and the blocks a pass allocates
	// are visible to the router when the pass starts.
	ReferenceDynosim = "dynosim"
)

// TimingReferences lists the supported timing references.
func TimingReferences() []string { return []string{ReferenceSilicon, ReferenceDynosim} }

// timingReference is d's timing reference, silicon when unset.
func (d Deployment) timingReference() string {
	if d.TimingReference == "" {
		return ReferenceSilicon
	}
	return d.TimingReference
}

// Dynosim reports whether d is priced and scheduled as Dynamo's mocker does.
func (d Deployment) Dynosim() bool { return d.timingReference() == ReferenceDynosim }

// mockerDecodeFloorUS is the mocker's floor on a decode prediction: "token-emitting decode
// steps should not collapse onto the same timestamp" (perf_model.rs, predict_decode_time:
// time.max(1.0) ms).
const mockerDecodeFloorUS = 1000

// dynosimStepUS prices a step the way the mocker's vLLM scheduler does
// (execute_pass_internal): the prefill chunks as one AIConfigurator context pass at their
// mean shape — predict_prefill(batch_count, mean_isl − mean_prefix, mean_prefix), where a
// chunk's isl is its prompt position after the chunk and its prefix what was computed or
// cached before it, means by integer division — then one generation pass,
// predict_decode(ready, mean context, osl 2), over every request that emits a token at the
// end of the pass (decodes and the prefills this pass completes), at least 1 ms. The two
// passes run one after the other; each pays its own non-attention work and LM head.
func (w *Worker) dynosimStepUS(b *Batch) int64 {
	var us float64
	if n := len(b.Prefill); n > 0 {
		var isl, prefix int
		for i := range b.Prefill {
			c := &b.Prefill[i]
			isl += c.NewTokens + c.CachedTokens
			prefix += c.CachedTokens
		}
		meanISL, meanPrefix := isl/n, prefix/n
		if eff := meanISL - meanPrefix; eff > 0 {
			full, cached := float64(meanISL), float64(meanPrefix)
			us += w.nonAttention.at(float64(n*eff)) + w.logits.at(float64(n)) +
				w.context.at(float64(n), math.Sqrt(full*full-cached*cached))
		}
	}
	if ready := b.Decodes + b.FirstTokens; ready > 0 {
		ctx := (b.DecodeContextTokens + b.FirstTokenContextTokens) / int64(ready)
		// osl 2: one generation step at s = isl + 1 (AIConfigurator's _run_generation_phase).
		d := w.nonAttention.at(float64(ready)) + w.logits.at(float64(ready)) +
			w.decode.at(float64(ready), float64(ctx+1))
		us += max(d, mockerDecodeFloorUS)
	}
	if us <= 0 {
		return 1
	}
	return int64(math.Ceil(us))
}
