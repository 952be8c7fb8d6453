package config

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/engine"
)

// split is a disaggregated parallel_configs of the seed's layout: one prefill, one decode
// worker.
const split = "parallel_configs=[{prefill: {tp: 4, moe_ep: 4, replicas: 1}, decode: {tp: 4, moe_ep: 4, replicas: 1}}]"

// disaggConfig is the default file made disaggregated (split) with sets applied, its
// experiment and the engine configuration of its default point.
func disaggConfig(t *testing.T, sets ...string) (*File, *Experiment, engine.Config) {
	t.Helper()
	f := Default()
	if err := f.Apply(append([]string{"deployment_mode=disagg", split}, sets...)); err != nil {
		t.Fatal(err)
	}
	e, err := NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := e.EngineConfig(f.DefaultPoint())
	if err != nil {
		t.Fatal(err)
	}
	return f, e, cfg
}

// A disaggregated file builds each pool's deployment from its own keys, replays, and enters
// the fingerprint with its settings, which an aggregated file's fingerprint never holds.
func TestDisaggFileReplays(t *testing.T) {
	f, e, cfg := disaggConfig(t, "decode_max_num_seqs=64", "prefill_max_num_batched_tokens=8192",
		"kv_transfer_bandwidth=100", "kv_transfer_timing_mode=destination_missing", "decode_enable_prefix_caching=true")
	dg := cfg.Disagg
	switch {
	case dg == nil || cfg.Workers != 1 || dg.DecodeWorkers != 1:
		t.Fatalf("config %+v: want one prefill and one decode worker", cfg)
	case cfg.Worker.MaxNumBatchedTokens != 8192 || cfg.Worker.MaxNumSeqs != 256 || cfg.Worker.NoPrefixCaching:
		t.Fatalf("prefill deployment %+v", cfg.Worker)
	case dg.Decode.MaxNumBatchedTokens != 8192 || dg.Decode.MaxNumSeqs != 64 || dg.Decode.NoPrefixCaching:
		t.Fatalf("decode deployment %+v", dg.Decode)
	case dg.TransferGBps != 100 || dg.TransferMode != "destination_missing":
		t.Fatalf("transfer %+v", *dg)
	case dg.KVBytesPerToken != 62*2*8*128: // MiniMax-M2.5: 62 layers, 8 KV heads of 128, FP8 cache
		t.Fatalf("KV bytes per token %d, want %d", dg.KVBytesPerToken, 62*2*8*128)
	}
	rep, err := e.Run(context.Background(), cfg, 200)
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Summary; s.RequestsCompleted != 200 || s.Disagg == nil || s.Disagg.Prefill.Requests != 200 || s.Disagg.Decode.Requests != 200 {
		t.Fatalf("summary %+v", s)
	}
	fp := f.Fingerprint()
	for _, kv := range [][2]string{{"search_space.deployment_mode", "disagg"}, {"search_space.kv_transfer_bandwidth", "100"},
		{"search_space.decode_max_num_seqs", "64"}, {"search_space.decode_enable_prefix_caching", "true"}} {
		if v, ok := fp.Get(kv[0]); !ok || v != kv[1] {
			t.Fatalf("fingerprint %s = %q, want %q", kv[0], v, kv[1])
		}
	}
	for _, s := range Default().Fingerprint() {
		if strings.HasPrefix(s.Key, "search_space.prefill_m") || strings.Contains(s.Key, "_block_size") && s.Key != "workload.trace_block_size" || strings.Contains(s.Key, "decode_") || strings.Contains(s.Key, "kv_transfer") || strings.Contains(s.Key, "prefix_caching") {
			t.Fatalf("an aggregated file's fingerprint holds %s", s.Key)
		}
	}
}

