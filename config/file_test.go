package config

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
)

func TestExampleIsTheEmbeddedSeed(t *testing.T) {
	ex, err := os.ReadFile("../examples/router-sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ex, seedYAML) {
		t.Fatal("examples/router-sweep.yaml and config/seed.yaml differ; keep them identical")
	}
}

func TestSeedDimensions(t *testing.T) {
	f := Default()
	dims := f.Dimensions()
	want := []struct {
		key string
		n   int
		log bool
	}{
		{KeyRouterMode, 2, false}, {KeyOverlapScoreCredit, 3, false},
		{KeyPrefillLoadScale, 9, true}, {KeyRouterTemperature, 4, false},
	}
	if len(dims) != len(want) {
		t.Fatalf("got %d dimensions, want %d: %+v", len(dims), len(want), dims)
	}
	for i, w := range want {
		if dims[i].Key != w.key || len(dims[i].Values) != w.n || dims[i].Log != w.log {
			t.Errorf("dimension %d = %s (%d values, log %v), want %s (%d, %v)",
				i, dims[i].Key, len(dims[i].Values), dims[i].Log, w.key, w.n, w.log)
		}
	}
	if got := dims[2].Values[8]; got.Num != 32 || !got.IsNum {
		t.Errorf("last prefill_load_scale = %+v, want 32", got)
	}
	if f.Workload.ReplayConcurrency != 32 || f.Workload.TracePath != "builtin:toolagent" ||
		f.Workload.SearchRequests != 2000 || f.Sweep.MaxRounds != 6 || f.Sweep.CandidatesPerRound != 10 ||
		f.Sweep.ParallelEvals != 10 || f.Goal.Target != "e2e_latency" || !f.Validate.Enabled {
		t.Errorf("seed settings wrong: %+v %+v %+v", f.Workload, f.Sweep, f.Goal)
	}
}

func TestAtFirstValueAndPoint(t *testing.T) {
	f := Default()
	v, err := f.At(nil, KeyPrefillLoadScale)
	if err != nil || v.Num != 0 {
		t.Fatalf("At(nil) = %+v, %v; want first value 0.0", v, err)
	}
	v, err = f.At(Point{0, 2, 8, 0}, KeyPrefillLoadScale)
	if err != nil || v.Num != 32 {
		t.Fatalf("At = %+v, %v; want 32", v, err)
	}
	if _, err := f.At(Point{0, 2, 9, 0}, KeyRouterMode); err == nil {
		t.Fatal("an out-of-range index on any dimension must be an error")
	}
	if _, err := f.At(Point{0}, KeyRouterMode); err == nil {
		t.Fatal("a point of the wrong length must be an error")
	}
}

