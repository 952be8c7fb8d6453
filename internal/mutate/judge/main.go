// Command judge is the mutation test's view of one build (internal/mutate, docs/trust.md):
// `judge identity` prints the build's simulator digest; `judge results` prints, one line per
// case, the SHA-256 of the results of a broad suite of replays, sweeps and a load curve —
// larger than the digest's canonical work and chosen apart from it, through the same
// public API the command line uses (`model validate`'s included). A mutant "changes a result" when any line differs from
// the unmutated build's.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/internal/walltime"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/silicon"
	"github.com/routerlab/routerlab/sweep"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: judge identity|results")
		os.Exit(2)
	}
	if err := limitCPU(os.Getenv("JUDGE_CPU_SECONDS")); err != nil {
		fmt.Fprintln(os.Stderr, "JUDGE_CPU_SECONDS:", err)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "identity":
		fmt.Println(config.SimulatorDigest())
	case "results":
		if err := results(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: judge identity|results")
		os.Exit(2)
	}
}

// limitCPU has the kernel kill this process once it has used secs seconds of CPU ("":
// no limit). A mutant may loop; a limit on CPU rather than on wall time tells a loop from
// a loaded machine (a wall-clock limit once counted a mutant that changes no result as
// changing one, docs/trust.md).
func limitCPU(secs string) error {
	if secs == "" {
		return nil
	}
	n, err := strconv.ParseUint(secs, 10, 64)
	if err != nil || n == 0 {
		return fmt.Errorf("%q is not a positive number of seconds", secs)
	}
	// At the hard limit the kernel sends SIGKILL (the soft one's SIGXCPU the Go runtime ignores).
	return syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: n, Max: n})
}