// num_gpu_blocks pins both pools' capacity (DynoSim's sweep example pins 20,000 blocks for
// every TP shape), and the handoff still prices the model's KV bytes per token.
func TestDisaggPinnedBlocks(t *testing.T) {
	_, _, cfg := disaggConfig(t, "num_gpu_blocks=20000")
	if dg := cfg.Disagg; cfg.Worker.NumGPUBlocks != 20000 || dg.Decode.NumGPUBlocks != 20000 || dg.KVBytesPerToken != 62*2*8*128 {
		t.Fatalf("prefill %d, decode %d blocks, KV bytes per token %d", cfg.Worker.NumGPUBlocks, dg.Decode.NumGPUBlocks, dg.KVBytesPerToken)
	}
}

// Every inconsistent disaggregated file is an error naming the key.
func TestDisaggErrors(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"deployment_mode=disagg"}, "parallel_configs: deployment_mode disagg needs entries"},
		{[]string{"deployment_mode=[agg, disagg]"}, "parallel_configs: deployment_mode disagg needs entries"},
		{[]string{"deployment_mode=[agg, disagg]", split}, "parallel_configs: deployment_mode agg needs aggregated entries"},
		{[]string{split}, "deployment_mode: parallel_configs holds disaggregated entries {prefill, decode}: add disagg"},
		{[]string{"deployment_mode=disagg", "parallel_configs=[{tp: 4, moe_ep: 4, replicas: 2}, {prefill: {tp: 4, moe_ep: 4}, decode: {tp: 4, moe_ep: 4}}]"}, "parallel_configs holds aggregated entries {tp, replicas, …}: add agg"},
		{[]string{"deployment_mode=disagg", "parallel_configs=[{prefill: {tp: 4}}]"}, "needs both prefill and decode"},
		{[]string{"deployment_mode=disagg", "parallel_configs=[{prefill: {tp: 4, bogus: 1}, decode: {tp: 4}}]"}, "parallel_configs.prefill.bogus: unknown key"},
		{[]string{"deployment_mode=disagg", "parallel_configs=[{prefill: {tp: 4}, decode: 3}]"}, "parallel_configs.decode: want a mapping"},
		{[]string{"deployment_mode=disagg", split, "backend=trtllm"}, "trtllm in a disaggregated fleet"},
		{[]string{"deployment_mode=disagg", split, "replicas=2"}, "this file's fleet is disaggregated"},
		{[]string{"deployment_mode=disagg", split, "kv_transfer_timing_mode=lazy"}, "kv_transfer_timing_mode"},
		{[]string{"deployment_mode=disagg", split, "kv_transfer_bandwidth=-1"}, "kv_transfer_bandwidth"},
		{[]string{"deployment_mode=disagg", split, "decode_max_num_seqs=0"}, "decode_max_num_seqs"},
		{[]string{"deployment_mode=disagg", "parallel_configs=[{prefill: {tp: 4, moe_ep: 4, replicas: 8}, decode: {tp: 4, moe_ep: 4, replicas: 1}}]"}, "36 GPUs, more than gpu_budget 32"},
	} {
		err := Default().Apply(c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.sets, err, c.want)
		}
	}
	// Different block sizes per pool reach the engine, which refuses them by name.
	f := Default()
	if err := f.Apply([]string{"deployment_mode=disagg", split, "decode_block_size=32"}); err != nil {
		t.Fatal(err)
	}
	e, err := NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := e.EngineConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background(), cfg, 10); err == nil || !strings.Contains(err.Error(), "decode_block_size: 32 differs from prefill_block_size 64") {
		t.Fatalf("block sizes 64 and 32: %v", err)
	}
}

