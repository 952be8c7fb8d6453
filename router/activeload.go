package router

import (
	"fmt"
	"math"
)

// LoadConfig is how the router accounts a worker's active load and admits requests, as
// Dynamo's KvRouterConfig and the frontend's busy thresholds have it
// (lib/kv-router/src/scheduling/config.rs @ 0243c51; docs/components/frontend/configuration.md
// @ 0427799). The zero value is Dynamo's default: every block tracked, KV reuse assumed,
// prefill tokens tracked, no output blocks, stride 1, no prefill-load model, no queue and no
// busy thresholds.
type LoadConfig struct {
	// NoTrackActiveBlocks is --no-router-track-active-blocks: prompt blocks of requests in
	// flight are not counted (the cost's decode-block term is 0).
	NoTrackActiveBlocks bool `json:",omitempty"`
	// NoAssumeKVReuse is --no-router-assume-kv-reuse: every request's blocks are its own
	// (Dynamo hashes them randomly), so shared prefixes count once per request.
	NoAssumeKVReuse bool `json:",omitempty"`
	// NoTrackPrefillTokens is --no-router-track-prefill-tokens: prompt tokens stay out of the
	// active load, the queue's pressure and the request's own prefill cost.
	NoTrackPrefillTokens bool `json:",omitempty"`
	// TrackOutputBlocks is --router-track-output-blocks: a block per block_size generated
	// tokens joins the worker's load, weighted by 1 − generated ÷ expected output length (the
	// trace's output_length stands for nvext.agent_hints.osl).
	TrackOutputBlocks bool `json:",omitempty"`
	// ActiveSequenceStride is --router-active-sequence-stride: one active-sequence hash per
	// stride complete prompt blocks, each counted as stride blocks (0 means 1).
	ActiveSequenceStride int `json:",omitempty"`
	// PrefillLoadModel is --router-prefill-load-model: "" or none (static prompt load until
	// the first token) or aic (prefillload.go).
	PrefillLoadModel PrefillLoadModel `json:",omitempty"`
	// QueueThreshold is --router-queue-threshold (nil: unset, no queue): requests wait in the
	// router while every eligible worker's active prefill tokens exceed it ×
	// MaxNumBatchedTokens (queue.go).
	QueueThreshold *float64 `json:",omitempty"`
	// QueuePolicy is --router-queue-policy: fcfs ("" too), wspt or lcfs.
	QueuePolicy QueuePolicy `json:",omitempty"`
	// Busy thresholds (--active-decode-blocks-threshold, --active-prefill-tokens-threshold,
	// --active-prefill-tokens-threshold-frac; nil: unset): a worker whose published load
	// exceeds any of them takes no new request; when every worker does, a request is rejected.
	ActiveDecodeBlocksThreshold      *float64 `json:",omitempty"`
	ActivePrefillTokensThreshold     *int64   `json:",omitempty"`
	ActivePrefillTokensThresholdFrac *float64 `json:",omitempty"`

	// MaxNumBatchedTokens and KVBlocks are the workers' max_num_batched_tokens and KV cache
	// blocks, which the queue and the busy thresholds are fractions of (the engine fills them).
	MaxNumBatchedTokens int `json:",omitempty"`
	KVBlocks            int `json:",omitempty"`
}

// Default reports whether c is Dynamo's default accounting and admission, the router's
// plain path.
func (c LoadConfig) Default() bool {
	return !c.NoTrackActiveBlocks && !c.NoAssumeKVReuse && !c.NoTrackPrefillTokens && !c.TrackOutputBlocks &&
		c.stride() == 1 && c.PrefillLoadModel.None() && c.QueuePolicy.fcfs() && !c.Admission()
}

func (c LoadConfig) stride() int { return max(1, c.ActiveSequenceStride) }

// Admission reports whether requests may be queued or rejected by the router.
func (c LoadConfig) Admission() bool { return c.QueueThreshold != nil || c.busyThresholds() }

func (c LoadConfig) busyThresholds() bool {
	return c.ActiveDecodeBlocksThreshold != nil || c.ActivePrefillTokensThreshold != nil || c.ActivePrefillTokensThresholdFrac != nil
}

