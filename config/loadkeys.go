package config

import "github.com/routerlab/routerlab/router"

// The router's active-load and admission keys of search_space (router.LoadConfig), named as
// Dynamo's KvRouterConfig fields and frontend flags (lib/kv-router/src/scheduling/config.rs @
// 0243c51, docs/components/frontend/configuration.md @ 0427799). Each may be a list (a sweep
// dimension); each defaults to Dynamo's default, and a key at its default is left out of the
// fingerprint, so experiments from before the keys existed keep theirs.
const (
	KeyTrackActiveBlocks       = "router_track_active_blocks"
	KeyAssumeKVReuse           = "router_assume_kv_reuse"
	KeyTrackPrefillTokens      = "router_track_prefill_tokens"
	KeyTrackOutputBlocks       = "router_track_output_blocks"
	KeyActiveSequenceStride    = "router_active_sequence_stride"
	KeyPrefillLoadModel        = "router_prefill_load_model"
	KeyQueueThreshold          = "router_queue_threshold"
	KeyQueuePolicy             = "router_queue_policy"
	KeyDecodeBlocksThreshold   = "active_decode_blocks_threshold"
	KeyPrefillTokensThreshold  = "active_prefill_tokens_threshold"
	KeyPrefillTokensThreshFrac = "active_prefill_tokens_threshold_frac"
)

// unset is the value of a threshold that is not set (Dynamo's default for each of them).
const unset = "none"

// loadBlock is the load keys in canonical order, with Dynamo's default of each; the cost's
// accounting and the scheduler queue are kv_router's only (Dynamo's round-robin and random
// push routers have neither), the busy thresholds filter every mode's workers.
var loadBlock = routerKeyBlock{
	{KeyTrackActiveBlocks, "true", true, boolKey}, {KeyAssumeKVReuse, "true", true, boolKey},
	{KeyTrackPrefillTokens, "true", true, boolKey}, {KeyTrackOutputBlocks, "false", true, boolKey},
	{KeyActiveSequenceStride, "1", true, numKey(1, 1<<16, true)},
	{KeyPrefillLoadModel, "none", true, func(c valueCheck) error {
		return c.oneOf(string(router.PrefillLoadNone), string(router.PrefillLoadAIC))
	}},
	{KeyQueueThreshold, unset, true, noneOrNumKey(0, 1e6, false)},
	{KeyQueuePolicy, "fcfs", true, func(c valueCheck) error {
		var names []string
		for _, p := range router.QueuePolicies() {
			names = append(names, string(p))
		}
		return c.oneOf(names...)
	}},
	{KeyDecodeBlocksThreshold, unset, false, noneOrNumKey(0, 1, false)},
	{KeyPrefillTokensThreshold, unset, false, noneOrNumKey(0, 1e12, true)},
	{KeyPrefillTokensThreshFrac, unset, false, noneOrNumKey(0, 1e6, false)},
}

// LoadKeys lists the keys in canonical order, with Dynamo's default of each.
func LoadKeys() []Setting {
	var out []Setting
	for _, k := range loadBlock {
		out = append(out, Setting{k.key, k.def})
	}
	return out
}

// KVLoadKeys are the load keys only the kv_router mode reads.
func KVLoadKeys() []string { return loadBlock.kvOnlyNames() }

// loadConfig is the router.LoadConfig of one point (val gives each key's value there).
func loadConfig(val func(key string) Value) router.LoadConfig {
	opt := func(key string) *float64 {
		v := val(key)
		if v.Text == unset {
			return nil
		}
		x := v.Num
		return &x
	}
	c := router.LoadConfig{
		NoTrackActiveBlocks:              val(KeyTrackActiveBlocks).Text == "false",
		NoAssumeKVReuse:                  val(KeyAssumeKVReuse).Text == "false",
		NoTrackPrefillTokens:             val(KeyTrackPrefillTokens).Text == "false",
		TrackOutputBlocks:                val(KeyTrackOutputBlocks).Text == "true",
		PrefillLoadModel:                 router.PrefillLoadModel(val(KeyPrefillLoadModel).Text),
		QueueThreshold:                   opt(KeyQueueThreshold),
		QueuePolicy:                      router.QueuePolicy(val(KeyQueuePolicy).Text),
		ActiveDecodeBlocksThreshold:      opt(KeyDecodeBlocksThreshold),
		ActivePrefillTokensThresholdFrac: opt(KeyPrefillTokensThreshFrac),
	}
	if s := int(val(KeyActiveSequenceStride).Num); s > 1 {
		c.ActiveSequenceStride = s
	}
	if p := opt(KeyPrefillTokensThreshold); p != nil {
		n := int64(*p)
		c.ActivePrefillTokensThreshold = &n
	}
	if c.PrefillLoadModel == router.PrefillLoadNone {
		c.PrefillLoadModel = ""
	}
	if c.QueuePolicy == router.QueueFCFS {
		c.QueuePolicy = ""
	}
	return c
}

// LoadConfigOf is the router.LoadConfig of load keys' values as text (text gives each key's;
// values are checked by the caller, as the explorer's knobs are by their lists).
func LoadConfigOf(text func(key string) string) router.LoadConfig {
	return loadConfig(func(key string) Value { return scalarValue(text(key)) })
}

// checkLoad refuses lists that allow a combination Dynamo refuses (validate_kv_router_config,
// config.rs @ 057096c): output blocks without active blocks, a prefill-load model without
// prefill tokens.
func (f *File) checkLoad() error {
	has := func(key, text string) bool {
		for _, v := range f.Values(key) {
			if v.Text == text {
				return true
			}
		}
		return false
	}
	switch {
	case has(KeyTrackOutputBlocks, "true") && has(KeyTrackActiveBlocks, "false"):
		return &Error{File: f.Name, Key: "search_space." + KeyTrackOutputBlocks,
			Msg: "true requires router_track_active_blocks true, and that list allows false (Dynamo refuses the combination)"}
	case has(KeyPrefillLoadModel, string(router.PrefillLoadAIC)) && has(KeyTrackPrefillTokens, "false"):
		return &Error{File: f.Name, Key: "search_space." + KeyPrefillLoadModel,
			Msg: "aic requires router_track_prefill_tokens true, and that list allows false (Dynamo refuses the combination)"}
	}
	return nil
}

// ScalarValue reads one search_space value as the parser does (a number when it parses as one).
func ScalarValue(s string) Value { return scalarValue(s) }