// Both modes listed with entries of both kinds: one branch per mode, the aggregated entries
// first; each value builds its own mode's engine.
func TestBothModesListed(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"deployment_mode=[disagg, agg]",
		"parallel_configs=[{prefill: {tp: 4, moe_ep: 4, replicas: 2}, decode: {tp: 4, moe_ep: 4, replicas: 2}}, {tp: 4, moe_ep: 4, replicas: 4}]"}); err != nil {
		t.Fatal(err)
	}
	vals := f.Values("parallel_configs")
	if len(vals) != 2 || f.ModeOf(vals[0].Text) != ModeAgg || f.ModeOf(vals[1].Text) != ModeDisagg || f.Dimensions()[0].Key != "parallel_configs" || slices.ContainsFunc(f.Dimensions(), func(d Dimension) bool { return d.Key == "deployment_mode" }) {
		t.Fatalf("values %v, dimensions %v", vals, f.Dimensions())
	}
	e, err := NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ workers, decode int }{{4, 0}, {2, 2}} {
		p := make(Point, len(f.Dimensions()))
		p[0] = i
		cfg, err := e.EngineConfig(p)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Workers != want.workers || (cfg.Disagg == nil) != (want.decode == 0) || cfg.Disagg != nil && cfg.Disagg.DecodeWorkers != want.decode {
			t.Errorf("value %d: %d workers, disagg %+v; want %+v", i, cfg.Workers, cfg.Disagg, want)
		}
	}
}

// Derived with deployment_mode disagg: every pair of kept shapes and replica counts within the
// budget, each pair within it, and the default the reference's default request projected onto
// the pairs; with both modes, the aggregated fleets come first.
func TestDerivedDisagg(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"deployment_mode=disagg", "parallel_configs=[]", "gpu_budget=8"}); err != nil {
		t.Fatal(err)
	}
	l := f.list("parallel_configs")
	if !f.DerivedParallel() || len(l.parallel) != 0 || len(l.disagg) != 44 {
		t.Fatalf("derived %v: %d aggregated, %d disaggregated", f.DerivedParallel(), len(l.parallel), len(l.disagg))
	}
	for _, dp := range l.disagg {
		if dp.GPUs() > 8 || dp.Prefill.GPUs() < 2 || dp.Decode.GPUs() < 2 {
			t.Errorf("%s: %d GPUs", dp, dp.GPUs())
		}
	}
	if v, _ := f.At(f.DefaultPoint(), "parallel_configs"); v.Text != "prefill-tp2-dp1-moetp1-ep2-x2+decode-tp2-dp1-moetp1-ep2-x2" {
		t.Errorf("default %s", v.Text)
	}
	both := Default()
	if err := both.Apply([]string{"deployment_mode=[agg, disagg]", "parallel_configs=[]", "gpu_budget=8"}); err != nil {
		t.Fatal(err)
	}
	vals := both.Values("parallel_configs")
	if len(vals) != 56 || both.ModeOf(vals[11].Text) != ModeAgg || both.ModeOf(vals[12].Text) != ModeDisagg {
		t.Fatalf("%d values", len(vals))
	}
	if v, _ := both.At(both.DefaultPoint(), "parallel_configs"); both.ModeOf(v.Text) != ModeAgg {
		t.Errorf("default %s: want the first mode's (agg)", v.Text)
	}
}

// Under any budgets and mode list, the derived values are the aggregated fleets then the
// splits, each within [min_gpu_budget, gpu_budget], each value's mode its entry's kind, and
// each branch's projector as long as its part of the list.
func TestDerivedBranchesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		budget := rapid.IntRange(4, 16).Draw(t, "budget")
		lo := rapid.IntRange(1, budget).Draw(t, "min")
		modes := rapid.SampledFrom([]string{"agg", "disagg", "[agg, disagg]", "[disagg, agg]"}).Draw(t, "modes")
		f := Default()
		err := f.Apply([]string{"deployment_mode=" + modes, "parallel_configs=[]", "gpu_budget=" + strconv.Itoa(budget), "min_gpu_budget=" + strconv.Itoa(lo)})
		if err != nil {
			if !strings.Contains(err.Error(), "no parallel configuration") {
				t.Fatal(err)
			}
			return
		}
		l := f.list("parallel_configs")
		if f.hasMode(ModeAgg) == (len(l.parallel) == 0) || f.hasMode(ModeDisagg) == (len(l.disagg) == 0) {
			t.Fatalf("%s: %d aggregated, %d disaggregated", modes, len(l.parallel), len(l.disagg))
		}
		for i, v := range l.values {
			g, want := 0, ModeAgg
			if i < len(l.parallel) {
				g = l.parallel[i].GPUs()
			} else {
				g, want = l.disagg[i-len(l.parallel)].GPUs(), ModeDisagg
			}
			if g < lo || g > budget || f.ModeOf(v.Text) != want {
				t.Fatalf("%s: %d GPUs, mode %s", v.Text, g, f.ModeOf(v.Text))
			}
		}
		brs, err := f.Branches()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range brs {
			if b.First != n {
				t.Fatalf("branch %s starts at %d, want %d", b.Mode, b.First, n)
			}
			n += b.Projector.Len()
		}
		if n != len(l.values) {
			t.Fatalf("branches cover %d of %d values", n, len(l.values))
		}
	})
}

