package tui

// The router's second group of knobs: its index (knobs_index.go), then the load-and-admission
// knobs: Dynamo's KV router accounting (--router-track-*,
// --router-assume-kv-reuse, --router-active-sequence-stride, --router-prefill-load-model), its
// queue (--router-queue-threshold, --router-queue-policy) and the frontend's busy thresholds.
// They are a second group of rows in the Knobs pane (g switches), so that neither group
// outgrows an 80×24 terminal; the backend says which values each steps through.

// loadKeys are the group's knobs by their experiment-file keys, in the pane's order.
var loadKeys = [...]string{
	"router_track_active_blocks", "router_assume_kv_reuse", "router_track_prefill_tokens",
	"router_track_output_blocks", "router_active_sequence_stride", "router_prefill_load_model",
	"router_queue_threshold", "router_queue_policy",
	"active_decode_blocks_threshold", "active_prefill_tokens_threshold", "active_prefill_tokens_threshold_frac",
}

// loadLabels are their names in the pane, short enough not to be cut at 80 columns (the help
// line names the key in full).
var loadLabels = [...]string{
	"track_active_blocks", "assume_kv_reuse", "track_prefill_tokens", "track_output_blocks",
	"active_seq_stride", "prefill_load_model", "queue_threshold", "queue_policy",
	"busy_decode_blocks", "busy_prefill_tokens", "busy_prefill_frac",
}

// label is knob k's name in the pane.
func (k knob) label() string {
	if k.isIndex() {
		return k.indexLabel()
	}
	if k >= numKnobs {
		return loadLabels[k-numKnobs]
	}
	return k.key()
}

// LoadKeys lists the group's keys (the backend checks them against the experiment's).
func LoadKeys() []string { return loadKeys[:] }

var loadAbout = [...]string{
	"Dynamo --router-track-active-blocks: in-flight prompt blocks count in the cost's decode term",
	"Dynamo --router-assume-kv-reuse: requests sharing a prefix share its active blocks (false: each counts its own)",
	"Dynamo --router-track-prefill-tokens: prompt tokens count as the worker's prefill load until the first token",
	"Dynamo --router-track-output-blocks: generated blocks count too, weighted 1 − generated ÷ output length",
	"Dynamo --router-active-sequence-stride (blocks): one active hash per N prompt blocks, counted as N",
	"Dynamo --router-prefill-load-model: aic decays the oldest prefill over its priced duration",
	"Dynamo --router-queue-threshold (× max_num_batched_tokens): requests wait while every worker's prefill load exceeds it",
	"Dynamo --router-queue-policy: fcfs (tail TTFT), wspt (shortest prompt first: mean TTFT), lcfs",
	"Dynamo --active-decode-blocks-threshold (0–1 of the KV cache): above it a worker is busy; all busy rejects",
	"Dynamo --active-prefill-tokens-threshold (tokens to prefill): above it a worker is busy; all busy rejects",
	"Dynamo --active-prefill-tokens-threshold-frac (× max_num_batched_tokens): above it a worker is busy",
}

// LoadKnobs holds a value per load knob, in loadKeys' order; "" keeps the experiment's.
type LoadKnobs [len(loadKeys)]string

// LoadKnob is the values one load knob steps through, in order.
type LoadKnob struct{ Values []string }

// loadRows lists the group's rows: the index knobs that count at ks (knobs_index.go), then a
// knob per entry of s.Load.
func (s Space) loadRows(ks Knobs) []knob {
	out := append([]knob{knobGroup}, s.indexRows(ks)...)
	for i := range min(len(s.Load), len(loadKeys)) {
		out = append(out, numKnobs+knob(i))
	}
	return out
}

// Sets are the knobs as --set assignments of their experiment-file keys, those left to the
// experiment ("") omitted.
func (l LoadKnobs) Sets() []string {
	var out []string
	for i, v := range l {
		if v != "" {
			out = append(out, loadKeys[i]+"="+v)
		}
	}
	return out
}

// kvOnlyLoad reports whether load knob k is read by the kv_router mode only (all but the busy
// thresholds, which filter every mode's workers).
func kvOnlyLoad(k knob) bool { return int(k-numKnobs) < 8 }
