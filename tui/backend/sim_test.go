package backend

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/tui"
)

// smallExperiment is the embedded seed, with the --set overrides sets, on the first requests
// of the built-in trace.
func smallExperiment(t testing.TB, requests int, sets ...string) (*config.Experiment, *Sim) {
	t.Helper()
	f := config.Default()
	for _, set := range sets {
		if err := f.Set(set); err != nil {
			t.Fatal(err)
		}
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSim(exp, requests)
	if err != nil {
		t.Fatal(err)
	}
	return exp, s
}

func TestSimulateKVRouterBeatsRoundRobinOnReuse(t *testing.T) {
	_, s := smallExperiment(t, 300)
	k := s.Initial()
	seed := tui.Deployment{Replicas: 8, Layout: "tp4·ep4", MaxBatchedTokens: 16384, MaxSeqs: 512, KVCacheDtype: "fp8",
		Model: "MiniMaxAI/MiniMax-M2.5", GPU: "b200_sxm"}
	dynamo := tui.LoadKnobs{"true", "true", "true", "false", "1", "none", "none", "fcfs", "none", "none", "none"}
	index := tui.IndexKnobs{TTLSecs: 120, Routers: 1, HostWeight: 0.75, DiskWeight: 0.25} // Dynamo's default: events on, one router, no tiers
	if k != (tui.Knobs{Mode: "kv_router", Credit: 1, Scale: 1, Temperature: 0, Concurrency: 32, Speedup: 1, Deployment: seed, Load: dynamo, Index: index}) {
		t.Fatalf("initial knobs = %+v, want Dynamo's default KV router at c=32 on the seed's deployment", k)
	}
	kv, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	k.Mode = "round_robin"
	rr, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !kv.Final || kv.Metrics.Completed != 300 || rr.Metrics.Completed != 300 {
		t.Fatalf("completed: kv %d rr %d", kv.Metrics.Completed, rr.Metrics.Completed)
	}
	if kv.Metrics.PrefixReuse <= rr.Metrics.PrefixReuse {
		t.Errorf("prefix reuse kv %.3f <= round robin %.3f", kv.Metrics.PrefixReuse, rr.Metrics.PrefixReuse)
	}
	for _, r := range []tui.Result{kv, rr} {
		f := r.Fleet
		if f.Workers() != 8 || len(f.HitRatio) != 8 || len(f.ActiveBlocks[0]) == 0 || len(f.ActiveBlocks[0]) > Columns {
			t.Fatalf("fleet %d workers × %d windows", f.Workers(), len(f.ActiveBlocks[0]))
		}
		if len(r.TTFTOverTime) != len(f.ActiveBlocks[0]) {
			t.Errorf("TTFT series has %d windows, heatmap %d", len(r.TTFTOverTime), len(f.ActiveBlocks[0]))
		}
	}
	// The prefix-hit heatmap shows the same story: higher under the KV router.
	if a, b := meanCell(kv.Fleet.HitRatio), meanCell(rr.Fleet.HitRatio); a <= b {
		t.Errorf("mean windowed prefix-hit ratio kv %.3f <= round robin %.3f", a, b)
	}
	// With the first run's duration as the hint, the second run fills about Columns windows.
	if n := len(rr.Fleet.ActiveBlocks[0]); n < Columns/2 {
		t.Errorf("hinted run has only %d windows", n)
	}
	t.Logf("kv: reuse %.3f ttft %.1f · rr: reuse %.3f ttft %.1f · %d windows", kv.Metrics.PrefixReuse, kv.Metrics.TTFT.Mean, rr.Metrics.PrefixReuse, rr.Metrics.TTFT.Mean, len(rr.Fleet.ActiveBlocks[0]))
}

func meanCell(m [][]float64) float64 {
	sum, n := 0.0, 0
	for _, row := range m {
		for _, v := range row {
			if !math.IsNaN(v) {
				sum += v
				n++
			}
		}
	}
	return sum / float64(n)
}

func TestHitRatioIsTokenWeightedPerArrivalWindow(t *testing.T) {
	recs := []engine.RequestRecord{
		{Worker: 0, ArrivalMS: 10, InputLength: 1000, CachedTokens: 500},
		{Worker: 0, ArrivalMS: 90, InputLength: 3000, CachedTokens: 3000},
		{Worker: 1, ArrivalMS: 150, InputLength: 100, CachedTokens: 0},
		{Worker: 1, ArrivalMS: 999, InputLength: 100, CachedTokens: 100}, // past the end: last window
	}
	got := hitRatio(recs, 2, 2, 100)
	if got[0][0] != 3500.0/4000 || !math.IsNaN(got[0][1]) || !math.IsNaN(got[1][0]) || got[1][1] != 0.5 {
		t.Fatalf("hitRatio = %v", got)
	}
}

func TestSimulateIsDeterministicAndCancellable(t *testing.T) {
	_, s := smallExperiment(t, 200)
	k := s.Initial()
	k.Credit, k.Scale, k.Temperature, k.Concurrency = 0.5, 2, 0.5, 16
	a, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, func(tui.Result) {})
	if err != nil {
		t.Fatal(err)
	}
	if a.Metrics != b.Metrics {
		t.Fatalf("same knobs, different metrics:\n%+v\n%+v", a.Metrics, b.Metrics)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Simulate(ctx, tui.Run{Knobs: k}, nil); err == nil {
		t.Fatal("cancelled run returned no error")
	}
	k.Mode = "fastest"
	if _, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil); err == nil {
		t.Fatal("unknown router mode accepted")
	}
}

