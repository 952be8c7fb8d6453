package router

import (
	"fmt"
	"math"
	"strings"
)

// Mode names a routing policy, spelled as Dynamo's router_mode knob.
type Mode string

// The routing policies.
const (
	// ModeKV is Dynamo's KV-cache-aware router: lowest prefill-plus-decode block cost.
	ModeKV Mode = "kv_router"
	// ModeRoundRobin cycles through the workers in id order.
	ModeRoundRobin Mode = "round_robin"
	// ModeRandom picks a worker uniformly at random (seeded).
	ModeRandom Mode = "random"
	// ModeLeastLoaded picks the worker with the fewest in-flight requests.
	ModeLeastLoaded Mode = "least_loaded"
)

// Modes lists every routing policy in a fixed order (for help text and menus).
func Modes() []Mode { return []Mode{ModeKV, ModeRoundRobin, ModeRandom, ModeLeastLoaded} }

// ParseMode accepts a router_mode value; "kv", "round-robin" and friends are accepted too,
// since Dynamo's CLI spells them that way.
func ParseMode(s string) (Mode, error) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_") {
	case "kv_router", "kv":
		return ModeKV, nil
	case "round_robin":
		return ModeRoundRobin, nil
	case "random":
		return ModeRandom, nil
	case "least_loaded":
		return ModeLeastLoaded, nil
	}
	return "", fmt.Errorf("router_mode: unknown mode %q (want one of %s)", s, modeList())
}

func modeList() string {
	names := make([]string, 0, 4)
	for _, m := range Modes() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
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
}

// DefaultConfig is Dynamo's default KV router: credit 1, scale 1, temperature 0, block 64.
func DefaultConfig() Config {
	return Config{Mode: ModeKV, OverlapScoreCredit: 1, PrefillLoadScale: 1, Temperature: 0, BlockSize: 64}
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
	return nil
}
