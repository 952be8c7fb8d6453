package router

import (
	"fmt"
	"math"
	"strings"
)

// Mode names a routing policy, spelled as Dynamo's router_mode knob. Each policy's file
// declares its Mode constant; policies() lists them.
type Mode string

// Modes lists every routing policy in a fixed order (for help text and menus).
func Modes() []Mode {
	defs := policies()
	modes := make([]Mode, len(defs))
	for i, d := range defs {
		modes[i] = d.mode
	}
	return modes
}

// ParseMode accepts a router_mode value, case-insensitively and with "-" for "_"; "kv" and
// "round-robin" are accepted too, since Dynamo's CLI spells them that way.
func ParseMode(s string) (Mode, error) {
	if d, ok := findPolicy(s); ok {
		return d.mode, nil
	}
	names := make([]string, 0, 4)
	for _, m := range Modes() {
		names = append(names, string(m))
	}
	return "", fmt.Errorf("router_mode: unknown mode %q (want one of %s)", s, strings.Join(names, ", "))
}

// Config holds the router knobs a user tunes.
type Config struct {
	Mode Mode
	// OverlapScoreCredit is how many prefill blocks one cached prefix block saves
	// (0 ignores the prefix cache, 1 credits it fully).
	OverlapScoreCredit float64
	// PrefillLoadScale weighs prefill blocks against decode blocks in the cost.
	PrefillLoadScale float64
	// Temperature: 0 picks the cheapest worker; > 0 samples from a softmax over
	// normalised costs.
	Temperature float64
	// BlockSize is the engine's KV block size in tokens.
	BlockSize int
	// Load is the active-load accounting and admission (activeload.go); zero: Dynamo's default.
	Load LoadConfig `json:",omitempty"`
	// IndexConfig: how the router learns the workers' caches (KV events or its own
	// decisions), the overlap credit's decay, how many routers share the fleet, and session
	// affinity.
	IndexConfig
	// Tiers: the workers have host and disk KV tiers below the GPU cache, whose KV events
	// the overlap credit counts at these weights (tiers.go); nil: no lower tiers.
	Tiers *TierWeights `json:",omitempty"`
}

// DefaultConfig is Dynamo's default KV router: credit 1, scale 1, temperature 0, block 64.
func DefaultConfig() Config {
	return Config{Mode: ModeKV, OverlapScoreCredit: 1, PrefillLoadScale: 1, Temperature: 0, BlockSize: 64,
		IndexConfig: DefaultIndexConfig()}
}

// Validate reports the first bad knob by its config name.
func (c Config) Validate() error {
	if _, err := ParseMode(string(c.Mode)); err != nil {
		return err
	}
	for _, k := range []struct {
		name string
		v    float64
	}{
		{"overlap_score_credit", c.OverlapScoreCredit},
		{"prefill_load_scale", c.PrefillLoadScale},
		{"router_temperature", c.Temperature},
	} {
		if math.IsNaN(k.v) || math.IsInf(k.v, 0) {
			return fmt.Errorf("%s: %v is not a finite number", k.name, k.v)
		}
		if k.v < 0 {
			return fmt.Errorf("%s: %v is negative (must be >= 0)", k.name, k.v)
		}
	}
	if c.BlockSize <= 0 {
		return fmt.Errorf("block_size: %d must be a positive number of tokens", c.BlockSize)
	}
	if err := c.Load.validate(); err != nil {
		return err
	}
	if err := c.IndexConfig.validate(); err != nil {
		return err
	}
	if err := c.validateAffinity(); err != nil {
		return err
	}
	if c.Tiers != nil {
		if err := c.Tiers.validate(); err != nil {
			return err
		}
	}
	return c.replicasSupported()
}
