package config

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The example: the explorer's names work, and the GPU budget follows the fleet as
// in the explorer unless it is set too.
func TestSetExplorerNames(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"replicas=64", "layout=tp4·moe_tp4", "batched_tokens=8192", "max_num_seqs=256", "replay_concurrency=64"}); err != nil {
		t.Fatal(err)
	}
	pcs := f.list("parallel_configs").parallel
	want := ParallelConfig{TP: 4, AttentionDP: 1, MoETP: 4, MoEEP: 1, Replicas: 64}
	if len(pcs) != 1 || pcs[0] != want {
		t.Fatalf("parallel_configs = %+v, want %+v", pcs, want)
	}
	if f.GPUBudget != 256 || f.Workload.ReplayConcurrency != 64 ||
		f.Values("agg_max_num_batched_tokens")[0].Num != 8192 || f.Values("agg_max_num_seqs")[0].Num != 256 {
		t.Fatalf("budget %d, concurrency %d, tokens %v, seqs %v", f.GPUBudget, f.Workload.ReplayConcurrency,
			f.Values("agg_max_num_batched_tokens"), f.Values("agg_max_num_seqs"))
	}
	// A budget given with the fleet is a bound, not raised.
	err := Default().Apply([]string{"replicas=64", "gpu_budget=128"})
	if err == nil || !strings.Contains(err.Error(), "needs 256 GPUs, more than gpu_budget 128") {
		t.Fatalf("error = %v", err)
	}
	// So does a whole parallel_configs; with a budget given too, the error says how to allow it.
	pc := Default()
	if err := pc.Apply([]string{"parallel_configs=[{tp: 8, replicas: 8}]"}); err != nil || pc.GPUBudget != 64 {
		t.Fatalf("parallel_configs tp 8 × 8: budget %d, error %v; want 64, none", pc.GPUBudget, err)
	}
	err = Default().Apply([]string{"parallel_configs=[{tp: 8, replicas: 8}]", "gpu_budget=32"})
	if err == nil || !strings.Contains(err.Error(), "needs 64 GPUs, more than gpu_budget 32 (raise search_space.gpu_budget to 64, or --set gpu_budget=64, to allow it)") {
		t.Fatalf("error = %v", err)
	}
	// Lists give every combination.
	g := Default()
	if err := g.Apply([]string{"replicas=[8, 16]", "layout=[tp4·ep4, tp4·moe_tp4]"}); err != nil {
		t.Fatal(err)
	}
	if n := len(g.Values("parallel_configs")); n != 4 || g.GPUBudget != 64 {
		t.Fatalf("%d parallel configs, budget %d; want 4, 64", n, g.GPUBudget)
	}
}

func TestSetErrors(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"replica=64"}, "--set: search_space.replica: unknown key (did you mean replicas?)"},
		{[]string{"workload.replay_concurency=3"}, "--set: workload.replay_concurency: unknown key (did you mean workload.replay_concurrency?)"},
		{[]string{"router_mod=kv_router"}, "(did you mean router_mode?)"},
		// The knob named by its last word (issue 31): too far for an edit distance.
		{[]string{"temperature=0.5"}, "--set: search_space.temperature: unknown key (did you mean router_temperature?)"},
		{[]string{"credit=0.5"}, "unknown key (did you mean overlap_score_credit?)"},
		{[]string{"scale=2"}, "unknown key (did you mean prefill_load_scale?)"},
		{[]string{"mode=round_robin"}, "unknown key (did you mean router_mode?)"},
		{[]string{"gpu=h100_sxm"}, "unknown key (did you mean hardware_sku?)"},
		{[]string{"workers=16"}, "unknown key (did you mean replicas?)"},
		{[]string{"model_name=Foo/Bar"}, `--set: search_space.model_name: unknown model "Foo/Bar"; closest embedded: `},
		{[]string{"model_name=Llama-3.1-70"}, `unknown model "Llama-3.1-70"; closest embedded: meta-llama/Llama-3.1-70B,`},
		{[]string{"concurrency=8", "workload.replay_concurrency=16"}, "--set: workload.replay_concurrency: set twice"},
		{[]string{"layout=tp4·ep2"}, "moe_tp × moe_ep (2) must equal tp × dp (4)"},
		{[]string{"layout=tp4·xx2"}, `unknown part "xx2"`},
		{[]string{"replicas=0"}, "want an integer in [1, 1024]"},
		{[]string{"replicas=2000"}, "want an integer in [1, 1024]"},
	} {
		f := Default()
		before := f.Fingerprint()
		err := f.Apply(c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Apply(%q) error = %v, want %q", c.sets, err, c.want)
		}
		if d := Diff(before, f.Fingerprint()); len(d) > 0 || f.Name != "embedded defaults" {
			t.Errorf("Apply(%q) failed but changed the file: %v", c.sets, d)
		}
	}
}

// A model is named by its Hugging Face id or, as the explorer shows it, without its
// organisation in any case (issue 31: `--set model_name=MiniMax-M2.5` was refused).
func TestSetModelByShortName(t *testing.T) {
	for _, c := range []struct{ typed, want string }{
		{"MiniMax-M2.5", "MiniMaxAI/MiniMax-M2.5"}, {"minimax-m2.5", "MiniMaxAI/MiniMax-M2.5"},
		{"Qwen3-32B", "Qwen/Qwen3-32B"}, {"meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-70B"},
	} {
		f := Default()
		if err := f.Set("model_name=" + c.typed); err != nil {
			t.Fatalf("model_name=%s: %v", c.typed, err)
		}
		if f.ModelName != c.want {
			t.Errorf("model_name=%s: %q, want %q", c.typed, f.ModelName, c.want)
		}
	}
}