func TestSpaceOffersTheSeedValues(t *testing.T) {
	_, s := smallExperiment(t, 10, "overlap_score_credit=0.7")
	sp := s.Space()
	if len(sp.Modes) != 6 || sp.Modes[0] != "kv_router" || sp.Modes[1] != "round_robin" {
		t.Errorf("modes %v", sp.Modes)
	}
	want := []float64{0, 0.5, 0.7, 1}
	if len(sp.Credits) != len(want) {
		t.Fatalf("credits %v, want %v (the single value widened by the seed's list)", sp.Credits, want)
	}
	for i := range want {
		if sp.Credits[i] != want[i] {
			t.Fatalf("credits %v, want %v", sp.Credits, want)
		}
	}
	if s.Initial().Credit != 0.7 {
		t.Errorf("a fixed knob should start at its value, got %v", s.Initial().Credit)
	}
	if len(sp.Scales) != 9 || sp.Concurrencies[0] != 1 {
		t.Errorf("scales %v concurrencies %v", sp.Scales, sp.Concurrencies)
	}
	// Deployment ladders: every embedded layout of the seed's model on its GPU, by GPUs per
	// worker, the checkpoint's precision before NVFP4, expert before tensor parallel
	// experts; replicas up to the router's limit, the vLLM budgets around the seed's.
	layouts := []string{"tp1 nvfp4", "tp2·ep2", "tp2·moe_tp2", "tp2·ep2 nvfp4", "tp2·moe_tp2 nvfp4",
		"tp4·ep4", "tp4·moe_tp4", "tp4·ep4 nvfp4", "tp4·moe_tp4 nvfp4", "tp8·moe_tp8 nvfp4"}
	if !slices.Equal(sp.Layouts, layouts) || sp.Replicas[0] != 1 || sp.Replicas[len(sp.Replicas)-1] != router.MaxWorkers ||
		!slices.Contains(sp.BatchedTokens, 16384) || !slices.Contains(sp.Seqs, 512) || !slices.Equal(sp.KVCacheDtypes, []string{"fp8", "bf16"}) {
		t.Errorf("deployment ladders: layouts %v replicas %v tokens %v seqs %v", sp.Layouts, sp.Replicas, sp.BatchedTokens, sp.Seqs)
	}
}

// Every deployment knob reaches the simulation: a what-if changes the fleet or the step
// model the way its setting says.
func TestDeploymentKnobsReachTheSimulation(t *testing.T) {
	_, s := smallExperiment(t, 300)
	base := s.Initial()
	run := func(k tui.Knobs) tui.Result {
		t.Helper()
		r, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ref := run(base)
	k := base
	k.Deployment.Replicas = 2
	if r := run(k); r.Fleet.Workers() != 2 || r.Metrics.TTFT.Mean <= ref.Metrics.TTFT.Mean {
		t.Errorf("2 replicas: %d worker rows, TTFT %.1f vs %.1f ms at 8", r.Fleet.Workers(), r.Metrics.TTFT.Mean, ref.Metrics.TTFT.Mean)
	}
	for _, change := range []func(*tui.Deployment){
		func(d *tui.Deployment) { d.Layout = "tp4·moe_tp4" },
		func(d *tui.Deployment) { d.MaxBatchedTokens = 2048 },
		func(d *tui.Deployment) { d.Async = true },
		func(d *tui.Deployment) { d.KVCacheDtype = "bf16" },
	} {
		k := base
		change(&k.Deployment)
		cfg, _, err := s.Config(k)
		if err != nil {
			t.Fatal(err)
		}
		d := cfg.Worker
		if d.MoETP*d.MoEEP != 4 || (k.Deployment.Layout == "tp4·moe_tp4") != (d.MoETP == 4) ||
			d.MaxNumBatchedTokens != k.Deployment.MaxBatchedTokens || d.AsyncScheduling != k.Deployment.Async ||
			d.KVCacheDtype != k.Deployment.KVCacheDtype || d.NumGPUBlocks <= 0 {
			t.Errorf("knobs %+v → deployment %+v", k.Deployment, d)
		}
		if r := run(k); r.Metrics == ref.Metrics {
			t.Errorf("knobs %+v: same metrics as the seed deployment", k.Deployment)
		}
	}
	k = base
	k.Deployment.Layout = "tp8·ep8"
	if _, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil); err == nil {
		t.Error("unknown layout accepted")
	}
}