// line prints a case's name and the hash of its results, or its error.
func line(name string, v any, err error) {
	var b []byte
	if err == nil {
		if b, err = json.Marshal(v); err == nil {
			b, err = walltime.Strip(b)
		}
	}
	if err != nil {
		fmt.Printf("%s error: %s\n", name, strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	fmt.Printf("%s %x\n", name, sha256.Sum256(b))
}

func results() error {
	ctx := context.Background()
	replay := func(name string, requests int, sets ...string) {
		f := config.Default()
		if err := f.Apply(sets); err != nil {
			line(name, nil, err)
			return
		}
		exp, err := config.NewExperiment(f)
		if err != nil {
			line(name, nil, err)
			return
		}
		cfg, err := exp.EngineConfig(f.DefaultPoint())
		if err != nil {
			line(name, nil, err)
			return
		}
		cfg.RecordRequests = true
		rep, err := exp.Run(ctx, cfg, requests)
		line(name, rep, err)
	}
	// Every model, GPU, precision, backend and version, on its last layout with a derived cache.
	tables, err := model.Embedded()
	if err != nil {
		return err
	}
	last := map[string]*model.Table{}
	var groups []string
	for _, t := range tables {
		if t.TimingReference != "" || t.ValidateOnly() {
			continue
		}
		k := strings.Join([]string{t.Model, t.HardwareSKU, t.Quantization, t.BackendVersion}, "|")
		if t.Backend != model.BackendVLLM {
			k += "|" + string(t.Backend)
		}
		if last[k] == nil {
			groups = append(groups, k)
		}
		last[k] = t
	}
	for _, k := range groups {
		t := last[k]
		l := t.Layout
		version := "backend_version=" + t.BackendVersion
		if t.Backend != model.BackendVLLM { // SGLang and TRT-LLM run their embedded release
			version = "backend=" + string(t.Backend)
		}
		sets := []string{"model_name=" + t.Model, "hardware_sku=" + t.HardwareSKU, version,
			"context_length=65536", "replicas=4",
			fmt.Sprintf("parallel_configs=[{tp: %d, attention_dp: %d, moe_tp: %d, moe_ep: %d, replicas: 4}]", l.TP, l.AttentionDP, l.MoETP, l.MoEEP)}
		if t.Quantization != "" {
			sets = append(sets, "quantization="+t.Quantization)
		}
		replay("model "+k, 250, sets...)
		if t.SharedExperts.Values != nil {
			replay("model "+k+" shared_experts_stream_tokens=64", 250, append(sets, "shared_experts_stream_tokens=64")...)
			replay("model "+k+" shared_experts_stream_tokens=-1", 250, append(sets, "shared_experts_stream_tokens=-1")...)
		}
	}
	// The seed fleet under every router and the settings a file can change.
	for _, sets := range [][]string{
		{}, {"router_mode=round_robin"}, {"router_mode=random"}, {"router_mode=least_loaded"},
		{"router_temperature=0.5", "overlap_score_credit=0.5", "prefill_load_scale=2"},
		{"async_scheduling=true"}, {"timing_reference=dynosim"}, {"float32_matmul_precision=high"}, {"kv_cache_dtype=bf16"},
		{"workload.replay_concurrency=0", "workload.arrival_speedup_ratio=2"},
		{"api_server_tokenize_ns=30", "request_path_us=400", "stream_end_us=300"},
		{"cudagraph_mode=FULL_DECODE_ONLY", "max_cudagraph_capture_size=128"},
		{"memory_budget=vllm"}, {"fuse_allreduce_rms=false"}, {"batched_tokens=4096", "max_num_seqs=64"},
		{"goal.sla.ttft_ms=1000", "goal.sla.tpot_ms=40"}, {"context_length=16000"}, {"block_size=32"},
		{"workload.trace_path=builtin:conversation"},
		{"workload.trace_path=builtin:conversation", "num_gpu_blocks=400", "replicas=4"},
		{"workload.trace_path=builtin:toolagent:x2", "workload.seed=9"},
	} {
		replay("seed "+strings.Join(sets, " "), 600, sets...)
	}
	// A fleet past 64 workers (the router's wide index) evicting all along, on a longer
	// stretch of the trace.
	wide := []string{"replicas=72", "num_gpu_blocks=300", "workload.replay_concurrency=144"}
	replay("wide "+strings.Join(wide, " "), 4000, wide...)
	// Sweeps of each algorithm, with validation, and a load curve.
	for i, sets := range [][]string{
		{"router_mode=[kv_router, round_robin]", "overlap_score_credit=[0, 0.5, 1]", "prefill_load_scale=[0.5, 1, 2, 8]",
			"router_temperature=[0, 0.5]", "sweep.max_rounds=3", "sweep.candidates_per_round=4"},
		{"sweep.algorithm=random", "goal.target=throughput", "goal.max_e2e_latency_ms=60000", "prefill_load_scale=[0.25, 1, 4]",
			"sweep.max_rounds=2", "sweep.candidates_per_round=2"},
		{"sweep.algorithm=grid", "goal.target=tpot", "router_mode=[kv_router, least_loaded]", "validate.enabled=false"},
	} {
		f := config.Default()
		base := []string{"replicas=4", "workload.search_requests=300", "validate.requests=500", "sweep.parallel_evals=2"}
		if err := f.Apply(append(base, sets...)); err != nil {
			line(fmt.Sprint("sweep ", i), nil, err)
			continue
		}
		res, err := sweepResults(ctx, f)
		line(fmt.Sprint("sweep ", i), res, err)
	}
	f := config.Default()
	if err := f.Apply([]string{"replicas=4"}); err != nil {
		return err
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		return err
	}
	base, err := exp.EngineConfig(nil)
	if err != nil {
		return err
	}
	rr, ll := router.DefaultConfig(), router.DefaultConfig()
	rr.Mode, ll.Mode = router.ModeRoundRobin, router.ModeLeastLoaded
	points, err := sweep.Curve(ctx, exp, base, []sweep.CurveRouter{{Name: "kv", Router: router.DefaultConfig()}, {Name: "rr", Router: rr}, {Name: "ll", Router: ll}},
		[]int{4, 16, 48}, 300, nil)
	line("curve", points, err)
	validation()
	return nil
}

// validation is `model validate` of a row per measuring run at every layout from 1 to 8
// GPUs (8 clients, 2,048 prompt and 128 output tokens), under
// the inferencex profile and the ideal one; the rows leave their vLLM version unrecorded, so
// each is replayed at its run's image's.
func validation() {
	var b strings.Builder
	b.WriteString("silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl," +
		"gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n")
	for i, run := range silicon.InferenceXRuns() {
		date := run.To
		if date == "" {
			date = run.From
		}
		for _, tp := range []int{1, 2, 4, 8} {
			fmt.Fprintf(&b, "config_id=%d; silicon_concurrency=8; measured=%s,vllm,,%s,%s,%s,agg,2048,128,,,8,%d,1,,,,210.5,12.25\n",
				i, date, run.Model, run.System, run.Precision, tp)
		}
	}
	rows, err := silicon.Parse(strings.NewReader(b.String()), "rows")
	if err != nil {
		line("validate", nil, err)
		return
	}
	for _, profile := range silicon.Benchmarks() {
		rep, err := silicon.Validate(context.Background(), rows, silicon.Options{Benchmark: profile, Seed: 11})
		line("validate "+profile.Name, rep, err)
	}
}

// sweepResults runs f's search and validation in memory.
func sweepResults(ctx context.Context, f *config.File) (any, error) {
	exp, err := config.NewExperiment(f)
	if err != nil {
		return nil, err
	}
	// A fingerprint of its own: the experiment's would compute the digest, which `judge
	// identity` measures apart.
	opt := sweep.Options{Experiment: config.Fingerprint{{Key: "judge"}}}
	s, err := sweep.RunSearch(ctx, f, exp, opt)
	if err != nil {
		return nil, err
	}
	out := []any{s.Evaluations, s.Best, s.Stop}
	if f.Validate.Enabled {
		v, err := sweep.Validate(ctx, s, exp, opt)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