// validate reports the first bad knob by its config name.
func (c LoadConfig) validate() error {
	if c.ActiveSequenceStride < 0 {
		return fmt.Errorf("router_active_sequence_stride: %d must be at least 1", c.ActiveSequenceStride)
	}
	if _, err := ParsePrefillLoadModel(string(c.PrefillLoadModel)); err != nil {
		return err
	}
	if _, err := ParseQueuePolicy(string(c.QueuePolicy)); err != nil {
		return err
	}
	for _, k := range []struct {
		name string
		v    *float64
	}{
		{"router_queue_threshold", c.QueueThreshold},
		{"active_decode_blocks_threshold", c.ActiveDecodeBlocksThreshold},
		{"active_prefill_tokens_threshold_frac", c.ActivePrefillTokensThresholdFrac},
	} {
		if k.v != nil && (math.IsNaN(*k.v) || math.IsInf(*k.v, 0) || *k.v < 0) {
			return fmt.Errorf("%s: %v must be a finite number >= 0", k.name, *k.v)
		}
	}
	if c.ActivePrefillTokensThreshold != nil && *c.ActivePrefillTokensThreshold < 0 {
		return fmt.Errorf("active_prefill_tokens_threshold: %d must be >= 0", *c.ActivePrefillTokensThreshold)
	}
	// Dynamo refuses these combinations (validate_kv_router_config, config.rs @ 057096c).
	if c.TrackOutputBlocks && c.NoTrackActiveBlocks {
		return fmt.Errorf("router_track_output_blocks: true requires router_track_active_blocks true")
	}
	if !c.PrefillLoadModel.None() && c.NoTrackPrefillTokens {
		return fmt.Errorf("router_prefill_load_model: %s requires router_track_prefill_tokens true", c.PrefillLoadModel)
	}
	if c.Admission() && c.MaxNumBatchedTokens <= 0 {
		return fmt.Errorf("max_num_batched_tokens: %d must be positive for the router's queue and busy thresholds", c.MaxNumBatchedTokens)
	}
	if c.ActiveDecodeBlocksThreshold != nil && c.KVBlocks <= 0 {
		return fmt.Errorf("num_gpu_blocks: %d must be positive for active_decode_blocks_threshold", c.KVBlocks)
	}
	return nil
}

// bookLoad books req's prompt blocks on w per the tracking flags and stride, under a
// LoadConfig other than the default (book's plain path). It returns the booking's refs and
// its blocks counted without sharing.
func (r *Router) bookLoad(w int, req *Request, refs []uint32) ([]uint32, int32) {
	lc := &r.cfg.Load
	if lc.NoTrackActiveBlocks {
		return refs, 0
	}
	n := len(req.BlockHashes)
	if s := lc.stride(); s > 1 {
		n -= n % s // the last incomplete group keeps no hash
	}
	if lc.NoAssumeKVReuse {
		r.load[w].ActiveBlocks += n
		return refs, int32(n)
	}
	g := r.g
	for base := 0; base < n; base += g {
		nk := min(g, n-base)
		rec := r.bookBlocks(w, req.BlockHashes[base], nk)
		refs = append(refs, rec<<5|uint32(nk-1))
	}
	return refs, 0
}

// strideActive rounds every worker's active prefix down to whole stride groups: a prefix that
// diverges inside a group does not match its retained hash.
func (r *Router) strideActive() {
	s := r.cfg.Load.stride()
	for w, a := range r.activePrefix[:r.workers] {
		r.activePrefix[w] = a - a%s
	}
}

// Generated tells the router that request id has generated tokens output tokens. With
// TrackOutputBlocks, each output block (block_size tokens past the prompt's blocks) joins
// the worker's load weighted by max(0, 1 − generated ÷ output length); otherwise it does
// nothing.
func (r *Router) Generated(id int64, generated, outputLength int) {
	if !r.cfg.Load.TrackOutputBlocks {
		return
	}
	b, ok := r.booked[id]
	if !ok {
		return
	}
	bs := r.cfg.BlockSize
	total := (b.isl + generated + bs - 1) / bs
	prompt := (b.isl + bs - 1) / bs
	out := int32(max(0, total-prompt))
	if out == b.outBlocks {
		return
	}
	frac := max(0, 1-float64(generated)/float64(max(1, outputLength)))
	l := &r.load[b.worker]
	l.OutputBlocks += float64(out)*frac - b.outWeight
	b.outBlocks, b.outWeight = out, float64(out)*frac
	r.booked[id] = b
}