// The explorer opens where `routerlab replay` runs: Dynamo's default point when the lists
// offer it (kv_router even when listed second, credit 1, scale 1, T 0), else the first value.
func TestInitialIsReplaysDefaultPoint(t *testing.T) {
	_, s := smallExperiment(t, 50, "router_mode=[round_robin, kv_router]", "overlap_score_credit=[0.0, 0.5, 1.0]",
		"prefill_load_scale=[0.0, 2.0]", "router_temperature=[0.5, 0.0]")
	k := s.Initial()
	if k.Mode != "kv_router" || k.Credit != 1 || k.Scale != 0 || k.Temperature != 0 {
		t.Fatalf("initial knobs %+v, want kv_router, credit 1, scale 0 (1 not offered), T 0", k)
	}
}

// The explorer's model and GPU knobs offer every embedded model and GPU, and a point on
// another model and GPU is priced from that one's tables (a dense model on its dense layout).
func TestExplorerSwitchesModelAndGPU(t *testing.T) {
	f := config.Default()
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSim(exp, 50)
	if err != nil {
		t.Fatal(err)
	}
	sp := s.Space()
	if !slices.Contains(sp.Models, "meta-llama/Llama-3.1-70B") || !slices.Contains(sp.GPUs, "h200_sxm") || len(sp.GPUs) != 4 {
		t.Fatalf("models %v, GPUs %v", sp.Models, sp.GPUs)
	}
	k := s.Initial()
	if k.Deployment.Model != "MiniMaxAI/MiniMax-M2.5" || k.Deployment.GPU != "b200_sxm" {
		t.Fatalf("initial deployment %+v", k.Deployment)
	}
	seed, w0, err := s.Config(k)
	if err != nil {
		t.Fatal(err)
	}
	k.Deployment.Model, k.Deployment.GPU, k.Deployment.Layout = "meta-llama/Llama-3.1-70B", "h200_sxm", "tp4"
	cfg, w, err := s.Config(k)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Worker.ModelName != "meta-llama/Llama-3.1-70B" || cfg.Worker.HardwareSKU != "h200_sxm" || w.Table().LLM.MoE() || w == w0 {
		t.Fatalf("worker %+v, table %s", cfg.Worker, w.Table().Model)
	}
	if cfg.Worker.NumGPUBlocks == seed.Worker.NumGPUBlocks {
		t.Fatalf("the same %d KV blocks for another model and GPU", cfg.Worker.NumGPUBlocks)
	}
	k.Deployment.Layout = "tp4·ep4"
	if _, _, err := s.Config(k); err == nil || !strings.Contains(err.Error(), `meta-llama/Llama-3.1-70B on h200_sxm has no layout "tp4·ep4" (it has: tp1 fp8, tp2 fp8, tp4, tp4 fp8, tp8, tp8 fp8)`) {
		t.Fatalf("a dense model on an expert-parallel layout: %v", err)
	}
}

// The G2 knob turns the KV tiers on in the explorer's run: the fleet pane's tier row is there
// (a share in [0, 1] or NaN per window), the replay command repeats it, and with G2 off
// there is none.
func TestSimulateWithG2(t *testing.T) {
	_, s := smallExperiment(t, 300)
	k := s.Initial()
	off, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if off.Fleet.TierHit != nil {
		t.Fatalf("tier row without tiers: %v", off.Fleet.TierHit)
	}
	k.Index.G2Blocks = 32768
	on, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(on.Fleet.TierHit) != len(on.Fleet.HitRatio[0]) {
		t.Fatalf("tier row of %d windows, the heatmap has %d", len(on.Fleet.TierHit), len(on.Fleet.HitRatio[0]))
	}
	for _, v := range on.Fleet.TierHit {
		if !math.IsNaN(v) && (v < 0 || v > 1) {
			t.Fatalf("tier share %v outside [0, 1]", v)
		}
	}
	cfg, _, err := s.Config(k)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.KVTiers == nil || cfg.KVTiers.NumG2Blocks != 32768 || cfg.KVTiers.BlockBytes != 64*31744 || cfg.Router.Tiers == nil || cfg.Router.Tiers.Host != 0.75 {
		t.Fatalf("engine config of G2 32768: %+v %+v", cfg.KVTiers, cfg.Router.Tiers)
	}
}