// KV tiers are refused at a disaggregated point, naming the key (the experiment builds its
// points' configurations, so it is refused there).
func TestDisaggPointRefusesTiers(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"deployment_mode=disagg", split, "num_g2_blocks=32768"}); err != nil {
		t.Fatal(err)
	}
	_, err := NewExperiment(f)
	if want := "search_space.num_g2_blocks: KV tiers are not modelled for a disaggregated fleet"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// router_conditional_disagg (off by default) reaches the engine with its isl_bounding
// thresholds and the fingerprint only when on; it needs a disaggregated fleet and kv_router.
func TestConditionalDisaggKeys(t *testing.T) {
	f, e, cfg := disaggConfig(t, "router_mode=kv_router", "decode_enable_prefix_caching=true",
		"router_conditional_disagg=true", "router_conditional_disagg_eff_isl_threshold=4096")
	if c := cfg.Disagg.Conditional; c == nil || *c != (engine.ConditionalDisagg{EffISLThreshold: 4096, EffISLRatioThreshold: 0.7}) {
		t.Fatalf("conditional %+v, want thresholds 4096 and 0.7", c)
	}
	if v, ok := f.Fingerprint().Get("search_space.router_conditional_disagg_eff_isl_threshold"); !ok || v != "4096" {
		t.Fatalf("fingerprint: eff_isl_threshold %q", v)
	}
	rep, err := e.Run(context.Background(), cfg, 200)
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Summary.Disagg; s.Prefill.Requests+s.Bypassed != 200 || s.Decode.Requests != 200 {
		t.Fatalf("disagg summary %+v: every request prefilled once and decoded", *s)
	}
	off, _, cfg := disaggConfig(t, "router_mode=kv_router")
	if _, ok := off.Fingerprint().Get("search_space.router_conditional_disagg"); ok || cfg.Disagg.Conditional != nil {
		t.Fatalf("off: conditional %+v in the engine or the fingerprint", cfg.Disagg.Conditional)
	}
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"deployment_mode=disagg", split, "router_conditional_disagg=true"}, "router_conditional_disagg: needs router_mode kv_router only"},
		{[]string{"router_mode=kv_router", "router_conditional_disagg=true"}, "router_conditional_disagg: needs a disaggregated fleet"},
		{[]string{"deployment_mode=disagg", split, "router_mode=kv_router", "router_conditional_disagg=true", "router_conditional_disagg_eff_isl_ratio_threshold=1.5"}, "router_conditional_disagg_eff_isl_ratio_threshold"},
		{[]string{"deployment_mode=disagg", split, "router_mode=kv_router", "router_conditional_disagg=true", "router_conditional_disagg_eff_isl_threshold=-1"}, "router_conditional_disagg_eff_isl_threshold"},
		{[]string{"deployment_mode=disagg", split, "router_mode=kv_router", "router_conditional_disagg=maybe"}, "router_conditional_disagg"},
	} {
		err := Default().Apply(c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.sets, err, c.want)
		}
	}
}