// A layout as the explorer names it, with its precision after it, is the layout and the
// quantization (issue 31: the explorer accepts the names its screen shows).
func TestSetLayoutWithPrecision(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"layout=tp2·ep2 nvfp4", "replicas=4"}); err != nil {
		t.Fatal(err)
	}
	if pc := f.Values("parallel_configs"); f.Quantization != "nvfp4" || len(pc) != 1 || pc[0].Text != (ParallelConfig{TP: 2, AttentionDP: 1, MoETP: 1, MoEEP: 2, Replicas: 4}).String() {
		t.Fatalf("quantization %q, parallel_configs %v", f.Quantization, pc)
	}
	if err := Default().Apply([]string{"layout=tp4·ep4 nvfp4", "quantization=fp8"}); err == nil || !strings.Contains(err.Error(), "set twice") {
		t.Fatalf("a precision in the layout and in quantization: %v", err)
	}
}

// The order of --set overrides never matters: every permutation of any subset of these gives
// the same experiment or, for the subsets that fail, the same error. The issue's own example
// (gpu_budget before parallel_configs worked, after it failed) is among them.
func TestSetOrderNeverMatters(t *testing.T) {
	all := []string{
		"gpu_budget=256", "parallel_configs=[{tp: 4, moe_ep: 4, replicas: 64}]", "replicas=[16, 32]",
		"layout=tp4·moe_tp4", "router_mode=round_robin", "batched_tokens=[8192, 16384]",
		"workload.replay_concurrency=8", "prefill_load_scale=[1, 32]", "gpu_budget=64", "replicas=128",
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, len(all)).Draw(t, "n")
		subset := rapid.Permutation(all).Draw(t, "subset")[:n]
		slices.Sort(subset)
		ref := Default()
		refErr := ref.Apply(subset)
		perm := rapid.Permutation(subset).Draw(t, "order")
		f := Default()
		err := f.Apply(perm)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%q: error %v; sorted %q: error %v", perm, err, subset, refErr)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "set twice") && err.Error() != refErr.Error() {
				t.Fatalf("%q: %v; sorted: %v", perm, err, refErr)
			}
			return
		}
		if d := Diff(ref.Fingerprint(), f.Fingerprint()); len(d) > 0 || f.GPUBudget != ref.GPUBudget {
			t.Fatalf("%q differs from %q: %v, budget %d vs %d", perm, subset, d, f.GPUBudget, ref.GPUBudget)
		}
	})
	// The report, both orders.
	for _, sets := range [][]string{{all[0], all[1]}, {all[1], all[0]}} {
		if err := Default().Apply(sets); err != nil {
			t.Errorf("%q: %v", sets, err)
		}
	}
}

// FuzzApply: any --set strings leave the file valid and unchanged on error, never panic; on
// success the result is the same in reverse order.
func FuzzApply(f *testing.F) {
	for _, s := range [][2]string{
		{"replicas=64", "layout=tp4·moe_tp4"}, {"gpu_budget=256", "parallel_configs=[{tp: 4, moe_ep: 4, replicas: 64}]"},
		{"replicas=[8, 16]", "batched_tokens=8192"}, {"goal.sla.ttft_ms=200", "goal.sla={tpot_ms: 12}"},
		{"layout=tp0", "replica=3"}, {"concurrency=8", "replay_concurrency=9"}, {"=", "x"},
		{"layout=tp2·ep2 nvfp4", "model_name=MiniMax-M2.5"}, {"layout=tp4", "model_name=Foo/Bar"}, {"temperature=1", "credit=0"},
		{"use_kv_events=false", "router_predicted_ttl_secs=5"}, {"router_replicas=[1, 4]", "router_replica_sync_delay_ms=2.5"},
	} {
		f.Add(s[0], s[1])
	}
	// A fingerprint carries the simulator's digest, computed once per process in seconds;
	// computing it here keeps it out of the first input's time, which a fuzz worker bounds.
	Default().Fingerprint()
	f.Fuzz(func(t *testing.T, a, b string) {
		g := Default()
		before := g.Fingerprint()
		err := g.Apply([]string{a, b})
		if err != nil {
			if d := Diff(before, g.Fingerprint()); len(d) > 0 {
				t.Fatalf("Apply(%q, %q) failed (%v) but changed %v", a, b, err, d)
			}
			return
		}
		if err := g.check(); err != nil {
			t.Fatalf("Apply(%q, %q) left an invalid file: %v", a, b, err)
		}
		h := Default()
		if err := h.Apply([]string{b, a}); err != nil {
			t.Fatalf("Apply(%q, %q) succeeds but the reverse order fails: %v", a, b, err)
		}
		if d := Diff(g.Fingerprint(), h.Fingerprint()); len(d) > 0 || g.GPUBudget != h.GPUBudget {
			t.Fatalf("order matters for %q, %q: %v", a, b, d)
		}
	})
}
