package config

import (
	"strings"
	"testing"

	"github.com/routerlab/routerlab/router"
)

// The tier knobs: off by default (no tiers, fingerprint as before), --set reaches the
// engine and the router with the block's bytes from the model's per-GPU KV arithmetic
// (MiniMax-M2.5 on B200 TP4, FP8: 31,744 B per token per GPU × 64 tokens), only a changed
// knob enters the fingerprint, and a weight outside [0, 1] is refused by name.
func TestTierKnobs(t *testing.T) {
	_, cfg, _ := seedRun(t)
	if cfg.KVTiers != nil || cfg.Router.Tiers != nil {
		t.Fatalf("tiers on by default: %+v %+v", cfg.KVTiers, cfg.Router.Tiers)
	}
	f, cfg, _ := seedRun(t, "num_g2_blocks=32768", "disk_cache_hit_weight=0.5")
	kt := cfg.KVTiers
	if kt == nil || kt.NumG2Blocks != 32768 || kt.BlockBytes != 64*31744 || kt.G1ToG2GBps != 14 || kt.G2ToG1GBps != 14 || kt.OffloadBatchSize != 32 || kt.NumG3Blocks != 0 {
		t.Fatalf("tiers %+v", kt)
	}
	if w := cfg.Router.Tiers; w == nil || *w != (router.TierWeights{Host: 0.75, Disk: 0.5}) {
		t.Fatalf("router weights %+v", w)
	}
	if d := Diff(Default().Fingerprint(), f.Fingerprint()); len(d) != 2 {
		t.Errorf("fingerprint changes %v, want num_g2_blocks and disk_cache_hit_weight", d)
	}
	_, cfg, _ = seedRun(t, "num_g2_blocks=100", "kv_bytes_per_token=1000")
	if cfg.KVTiers.BlockBytes != 64000 {
		t.Errorf("kv_bytes_per_token override: block of %d bytes, want 64000", cfg.KVTiers.BlockBytes)
	}
	for _, s := range []string{"host_cache_hit_weight=1.5", "disk_cache_hit_weight=-0.1", "num_g2_blocks=1.5", "offload_batch_size=0", "bandwidth_g2_to_g1_gbps=-1"} {
		key, _, _ := strings.Cut(s, "=")
		if err := Default().Set(s); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v", s, err)
		}
	}
	// Only vLLM's scheduler has the tiers: another backend beside G2 is refused by name.
	for _, b := range []string{"sglang", "trtllm"} {
		err := Default().Apply([]string{"num_g2_blocks=32768", "backend=" + b})
		if err == nil || !strings.Contains(err.Error(), "search_space.num_g2_blocks") || !strings.Contains(err.Error(), "backend "+b) {
			t.Errorf("backend %s with G2: %v", b, err)
		}
	}
	if err := Default().Apply([]string{"num_g2_blocks=0", "backend=sglang"}); err != nil {
		t.Errorf("backend sglang with G2 off: %v", err)
	}
}

// Every tier knob but num_g2_blocks is moot without G2, as Spica searches them only with
// offload on; the G3 ones without G3.
func TestTierKnobIgnored(t *testing.T) {
	f := Default()
	setAll(t, f, "num_g2_blocks=[0, 1000]", "num_g3_blocks=[0, 2000]", "host_cache_hit_weight=[0.5, 1]", "disk_cache_hit_weight=[0, 0.5]")
	point := func(vals map[string]int) Point { return pointOf(f, vals) }
	off := point(map[string]int{})
	if IndexKnobIgnored(f, off, KeyNumG2Blocks) || !IndexKnobIgnored(f, off, KeyHostCacheHitWeight) || !IndexKnobIgnored(f, off, KeyNumG3Blocks) {
		t.Error("offload off: every tier knob but num_g2_blocks should be moot")
	}
	g2 := point(map[string]int{KeyNumG2Blocks: 1})
	if IndexKnobIgnored(f, g2, KeyHostCacheHitWeight) || !IndexKnobIgnored(f, g2, KeyDiskCacheHitWeight) {
		t.Error("G2 without G3: the host weight counts, the disk weight is moot")
	}
	g3 := point(map[string]int{KeyNumG2Blocks: 1, KeyNumG3Blocks: 1})
	if IndexKnobIgnored(f, g3, KeyDiskCacheHitWeight) || IndexKnobIgnored(f, g3, KeyBandwidthG3ToG2) {
		t.Error("G2 and G3: the disk knobs count")
	}
}

// pointOf is the point of f taking, in each dimension, the value index vals gives its key (0
// for keys it leaves out).
func pointOf(f *File, vals map[string]int) Point {
	dims := f.Dimensions()
	p := make(Point, len(dims))
	for i, d := range dims {
		p[i] = vals[d.Key]
	}
	return p
}
