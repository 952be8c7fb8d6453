package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runCmd executes one command with args and returns its stdout, stderr and error.
func runCmd(t *testing.T, cmd *cobra.Command, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// The benchmark profile and the flags that override its settings reach the replay and the
// JSON report; bad values name the flag.
func TestModelValidateBenchmarkFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.csv")
	csv := "config_id,concurrency,measured,backend_version,precision,gemm_quant_mode,moe_quant_mode,isl,osl,batch_size,tp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n" +
		",8,2026-04-03,0.19.0,fp8,fp8,fp8,1024,256,8,4,1,4,1,60.0,8.0\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (float64, map[string]any) {
		out, _, err := runCmd(t, newModelValidateCmd(), append([]string{"--silicon", path, "--format", "json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var js map[string]any
		if err := json.Unmarshal([]byte(out), &js); err != nil {
			t.Fatal(err)
		}
		return js["rows"].([]any)[0].(map[string]any)["pred_ttft_ms"].(float64), js["benchmark"].(map[string]any)
	}
	def, b := run()
	// --format csv: the same row, its prediction in pred_ttft_ms.
	out, _, err := runCmd(t, newModelValidateCmd(), "--silicon", path, "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "line,config_id,concurrency,") ||
		strings.Split(lines[1], ",")[10] != strconv.FormatFloat(def, 'g', -1, 64) {
		t.Errorf("model validate --format csv:\n%s\nwant pred_ttft_ms %v", out, def)
	}
	if b["name"] != "inferencex" || b["range_ratio"] != 0.8 || b["async_scheduling"] != true || b["batched_tokens_per_isl"] != 2.0 ||
		b["block_size"] != 32.0 || b["kv_cache_dtype"] != "fp8" || b["prefix_caching"] != false || b["warmup_per_slot"] != 2.0 {
		t.Fatalf("default benchmark %v", b)
	}
	ideal, b := run("--benchmark", "ideal")
	if b["name"] != "ideal" || b["range_ratio"] != 1.0 || b["async_scheduling"] != false || b["max_num_batched_tokens"] != 8192.0 {
		t.Fatalf("ideal benchmark %v", b)
	}
	if ideal == def {
		t.Fatalf("ideal and inferencex predict the same TTFT %.2f ms", def)
	}
	eager, b := run("--cudagraph-mode", "FULL_DECODE_ONLY")
	if b["cudagraph_mode"] != "FULL_DECODE_ONLY" || !(eager > def) {
		t.Fatalf("--cudagraph-mode FULL_DECODE_ONLY: benchmark %v, TTFT %.2f ms against %.2f with graphed prefills", b, eager, def)
	}
	sync, b := run("--async-scheduling=false", "--max-num-batched-tokens", "4096", "--range-ratio", "1", "--kv-cache-dtype", "bf16")
	if b["name"] != "inferencex" || b["async_scheduling"] != false || b["max_num_batched_tokens"] != 4096.0 ||
		b["batched_tokens_per_isl"] != nil || b["range_ratio"] != 1.0 || b["kv_cache_dtype"] != "bf16" {
		t.Fatalf("overridden benchmark %v", b)
	}
	if sync == def {
		t.Fatal("overrides did not change the replay")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--range-ratio", "0"}, "--range-ratio 0"},
		{[]string{"--range-ratio", "1.2"}, "--range-ratio 1.2"},
		{[]string{"--requests-per-slot", "0"}, "--requests-per-slot 0"},
		{[]string{"--warmup-per-slot", "-1"}, "--warmup-per-slot -1"},
		{[]string{"--dataset-entries-per-slot", "1001"}, "--dataset-entries-per-slot 1001"},
		{[]string{"--benchmark", "mlperf"}, `--benchmark: silicon: unknown benchmark "mlperf"`},
		{[]string{"--kv-cache-dtype", "int4"}, `kv_cache_dtype "int4"`},
		{[]string{"--api-tokenize-batching", "threads"}, `--api-tokenize-batching "threads": want one of serial, parallel`},
		{[]string{"--cudagraph-mode", "FULL"}, `--cudagraph-mode "FULL": want one of PIECEWISE, FULL_DECODE_ONLY`},
		{[]string{"--request-path-us", "-1"}, "--request-path-us -1"},
		{[]string{"--stream-end-us", "2000000"}, "--stream-end-us 2000000"},
	} {
		_, _, err := runCmd(t, newModelValidateCmd(), append([]string{"--silicon", path}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// model info names the timing reference, the kernels it prices and the request path, and
// splits the steps' non-attention work by operator;
// model validate passes --timing-reference and --api-tokenize-ns to the benchmark.
func TestModelInfoAndValidateTimingFlags(t *testing.T) {
	out, _, err := runCmd(t, newModelInfoCmd(), "--timing-reference", "dynosim", "--api-server-tokenize-ns", "1340")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"experts vllm_fused_moe", "router gate BF16 GEMM, as AIConfigurator prices it", "_dynosim.json",
		"timing     dynosim", "tokenised by the API server at 1340 ns/token", "(8,192 tokens: 11.0 ms)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("model info lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runCmd(t, newModelInfoCmd())
	if err != nil || !strings.Contains(out, "timing     silicon") || !strings.Contains(out, "requests   token ids") || strings.Contains(out, "dynosim") ||
		!strings.Contains(out, "non-attention work by operator") || !strings.Contains(out, "fused/overlap") {
		t.Fatalf("default model info: %v\n%s", err, out)
	}
	out, _, err = runCmd(t, newModelInfoCmd(), "--cudagraph-mode", "FULL_DECODE_ONLY")
	if err != nil || !strings.Contains(out, "CUDA graphs for decode-only steps (cudagraph_mode FULL_DECODE_ONLY") {
		t.Fatalf("model info --cudagraph-mode FULL_DECODE_ONLY: %v\n%s", err, out)
	}
	path := filepath.Join(t.TempDir(), "rows.csv")
	csv := "config_id,concurrency,measured,backend_version,precision,gemm_quant_mode,moe_quant_mode,isl,osl,batch_size,tp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n" +
		",8,2026-04-03,0.19.0,fp8,fp8,fp8,1024,256,8,4,1,4,1,60.0,8.0\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCmd(t, newModelValidateCmd(), "--silicon", path, "--timing-reference", "dynosim", "--api-tokenize-ns", "1340")
	if err != nil || !strings.Contains(out, "timing reference dynosim") || !strings.Contains(out, "tokenised by the API server at 1340 ns/token") ||
		!strings.Contains(out, "request path 1960 µs from send to handler and 980 µs") {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	// The measured request path is the profile's; flags change it, and model info shows one.
	out, _, err = runCmd(t, newModelValidateCmd(), "--silicon", path, "--request-path-us", "0", "--stream-end-us", "0")
	if err != nil || strings.Contains(out, "request path") {
		t.Fatalf("validate without the request path: %v\n%s", err, out)
	}
	out, _, err = runCmd(t, newModelInfoCmd(), "--request-path-us", "1960", "--stream-end-us", "980")
	if err != nil || !strings.Contains(out, "client     request path 1960 µs") || !strings.Contains(out, "next send 980 µs") {
		t.Fatalf("model info with a request path: %v\n%s", err, out)
	}
	if _, _, err := runCmd(t, newModelValidateCmd(), "--silicon", path, "--timing-reference", "mocker"); err == nil || !strings.Contains(err.Error(), "timing_reference") {
		t.Fatalf("--timing-reference mocker: %v", err)
	}
}

// model list gives each (model, GPU, precision) its layouts once; a layout the dynosim
// reference prices too is marked, not listed a second time.
func TestModelListLayoutsOnce(t *testing.T) {
	out, _, err := runCmd(t, newModelListCmd())
	if err != nil {
		t.Fatal(err)
	}
	var seed string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 6 && f[0] == "MiniMaxAI/MiniMax-M2.5" && f[1] == "b200_sxm" && f[2] == "fp8_block*" && f[5] == "vllm-0.19.0" {
			if seed != "" {
				t.Fatalf("two lines for MiniMax-M2.5 fp8 on B200:\n%s\n%s", seed, line)
			}
			seed = line
			layouts := f[6:]
			seen := map[string]bool{}
			for _, l := range layouts {
				base := strings.TrimSuffix(l, "+d")
				if seen[base] {
					t.Errorf("layout %s listed twice: %s", base, line)
				}
				seen[base] = true
			}
			if !slices.Contains(layouts, "4-1-4+d") {
				t.Errorf("the seed layout 4-1-4 is not marked as priced for dynosim too: %s", line)
			}
		}
	}
	if seed == "" {
		t.Fatalf("no MiniMax-M2.5 fp8 line on B200 in:\n%s", out)
	}
	if !strings.Contains(out, "+d also priced for timing_reference dynosim") {
		t.Error("the +d mark is not explained")
	}
}

// model validate's --shared-experts-stream-tokens and --fuse-allreduce-rms change that
// setting of every row's run: a Kimi-K2.5 row (shared experts; its run fuses) decodes slower
// with the shared experts in series and slower again unfused; bad thresholds are refused.
func TestValidateSharedExpertsAndFusionFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kimi.csv")
	csv := "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n" +
		"k,db-dump/2026-04-27; config_id=636; silicon_concurrency=4; measured=2026-04-20T00:00:00.000Z; vllm/vllm-openai:v0.17.0,vllm,0.17.0,moonshotai/Kimi-K2.5,b200_sxm,fp4,agg,1024,256,nvfp4,nvfp4,4,8,1,1,8,1,74.1,7.06\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	tpot := func(args ...string) float64 {
		t.Helper()
		out, _, err := runCmd(t, newModelValidateCmd(), append([]string{"--silicon", path, "--format", "json", "--requests-per-slot", "2"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var rep struct {
			Rows []struct {
				PredTPOT float64 `json:"pred_tpot_ms"`
			} `json:"rows"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Rows) != 1 || rep.Rows[0].PredTPOT <= 0 {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return rep.Rows[0].PredTPOT
	}
	run, series, unfused := tpot(), tpot("--shared-experts-stream-tokens", "-1"), tpot("--fuse-allreduce-rms=false")
	if !(series > run && unfused > run) {
		t.Fatalf("predicted TPOT %.3f ms as run, %.3f with the shared experts in series, %.3f unfused: want both slower", run, series, unfused)
	}
	if _, _, err := runCmd(t, newModelValidateCmd(), "--silicon", path, "--shared-experts-stream-tokens", "-2"); err == nil || !strings.Contains(err.Error(), "--shared-experts-stream-tokens -2") {
		t.Fatalf("--shared-experts-stream-tokens -2: %v", err)
	}
}

// model info names the collection of MLA module rows: B200's fused-norm collection, the
// version's own rows on a GPU without one; no line for other attention. model validate's
// --expert-parallel replays a Kimi-K2.5 row's moe_ep label, which its script's run ignores.
func TestModelInfoMLAAndExpertParallel(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sku", "b200_sxm", "--quantization", "nvfp4"}, "mla        the measured MLA module less its projections, from the 0.24.0 collection, run with the norm kernels a serving engine runs"},
		{[]string{"--sku", "h200_sxm", "--kv-cache-dtype", "bf16"}, "from the 0.19.0 collection (no collection of this GPU ran the fused norm kernels)"},
	} {
		out, _, err := runCmd(t, newModelInfoCmd(), append([]string{"--model-name", "moonshotai/Kimi-K2.5", "--tp", "8", "--moe-tp", "8", "--moe-ep", "1"}, c.args...)...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Fatalf("%v: %v, want %q:\n%s", c.args, err, c.want, out)
		}
	}
	if out, _, err := runCmd(t, newModelInfoCmd()); err != nil || strings.Contains(out, "\nmla ") {
		t.Fatalf("MiniMax model info: %v\n%s", err, out)
	}
	path := filepath.Join(t.TempDir(), "rows.csv")
	// A row of AIConfigurator's sample (silicon_sample.csv's columns), a Kimi-K2.5 NVFP4 B200 run of
	// 2026-03-11 labelled TEP (tp 4, moe_ep 4), at OSL 64 to keep the replay short.
	csv := "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n" +
		"x,source_file=2026-03-25.csv; silicon_concurrency=4; measured=2026-03-11T16:59:40Z,vllm,0.17.0,moonshotai/Kimi-K2.5,b200_sxm,fp4,agg,1024,64,nvfp4,nvfp4,4,4,1,1,1,4,170.0,8.4\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{{nil, "replayed as moe_tp 4 (the script does not pass --enable-expert-parallel)"}, {[]string{"--expert-parallel"}, " TEP "}} {
		out, _, err := runCmd(t, newModelValidateCmd(), append([]string{"--silicon", path, "--requests-per-slot", "2"}, c.args...)...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Fatalf("validate %v: %v, want %q:\n%s", c.args, err, c.want, out)
		}
	}
}