func TestParseErrorsNameFileLineAndKey(t *testing.T) {
	seed := string(seedYAML)
	cases := []struct {
		name, from, to, want string
	}{
		{"unknown key", "  gpu_budget: 32", "  gpu_budgte: 32", "x.yaml:9: search_space.gpu_budgte: unknown key"},
		{"bad mode", "router_mode: [kv_router, round_robin]", "router_mode: [kv_router, fastest]", `x.yaml:17: search_space.router_mode: unsupported value "fastest"`},
		{"scale out of range", "32.0]", "3200.0]", `x.yaml:19: search_space.prefill_load_scale: value "3200.0" out of range`},
		{"negative credit", "[0.0, 0.5, 1.0]", "[-0.5, 0.5, 1.0]", `x.yaml:18: search_space.overlap_score_credit: value "-0.5" out of range`},
		{"concurrency", "replay_concurrency: 32", "replay_concurrency: lots", `x.yaml:24: workload.replay_concurrency: want an integer`},
		{"section", "goal:", "gaol:", "x.yaml:25: gaol: unknown section"},
		{"target", "target: e2e_latency", "target: speed", `x.yaml:26: goal.target: unsupported value "speed" (want one of e2e_latency, ttft, tpot, throughput, throughput_per_gpu, throughput_per_user, goodput, goodput_per_gpu, pareto)`},
		{"duplicate value", "[0.0, 0.2, 0.5, 1.0]", "[0.0, 0.2, 0.2, 1.0]", `search_space.router_temperature: value "0.2" listed twice`},
		{"budget", "gpu_budget: 32", "gpu_budget: 16", "parallel_configs: tp4-dp1-moetp1-ep4-x8 needs 32 GPUs, more than gpu_budget 16 (raise search_space.gpu_budget to 32, or --set gpu_budget=32, to allow it)"},
		{"layout", "{tp: 4, moe_ep: 4, replicas: 8}", "{tp: 4, moe_tp: 4, moe_ep: 2, replicas: 8}", "moe_tp × moe_ep (8) must equal tp × attention_dp (4)"},
		{"layout indivisible", "{tp: 4, moe_ep: 4, replicas: 8}", "{tp: 4, moe_ep: 3, replicas: 8}", "moe_tp × moe_ep must equal tp × attention_dp (4): 3 does not divide it"},
		{"async flag", "  gpu_budget: 32", "  gpu_budget: 32\n  async_scheduling: maybe", `x.yaml:10: search_space.async_scheduling: want true or false, got "maybe"`},
		{"fp32 precision", "  gpu_budget: 32", "  gpu_budget: 32\n  float32_matmul_precision: medium", `x.yaml:10: search_space.float32_matmul_precision: unsupported value "medium" (want one of highest, high)`},
		{"too many replicas", "replicas: 8}", "replicas: 1025}", "x.yaml:12: search_space.parallel_configs.replicas: want an integer in [1, 1024], got \"1025\""},
		{"kv dtype", "kv_cache_dtype: [fp8]", "kv_cache_dtype: [fp8, int4]", `x.yaml:15: search_space.kv_cache_dtype: unsupported value "int4" (want one of fp8, bf16, auto)`},
		{"algorithm", "parallel_evals: 10", "parallel_evals: 10\n  algorithm: annealing", `sweep.algorithm: unsupported value "annealing" (want one of gp_bandit, random, grid)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(seed, c.from, c.to, 1)
			if text == seed {
				t.Fatalf("case does not change the seed: %q", c.from)
			}
			_, err := Parse([]byte(text), "x.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestSetOverrides(t *testing.T) {
	f := Default()
	for _, s := range []string{"router_mode=round_robin", "prefill_load_scale=32", "workload.replay_concurrency=8", "overlap_score_credit=[0.5, 1.0]", "workload.trace_path=builtin:conversation"} {
		if err := f.Set(s); err != nil {
			t.Fatalf("Set(%q): %v", s, err)
		}
	}
	if v := f.Values(KeyRouterMode); len(v) != 1 || v[0].Text != "round_robin" {
		t.Errorf("router_mode = %v", v)
	}
	if v := f.Values(KeyPrefillLoadScale); len(v) != 1 || v[0].Num != 32 {
		t.Errorf("prefill_load_scale = %v", v)
	}
	if v := f.Values(KeyOverlapScoreCredit); len(v) != 2 || v[1].Num != 1 {
		t.Errorf("overlap_score_credit = %v", v)
	}
	if f.Workload.ReplayConcurrency != 8 || f.Workload.TracePath != "builtin:conversation" {
		t.Errorf("workload = %+v", f.Workload)
	}
	for _, bad := range []struct{ set, want string }{
		{"router_mode=warp", `--set: search_space.router_mode: unsupported value "warp"`},
		{"nosuchknob=1", "--set: search_space.nosuchknob: unknown key"},
		{"workload.replay_concurrency=-1", "--set: workload.replay_concurrency: want an integer in [0,"},
		{"router_temperature", "--set: router_temperature: want key=value"},
	} {
		err := f.Set(bad.set)
		var ce *Error
		if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Set(%q) error = %v, want %q", bad.set, err, bad.want)
		}
	}
}

// FuzzParse: any input yields a File or an error, never a panic; a parsed file's
// dimensions always have at least two distinct values each.
func FuzzParse(f *testing.F) {
	f.Add(seedYAML)
	f.Add([]byte("search_space: {model_name: m, hardware_sku: h, router_mode: [kv_router]}"))
	f.Add([]byte("workload: [1, 2]"))
	f.Add([]byte("search_space: {model_name: MiniMax-M2.5, hardware_sku: b200_sxm, gpu_budget: 8, min_gpu_budget: 4, parallel_configs: []}\n" +
		"goal: {target: pareto, max_p95_ttft_ms: 900, max_itl_ms: 20}"))
	f.Add([]byte("search_space: {model_name: Qwen3-32B, hardware_sku: h200_sxm, deployment_mode: [disagg], parallel_configs: [{prefill: {tp: 4, replicas: 3}, decode: {tp: 1, replicas: 4}}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, d := range file.Dimensions() {
			seen := map[string]bool{}
			for _, v := range d.Values {
				if seen[v.Text] {
					t.Fatalf("dimension %s repeats %q", d.Key, v.Text)
				}
				seen[v.Text] = true
			}
			if len(d.Values) < 2 {
				t.Fatalf("dimension %s has %d values", d.Key, len(d.Values))
			}
		}
	})
}

// seedRun builds the embedded seed with sets applied and replays its first 400 requests,
// returning the file, the worker it built and the run's mean TTFT.
func seedRun(t *testing.T, set ...string) (*File, engine.Config, float64) {
	t.Helper()
	f := Default()
	setAll(t, f, set...)
	cfg, sum := runPoint(t, f, nil, 400)
	return f, cfg, sum.MeanTTFTMS
}

// setAll applies --set overrides to f.
func setAll(t *testing.T, f *File, set ...string) {
	t.Helper()
	for _, s := range set {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
}

// runPoint replays f at point p (nil: each list's first value), the first requests of its
// trace (0: all), returning the workers' config and the summary.
func runPoint(t *testing.T, f *File, p Point, requests int) (engine.Config, engine.Summary) {
	t.Helper()
	e, err := NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := e.EngineConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.Run(context.Background(), cfg, requests)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, rep.Summary
}

// search_space.async_scheduling reaches the workers: with it a busy worker's arrivals wait
// one more step, so the same 400 requests see a longer mean TTFT.
func TestAsyncSchedulingKey(t *testing.T) {
	ttft := func(set ...string) float64 {
		f, cfg, ttft := seedRun(t, set...)
		if cfg.Worker.AsyncScheduling != f.AsyncScheduling {
			t.Fatalf("worker async_scheduling %v, file %v", cfg.Worker.AsyncScheduling, f.AsyncScheduling)
		}
		return ttft
	}
	sync, async := ttft(), ttft("async_scheduling=true")
	if !(async > sync) {
		t.Fatalf("mean TTFT sync %.1f ms, async %.1f ms: want async longer", sync, async)
	}
	if got := ttft("async_scheduling=false"); got != sync {
		t.Fatalf("async_scheduling=false gave %.3f ms, default %.3f ms", got, sync)
	}
	err := Default().Set("async_scheduling=maybe")
	if err == nil || !strings.Contains(err.Error(), `search_space.async_scheduling: want true or false, got "maybe"`) {
		t.Fatalf("bad value: %v", err)
	}
}

// search_space.kv_cache_dtype is a deployment dimension: each value builds its own worker,
// an FP8 cache holds twice the blocks of a BF16 (or auto) one, and a point picks its dtype.
func TestKVCacheDtypeKey(t *testing.T) {
	f := Default()
	if err := f.Set("kv_cache_dtype=[fp8, bf16]"); err != nil {
		t.Fatal(err)
	}
	e, err := NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	var dim int
	for i, d := range f.Dimensions() {
		if d.Key == KeyKVCacheDtype {
			dim = i
		}
	}
	blocks := map[string]int{}
	for i, dt := range []string{"fp8", "bf16"} {
		p := make(Point, len(f.Dimensions()))
		p[dim] = i
		cfg, err := e.EngineConfig(p)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Worker.KVCacheDtype != dt {
			t.Fatalf("point %v: worker kv_cache_dtype %q, want %q", p, cfg.Worker.KVCacheDtype, dt)
		}
		blocks[dt] = cfg.Worker.NumGPUBlocks
	}
	if blocks["fp8"] < 2*blocks["bf16"] || blocks["fp8"] > 2*blocks["bf16"]+1 {
		t.Fatalf("blocks %v: want FP8 twice BF16", blocks)
	}
	auto := Default()
	if err := auto.Set("kv_cache_dtype=auto"); err != nil {
		t.Fatal(err)
	}
	ea, err := NewExperiment(auto)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ea.EngineConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Worker.KVCacheDtype != "bf16" || cfg.Worker.NumGPUBlocks != blocks["bf16"] {
		t.Fatalf("auto: %s with %d blocks, want bf16 with %d", cfg.Worker.KVCacheDtype, cfg.Worker.NumGPUBlocks, blocks["bf16"])
	}
	if def, _ := e.EngineConfig(nil); def.Worker.KVCacheDtype != "fp8" {
		t.Fatalf("default point kv_cache_dtype %q, want fp8 (the seed's)", def.Worker.KVCacheDtype)
	}
}

func TestDefaultPointIsDynamosWhereTheListOffersIt(t *testing.T) {
	f := Default()
	for _, s := range []string{"router_mode=[round_robin, kv_router]", "overlap_score_credit=[0.0, 0.5]", "router_temperature=[0.5, 0]"} {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	p := f.DefaultPoint()
	for key, want := range map[string]string{KeyRouterMode: "kv_router", KeyOverlapScoreCredit: "0.0", KeyPrefillLoadScale: "1.0", KeyRouterTemperature: "0"} {
		if v, err := f.At(p, key); err != nil || v.Text != want {
			t.Errorf("%s at the default point = %q (%v), want %q", key, v.Text, err, want)
		}
	}
}

// search_space.float32_matmul_precision reaches the workers and the fingerprint: with high
// (TF32) the FP32 router gate of every prefill is cheaper, so the same 400 requests see a
// shorter mean TTFT; unset is vLLM's default, highest.
func TestFloat32MatmulPrecisionKey(t *testing.T) {
	ttft := func(set ...string) (float64, Fingerprint) {
		f, cfg, ttft := seedRun(t, set...)
		if want := cmp.Or(f.Float32MatmulPrecision, model.PrecisionHighest); cfg.Worker.Float32MatmulPrecision != want {
			t.Fatalf("worker float32_matmul_precision %q, want %q", cfg.Worker.Float32MatmulPrecision, want)
		}
		return ttft, f.Fingerprint()
	}
	highest, fpHighest := ttft()
	high, fpHigh := ttft("float32_matmul_precision=high")
	if !(high < highest) {
		t.Fatalf("mean TTFT highest %.2f ms, high %.2f ms: want TF32 shorter", highest, high)
	}
	if d := Diff(fpHighest, fpHigh); len(d) != 1 || d[0] != (Change{"search_space.float32_matmul_precision", "highest", "high"}) {
		t.Fatalf("fingerprint diff %v, want only the precision, highest → high", d)
	}
	if got, _ := ttft("float32_matmul_precision=highest"); got != highest {
		t.Fatalf("explicit highest %.3f ms, default %.3f ms", got, highest)
	}
}

// search_space.timing_reference reaches the workers and the fingerprint; dynosim prices the
// mocker's two passes per mixed step, so the same 400 requests see a longer mean TTFT.
func TestTimingReferenceKey(t *testing.T) {
	f0, cfg0, silicon := seedRun(t)
	if cfg0.Worker.TimingReference != model.ReferenceSilicon {
		t.Fatalf("default timing_reference %q, want silicon", cfg0.Worker.TimingReference)
	}
	f1, cfg1, dynosim := seedRun(t, "timing_reference=dynosim")
	if !cfg1.Worker.Dynosim() {
		t.Fatalf("worker timing_reference %q, want dynosim", cfg1.Worker.TimingReference)
	}
	if !(dynosim > silicon) {
		t.Fatalf("mean TTFT silicon %.2f ms, dynosim %.2f ms: want dynosim longer", silicon, dynosim)
	}
	if d := Diff(f0.Fingerprint(), f1.Fingerprint()); len(d) != 1 || d[0] != (Change{"search_space.timing_reference", "silicon", "dynosim"}) {
		t.Fatalf("fingerprint diff %v, want only the timing reference, silicon → dynosim", d)
	}
	f := Default()
	if err := f.Set("timing_reference=mocker"); err == nil || !strings.Contains(err.Error(), "timing_reference") || !strings.Contains(err.Error(), "dynosim") {
		t.Fatalf("--set timing_reference=mocker: %v", err)
	}
}

// search_space.api_server_tokenize_ns reaches the workers and the fingerprint: text prompts
// wait for the API server's tokeniser, so the same requests see a longer mean TTFT.
func TestAPIServerTokenizeKey(t *testing.T) {
	f0, _, base := seedRun(t)
	f1, cfg, tok := seedRun(t, "api_server_tokenize_ns=1340")
	if cfg.Worker.APIServerTokenizeNS != 1340 {
		t.Fatalf("worker api_server_tokenize_ns %d, want 1340", cfg.Worker.APIServerTokenizeNS)
	}
	if !(tok > base) {
		t.Fatalf("mean TTFT %.2f ms with tokenisation, %.2f without", tok, base)
	}
	if d := Diff(f0.Fingerprint(), f1.Fingerprint()); len(d) != 1 || d[0] != (Change{"search_space.api_server_tokenize_ns", "0", "1340"}) {
		t.Fatalf("fingerprint diff %v", d)
	}
	if err := Default().Set("api_server_tokenize_ns=-1"); err == nil {
		t.Fatal("negative api_server_tokenize_ns accepted")
	}
	// Parallel batching (vLLM 0.10–0.15) releases a burst sooner, which changes the replay
	// (not necessarily its mean: the engine's batches change too); the key shows in the
	// fingerprint only when given.
	f2, cfg2, par := seedRun(t, "api_server_tokenize_ns=1340", "api_server_tokenize_batching=parallel")
	if cfg2.Worker.TokenizeBatching() != model.TokenizeParallel {
		t.Fatalf("worker batching %q, want parallel", cfg2.Worker.TokenizeBatching())
	}
	if !(par > base && par != tok) {
		t.Fatalf("mean TTFT %.2f ms with parallel batching, want above %.2f (token ids) and other than %.2f (serial)", par, base, tok)
	}
	if d := Diff(f1.Fingerprint(), f2.Fingerprint()); len(d) != 1 || d[0].Key != "search_space.api_server_tokenize_batching" || d[0].New != "parallel" {
		t.Fatalf("fingerprint diff %v", d)
	}
	// SGLang's TokenizerManager (each: no 2 ms window) hands a lone prompt on sooner than
	// either window does: the mean TTFT falls below serial's, still above token ids'.
	_, cfg3, each := seedRun(t, "api_server_tokenize_ns=1340", "api_server_tokenize_batching=each")
	if cfg3.Worker.TokenizeBatching() != model.TokenizeEach || !(each > base && each < tok) {
		t.Fatalf("batching %q: mean TTFT %.2f ms, want between %.2f (token ids) and %.2f (serial)", cfg3.Worker.TokenizeBatching(), each, base, tok)
	}
	if err := Default().Set("api_server_tokenize_batching=threads"); err == nil || !strings.Contains(err.Error(), `"threads"`) {
		t.Fatalf("api_server_tokenize_batching threads: %v", err)
	}
}

// search_space.request_path_us and stream_end_us reach the workers and the fingerprint (both
// listed once either is given, so earlier experiments keep theirs): a request path before the
// server lengthens every TTFT.
func TestRequestPathKeys(t *testing.T) {
	f0, _, base := seedRun(t)
	f1, cfg, path := seedRun(t, "request_path_us=2000", "stream_end_us=900")
	if cfg.Worker.RequestPathUS != 2000 || cfg.Worker.StreamEndUS != 900 {
		t.Fatalf("worker request path %d µs, stream end %d µs; want 2000 and 900", cfg.Worker.RequestPathUS, cfg.Worker.StreamEndUS)
	}
	if !(path > base+1.9) {
		t.Fatalf("mean TTFT %.2f ms with a 2 ms request path, %.2f without", path, base)
	}
	want := []Change{{"search_space.request_path_us", absent, "2000"}, {"search_space.stream_end_us", absent, "900"}}
	if d := Diff(f0.Fingerprint(), f1.Fingerprint()); !slices.Equal(d, want) {
		t.Fatalf("fingerprint diff %v, want %v", d, want)
	}
	for _, bad := range []string{"request_path_us=-1", "stream_end_us=2000000"} {
		key, _, _ := strings.Cut(bad, "=")
		if err := Default().Set(bad); err == nil || !strings.Contains(err.Error(), "search_space."+key) {
			t.Fatalf("%s: %v, want an error naming search_space.%s", bad, err, key)
		}
	}
}

// A layout without MoE keys is vLLM's default: experts (if any) sharded over every GPU; one
// MoE key implies the other.
func TestParallelConfigMoEDefaults(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"parallel_configs=[{tp: 4, replicas: 8}]", "tp4-dp1-moetp4-ep1-x8"},
		{"parallel_configs=[{tp: 4, moe_ep: 2}]", "tp4-dp1-moetp2-ep2-x1"},
		{"parallel_configs=[{tp: 8, moe_tp: 1}]", "tp8-dp1-moetp1-ep8-x1"},
	} {
		f := Default()
		if err := f.Set(c.set); err != nil {
			t.Fatalf("%s: %v", c.set, err)
		}
		if got := f.list("parallel_configs").values[0].Text; got != c.want {
			t.Fatalf("%s: %s, want %s", c.set, got, c.want)
		}
	}
}

// search_space.max_cudagraph_capture_size reaches the workers and the fingerprint: raised past
// the token budget, no step pays the eager all-reduces, so a prefill step is cheaper and the
// replay changes (on 400 requests the router's choices move too, so not in one direction).
func TestMaxCUDAGraphCaptureSizeKey(t *testing.T) {
	f0, cfg0, eager := seedRun(t)
	if cfg0.Worker.MaxCUDAGraphCaptureSize != 0 || cfg0.Worker.CUDAGraphMaxTokens() != 512 {
		t.Fatalf("default capture size %d (%d tokens), want vLLM's default: 0 (512 tokens)", cfg0.Worker.MaxCUDAGraphCaptureSize, cfg0.Worker.CUDAGraphMaxTokens())
	}
	f1, cfg, graphs := seedRun(t, "max_cudagraph_capture_size=1048576")
	if cfg.Worker.MaxCUDAGraphCaptureSize != 1048576 {
		t.Fatalf("worker max_cudagraph_capture_size %d, want 1048576", cfg.Worker.MaxCUDAGraphCaptureSize)
	}
	if graphs == eager {
		t.Fatalf("mean TTFT %.2f ms both with every step a CUDA graph and with vLLM's default", graphs)
	}
	prefill := &model.Batch{Prefill: []model.Chunk{{NewTokens: 8192}}}
	var us [2]int64
	for i, d := range []model.Deployment{cfg0.Worker, cfg.Worker} {
		w, err := model.NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		us[i] = w.StepTimeUS(prefill)
	}
	if !(us[1] < us[0]) {
		t.Fatalf("an 8,192-token prefill: %d µs with vLLM's capture size, %d µs with every step a CUDA graph", us[0], us[1])
	}
	if d := Diff(f0.Fingerprint(), f1.Fingerprint()); len(d) != 1 || d[0] != (Change{"search_space.max_cudagraph_capture_size", "0", "1048576"}) {
		t.Fatalf("fingerprint diff %v", d)
	}
	if err := Default().Set("max_cudagraph_capture_size=-1"); err == nil || !strings.Contains(err.Error(), "max_cudagraph_capture_size") {
		t.Fatalf("negative max_cudagraph_capture_size: %v", err)
	}
}

// search_space.cudagraph_mode reaches the workers and, only when set, the fingerprint;
// FULL_DECODE_ONLY runs a 256-token prefill step of the seed's worker without graphs, so it
// is dearer; a mode routerlab does not price is refused by key.
func TestCUDAGraphModeKey(t *testing.T) {
	f0, cfg0, _ := seedRun(t)
	if cfg0.Worker.CUDAGraphMode != "" {
		t.Fatalf("default cudagraph_mode %q, want vLLM's (empty)", cfg0.Worker.CUDAGraphMode)
	}
	f1, cfg, _ := seedRun(t, "cudagraph_mode=FULL_DECODE_ONLY")
	if cfg.Worker.CUDAGraphMode != model.CUDAGraphFullDecodeOnly {
		t.Fatalf("worker cudagraph_mode %q", cfg.Worker.CUDAGraphMode)
	}
	step := func(d model.Deployment) int64 {
		w, err := model.NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		return w.StepTimeUS(&model.Batch{Prefill: []model.Chunk{{NewTokens: 256}}})
	}
	if graph, eager := step(cfg0.Worker), step(cfg.Worker); !(eager > graph) {
		t.Fatalf("a 256-token prefill step: %d µs run eagerly, %d µs as a graph", eager, graph)
	}
	if d := Diff(f0.Fingerprint(), f1.Fingerprint()); len(d) != 1 || d[0].Key != "search_space.cudagraph_mode" || d[0].New != "FULL_DECODE_ONLY" {
		t.Fatalf("fingerprint diff %v", d)
	}
	if err := Default().Set("cudagraph_mode=FULL"); err == nil || !strings.Contains(err.Error(), "cudagraph_mode") {
		t.Fatalf("cudagraph_mode FULL: %v", err)
	}
}

// search_space.shared_experts_stream_tokens reaches the workers and, only when set, the
// fingerprint; the seed's MiniMax-M2.5 has no shared experts, so its replay is unchanged.
func TestSharedExpertsStreamTokensKey(t *testing.T) {
	f0, cfg0, base := seedRun(t)
	if cfg0.Worker.SharedExpertsStreamTokens != 0 || cfg0.Worker.SharedExpertsOverlapTokens() != 256 {
		t.Fatalf("default %d (%d tokens), want vLLM's default: 0 (256 tokens)", cfg0.Worker.SharedExpertsStreamTokens, cfg0.Worker.SharedExpertsOverlapTokens())
	}
	f1, cfg, off := seedRun(t, "shared_experts_stream_tokens=-1")
	if cfg.Worker.SharedExpertsStreamTokens != -1 || cfg.Worker.SharedExpertsOverlapTokens() != 0 {
		t.Fatalf("worker shared_experts_stream_tokens %d (%d tokens), want -1 (0)", cfg.Worker.SharedExpertsStreamTokens, cfg.Worker.SharedExpertsOverlapTokens())
	}
	if off != base {
		t.Fatalf("mean TTFT %.4f ms without the second stream, %.4f with: MiniMax-M2.5 has no shared experts", off, base)
	}
	if d := Diff(f0.Fingerprint(), f1.Fingerprint()); len(d) != 1 || d[0].Key != "search_space.shared_experts_stream_tokens" || d[0].New != "-1" {
		t.Fatalf("fingerprint diff %v", d)
	}
	if err := Default().Set("shared_experts_stream_tokens=-2"); err == nil || !strings.Contains(err.Error(), "shared_experts_stream_tokens") {
		t.Fatalf("shared_experts_stream_tokens -2: %v", err)
	}
}

// search_space.fuse_allreduce_rms follows backend_version's vLLM default when unset — on for
// the seed (vLLM 0.19, TP 4 on B200: steps of up to 5,461 tokens fuse), off on 0.17 and at
// TP 1 — and, when set, overrides it and enters the fingerprint; unfused, the seed's decode
// steps are longer.
func TestFuseAllReduceRMSKey(t *testing.T) {
	f0 := Default()
	cfg0, fused := runPoint(t, f0, nil, 400)
	if !cfg0.Worker.FuseAllReduceRMS {
		t.Fatal("the seed (vLLM 0.19, TP 4, B200) does not fuse all-reduce + RMSNorm by default")
	}
	f1 := Default()
	setAll(t, f1, "fuse_allreduce_rms=false")
	cfg, unfused := runPoint(t, f1, nil, 400)
	if cfg.Worker.FuseAllReduceRMS {
		t.Fatal("fuse_allreduce_rms=false did not reach the workers")
	}
	if !(fused.MeanTPOTMS < unfused.MeanTPOTMS) {
		t.Fatalf("mean TPOT %.4f ms fused, %.4f ms unfused: fusing takes kernels out of every decode step", fused.MeanTPOTMS, unfused.MeanTPOTMS)
	}
	if d := Diff(f0.Fingerprint(), f1.Fingerprint()); len(d) != 1 || d[0] != (Change{"search_space.fuse_allreduce_rms", absent, "false"}) {
		t.Fatalf("fingerprint diff %v", d)
	}
	old := Default()
	setAll(t, old, "backend_version=0.17.0")
	if old.fusesAllReduceRMS("b200_sxm", ParallelConfig{TP: 4, AttentionDP: 1}) || f0.fusesAllReduceRMS("b200_sxm", ParallelConfig{TP: 1, AttentionDP: 1}) {
		t.Fatal("vLLM 0.17 or TP 1 fuses by default")
	}
	if err := Default().Set("fuse_allreduce_rms=maybe"); err == nil || !strings.Contains(err.Error(), "fuse_allreduce_rms") {
		t.Fatalf("fuse_allreduce_rms=maybe: %v", err)
	}
}

// search_space.memory_budget reaches the workers' KV capacity and, only when set, the
// fingerprint; unset, the seed (silicon) sizes its workers with vLLM's budget, as `model
// validate` sizes the measured servers, and dynosim with AIConfigurator's; an unknown budget
// is an error naming the key.
func TestMemoryBudgetKey(t *testing.T) {
	f0, cfg0, _ := seedRun(t)
	f1, cfg1, _ := seedRun(t, "memory_budget=aiconfigurator")
	_, cfgV, _ := seedRun(t, "memory_budget=vllm")
	_, cfgD, _ := seedRun(t, "timing_reference=dynosim")
	if cfg0.Worker.MemoryBudget != "" || cfg1.Worker.MemoryBudget != model.MemoryBudgetAIConfigurator {
		t.Fatalf("worker memory_budget %q, %q", cfg0.Worker.MemoryBudget, cfg1.Worker.MemoryBudget)
	}
	if cfg1.Worker.NumGPUBlocks >= cfg0.Worker.NumGPUBlocks || cfgV.Worker.NumGPUBlocks != cfg0.Worker.NumGPUBlocks {
		t.Fatalf("num_gpu_blocks %d by default, %d under memory_budget aiconfigurator, %d under vllm", cfg0.Worker.NumGPUBlocks, cfg1.Worker.NumGPUBlocks, cfgV.Worker.NumGPUBlocks)
	}
	if cfgD.Worker.NumGPUBlocks != cfg1.Worker.NumGPUBlocks {
		t.Fatalf("num_gpu_blocks %d under dynosim, %d under AIConfigurator's budget", cfgD.Worker.NumGPUBlocks, cfg1.Worker.NumGPUBlocks)
	}
	if d := Diff(f0.Fingerprint(), f1.Fingerprint()); len(d) != 1 || d[0].Key != "search_space.memory_budget" || d[0].New != "aiconfigurator" {
		t.Fatalf("fingerprint diff %v", d)
	}
	if err := Default().Set("memory_budget=torch"); err == nil || !strings.Contains(err.Error(), `search_space.memory_budget: unsupported value "torch"`) {
		t.Fatalf("memory_budget torch: %v", err)
	}
}
