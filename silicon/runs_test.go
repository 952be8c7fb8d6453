package silicon

import (
	"strings"
	"testing"

	"github.com/routerlab/routerlab/model"
)

// Every run is a valid benchmark, names its script, and no two runs claim the same row (a
// backend's rows are its own).
func TestInferenceXRunsAreWellFormed(t *testing.T) {
	runs := InferenceXRuns()
	for i, a := range runs {
		if err := a.Benchmark.check(); err != nil {
			t.Fatalf("run %d (%s): %v", i, a.Script, err)
		}
		if a.Script == "" || a.Image == "" {
			t.Fatalf("run %d: no provenance: %+v", i, a)
		}
		for _, b := range runs[i+1:] {
			dated := func(r Run) bool { return r.From != "" || r.To != "" }
			if a.Undated && dated(b) || b.Undated && dated(a) {
				continue // one claims only undated rows, the other only dated ones
			}
			if a.Backend.OrDefault() == b.Backend.OrDefault() && a.Model == b.Model && a.System == b.System && a.Precision == b.Precision && !a.Shape.disjoint(b.Shape) &&
				(a.To == "" || b.From == "" || a.To >= b.From) && (b.To == "" || a.From == "" || b.To >= a.From) {
				t.Fatalf("runs %s and %s overlap", a.Script, b.Script)
			}
		}
	}
}

// Rows take the settings of the run that measured them.
func TestRunOfRow(t *testing.T) {
	for _, c := range []struct {
		row    Row
		script string
		check  func(Benchmark) bool
	}{
		// The seed's shared rows carry no model: MiniMax-M2.5 FP8 on B200, bddbf403.
		{Row{Precision: "fp8", Measured: "2026-04-03"}, "minimaxm2.5_fp8_b200.sh@bddbf4031",
			func(b Benchmark) bool { return b == InferenceX() && b.MaxCUDAGraphCaptureSize == 2048 }},
		{Row{Model: minimax, System: "b200_sxm", Precision: "fp8", Measured: "2026-03-11"}, "@64c20b6b5",
			func(b Benchmark) bool {
				return b.KVCacheDtype == model.KVBF16 && b.BlockSize == 32 && b.PrefixCaching && b.WarmupPerSlot == 2
			}},
		{Row{Model: minimax, System: "h100_sxm", Precision: "fp8", Measured: "2026-03-28"}, "minimaxm2.5_fp8_h100.sh@626932a11",
			func(b Benchmark) bool {
				return b.MaxNumSeqs == 256 && !b.PrefixCaching && b.MaxNumBatchedTokens == 8192
			}},
		// NVFP4 on B200: the nightly rows of #996's branch ran vLLM's default token budget and
		// CUDA-graph capture size; the merged script's rows 2 × ISL and 2,048.
		{Row{Model: minimax, System: "b200_sxm", Precision: "fp4", Measured: "2026-04-03"}, "minimaxm2.5_fp4_b200.sh@08bcde8f1",
			func(b Benchmark) bool {
				return b.MaxNumBatchedTokens == 8192 && b.BatchedTokensPerISL == 0 && b.MaxCUDAGraphCaptureSize == 0 &&
					b.BlockSize == 32 && b.GPUMemoryUtilization == 0.95 && b.KVCacheDtype == model.KVFP8 && !b.PrefixCaching
			}},
		{Row{Model: minimax, System: "b200_sxm", Precision: "fp4", Measured: "2026-04-08"}, "minimaxm2.5_fp4_b200.sh@79bd988e9",
			func(b Benchmark) bool { return b.BatchedTokensPerISL == 2 && b.MaxCUDAGraphCaptureSize == 2048 }},
		{Row{Model: minimax, System: "b300_sxm", Precision: "fp4", Measured: "2026-04-22"}, "minimaxm2.5_fp4_b300.sh",
			func(b Benchmark) bool {
				return b.BatchedTokensPerISL == 2 && b.BlockSize == 16 && b.float32Precision(Row{Measured: "2026-04-22"}) == model.PrecisionHigh
			}},
		// B300's TF32 gate was merged on 2026-04-21, whose rows are that merge's sweep.
		{Row{Model: minimax, System: "b300_sxm", Precision: "fp8", Measured: "2026-04-21"}, "minimaxm2.5_fp8_b300.sh",
			func(b Benchmark) bool {
				return b.BlockSize == 32 && b.float32Precision(Row{Measured: "2026-04-21"}) == model.PrecisionHigh &&
					b.float32Precision(Row{Measured: "2026-04-17"}) == model.PrecisionHighest
			}},
		// AIConfigurator's undated Kimi rows take their group's InferenceX run; NVIDIA's NVFP4
		// checkpoint serves an FP8 cache.
		{Row{Model: kimi, System: "h200_sxm", Precision: "int4"}, "kimi-k2.5-gap-analysis.csv: undated copies of the rows of benchmarks/single_node/kimik2.5_int4_h200.sh@749096c4c",
			func(b Benchmark) bool {
				return b.KVCacheDtype == model.KVBF16 && b.MaxNumSeqsIsConcurrency && b.WarmupPerSlot == 2
			}},
		{Row{Model: kimi, System: "b200_sxm", Precision: "fp4", Measured: "2026-03-11"}, "kimik2.5_fp4_b200.sh@a58dedd5a",
			func(b Benchmark) bool { return b.KVCacheDtype == model.KVFP8 && b.PrefixCaching }},
		{Row{Model: kimi, System: "h200_sxm", Precision: "int4", Measured: "2026-03-27"}, "kimik2.5_int4_h200.sh@79a42e20a",
			func(b Benchmark) bool {
				return b.MaxNumSeqsIsConcurrency && !b.PrefixCaching && b.GPUMemoryUtilization == 0.95
			}},
		{Row{Model: llama70, System: "h100_sxm", Precision: "fp8", Measured: "2025-10-29"}, "70b_fp8_h100_slurm.sh@9596d23d7",
			func(b Benchmark) bool {
				return b.WarmupPerSlot == 0 && b.MaxNumSeqsIsConcurrency && b.MaxModelLen == 10240 && b.KVCacheDtype == model.KVFP8
			}},
		// The 2025 B200 Llama scripts graph decode-only steps (cudagraph_mode FULL_DECODE_ONLY).
		{Row{Model: llama70, System: "b200_sxm", Precision: "fp4", Measured: "2025-10-29"}, "70b_fp4_b200_docker.sh@9596d23d7",
			func(b Benchmark) bool {
				return b.CUDAGraphMode == model.CUDAGraphFullDecodeOnly && b.MaxNumSeqs == 512 && *b.FuseAllReduceRMS
			}},
		{Row{Model: llama70, System: "h200_sxm", Precision: "fp8", Measured: "2025-10-29"}, "70b_fp8_h200_slurm.sh@9596d23d7",
			func(b Benchmark) bool { return b.CUDAGraphMode == "" }},
		{Row{Model: gptOSS, System: "h100_sxm", Precision: "fp4", Measured: "2026-03-27"}, "gptoss_fp4_h100.sh@cec542a9a",
			func(b Benchmark) bool {
				return b.KVCacheDtype == model.KVBF16 && b.MaxCUDAGraphCaptureSize == 2048 && b.MaxNumSeqsIsConcurrency && b.WarmupPerSlot == 2
			}},
		{Row{Model: gptOSS, System: "h100_sxm", Precision: "fp4", Measured: "2025-12-08"}, "@25506e87c",
			func(b Benchmark) bool { return b.WarmupPerSlot == 0 && b.MaxCUDAGraphCaptureSize == 2048 }},
		{Row{Model: gptOSS, System: "b200_sxm", Precision: "fp4", Measured: "2026-02-25"}, "gptoss_fp4_b200.sh@d2c2acb19",
			func(b Benchmark) bool {
				return b.KVCacheDtype == model.KVFP8 && b.MaxNumSeqs == 512 && !b.MaxNumSeqsIsConcurrency
			}},
		{Row{Model: qwen32, System: "h100_sxm"}, "aic-auto-gap-analysis",
			func(b Benchmark) bool {
				return b.RangeRatio == 1 && !b.AsyncScheduling && b.WarmupPerSlot == 2 && b.APIServerTokenizeNS == 0
			}},
	} {
		run := runOf(c.row)
		if !strings.Contains(run.Script, c.script) || !c.check(run.Benchmark) {
			t.Fatalf("row %+v: run %s %+v; want %s", c.row, run.Script, run.Benchmark, c.script)
		}
	}
	// max_num_seqs $CONC follows the row.
	b := runOf(Row{Model: gptOSS, System: "h200_sxm", Precision: "fp4", Measured: "2026-03-27"}).Benchmark
	if d := b.deployment(Row{Model: gptOSS, System: "h200_sxm", Precision: "fp4", Concurrency: 48, TP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 1, ISL: 1024, OSL: 1024}); d.MaxNumSeqs != 48 || d.MaxNumBatchedTokens != 8192 {
		t.Fatalf("gpt-oss H200 deployment: max_num_seqs %d, batched %d; want 48 and 8192", d.MaxNumSeqs, d.MaxNumBatchedTokens)
	}
}

// A row that does not record its vLLM version is priced on the tables nearest its run's image.
func TestUnrecordedVersionFromRun(t *testing.T) {
	if v := runOf(Row{Model: llama70, System: "h200_sxm", Precision: "fp8", Measured: "2025-10-29"}).version(); v != "0.10.2" {
		t.Fatalf("Llama 70B run of 2025-10-29: version %q, want 0.10.2", v)
	}
	if v := runOf(Row{Model: qwen32, System: "h100_sxm"}).version(); v != "0.12.0" {
		t.Fatalf("gap-analysis run: version %q, want 0.12.0", v)
	}
}

// The fused all-reduce + RMSNorm follows each run's script where it enables it (every
// Kimi-K2.5 run, gpt-oss and Llama 3.3 70B on B200), with the 2025 scripts' thresholds per TP
// size, and the vLLM release's default for the rest, the seed's shared rows among them: on for
// 0.19 at TP 4 on B200, off at TP 1, under attention DP and on 0.17.
func TestRunsFuseAllReduceRMS(t *testing.T) {
	fused := map[string]bool{kimi: true}
	for _, r := range InferenceXRuns() {
		if r.Backend != "" {
			continue // vLLM's fusion pass: SGLang's and TRT-LLM's runs never set it
		}
		want := fused[r.Model] || (r.System == "b200_sxm" && (r.Model == gptOSS || r.Model == llama70))
		if set := r.Benchmark.FuseAllReduceRMS; (set != nil) != want || (set != nil && !*set) {
			t.Fatalf("run %s: fuse_allreduce_rms %v, want explicit %v", r.Script, set, want)
		}
	}
	seed := InferenceX()
	if seed.FuseAllReduceRMS != nil {
		t.Fatal("the seed's shared rows' script sets fuse_allreduce_rms; it leaves it to vLLM's default")
	}
	shared := Row{Concurrency: 4, TP: 4, AttentionDP: 1, MoETP: 1, MoEEP: 4, ISL: 1024, OSL: 1024, BackendVersion: "0.19.0"}
	for _, c := range []struct {
		version string
		tp, dp  int
		want    bool
	}{{"0.19.0", 4, 1, true}, {"0.19.0", 1, 1, false}, {"0.19.0", 1, 4, false}, {"0.17.0", 4, 1, false}, {"0.18.0", 2, 1, true}} {
		r := shared
		r.BackendVersion, r.TP, r.AttentionDP, r.MoEEP = c.version, c.tp, c.dp, c.tp*c.dp
		if d := seed.deployment(r); d.FuseAllReduceRMS != c.want {
			t.Fatalf("MiniMax-M2.5 B200 vLLM %s tp %d dp %d: fuse %v, want %v", c.version, c.tp, c.dp, d.FuseAllReduceRMS, c.want)
		}
	}
	off := false
	seed.FuseAllReduceRMS = &off
	if d := seed.deployment(shared); d.FuseAllReduceRMS {
		t.Fatal("fuse_allreduce_rms false does not override vLLM 0.19's default")
	}
	b := runOf(Row{Model: llama70, System: "b200_sxm", Precision: "fp8", Measured: "2025-10-29"}).Benchmark
	row := Row{Model: llama70, System: "b200_sxm", Precision: "fp8", Concurrency: 4, TP: 8, AttentionDP: 1, MoETP: 8, MoEEP: 1, ISL: 1024, OSL: 1024}
	if d := b.deployment(row); !d.FuseAllReduceRMS || d.AllReduceFusionMaxMB != 8 {
		t.Fatalf("Llama 70B B200 TP 8: fuse %v up to %g MiB, want the script's 8", d.FuseAllReduceRMS, d.AllReduceFusionMaxMB)
	}
	b = runOf(Row{Model: kimi, System: "b200_sxm", Precision: "fp4", Measured: "2026-04-20"}).Benchmark
	row = Row{Model: kimi, System: "b200_sxm", Precision: "fp4", Concurrency: 4, TP: 4, AttentionDP: 1, MoETP: 1, MoEEP: 4, ISL: 1024, OSL: 1024}
	if d := b.deployment(row); !d.FuseAllReduceRMS || d.AllReduceFusionMaxMB != 0 {
		t.Fatalf("Kimi-K2.5 B200 TP 4: fuse %v up to %g MiB, want vLLM's default size (0)", d.FuseAllReduceRMS, d.AllReduceFusionMaxMB)
	}
	if !strings.Contains(b.String(), "all-reduce + RMSNorm fused in small steps") {
		t.Fatalf("benchmark line does not say it fuses: %s", b)
	}
}

// Every InferenceX run posts text prompts, which its vLLM release's API server tokenises at
// InferenceXTokenizeNS: batched in parallel before 0.16 (vllm#31366), one after another from
// 0.16; SGLang's TokenizerManager each as it comes; AIConfigurator's gap-analysis collection, served by Dynamo's vLLM worker behind its
// Rust frontend, sends token ids.
func TestRunsTokeniseAsTheirRelease(t *testing.T) {
	modes := map[string]int{}
	for _, r := range InferenceXRuns() {
		b := r.Benchmark
		if b.Name != "inferencex" {
			if b.APIServerTokenizeNS != 0 {
				t.Fatalf("%s: tokenises at %d ns/token, want token ids", r.Script, b.APIServerTokenizeNS)
			}
			continue
		}
		want := model.TokenizeBatchingOf(r.version())
		switch r.Backend.OrDefault() {
		case model.BackendSGLang:
			want = model.TokenizeEach // SGLang's TokenizerManager: inline, no batch window
		case model.BackendTRTLLM:
			want = model.TokenizeSerial
		}
		if b.APIServerTokenizeNS != InferenceXTokenizeNS || b.APIServerTokenizeBatching != want {
			t.Fatalf("%s (%s): %d ns/token, %q; want %d, %q", r.Script, r.Image, b.APIServerTokenizeNS, b.APIServerTokenizeBatching, InferenceXTokenizeNS, want)
		}
		modes[want]++
	}
	if modes[model.TokenizeParallel] == 0 || modes[model.TokenizeSerial] == 0 || modes[model.TokenizeEach] == 0 {
		t.Fatalf("runs by batching %v: want both vLLM releases' kinds and SGLang's", modes)
	}
	if !strings.Contains(InferenceX().String(), "one after another") {
		t.Fatalf("the seed's benchmark (vLLM 0.19): %s", InferenceX())
	}
}

// No Kimi-K2.5 script passes --enable-expert-parallel (nor Qwen3.5's H200 script --ep-size),
// so its rows labelled with expert parallelism replay with every expert sharded over the
// worker's GPUs; the TensorRT-LLM DeepSeek scripts of 2025-11-02 chose --ep_size themselves
// (trtllmruns.go), and SGLang's DeepSeek NVFP4 script of 2025-11 passed --enable-ep-moe
// (sglang2025runs.go); the other runs keep their labels, and --expert-parallel true restores them.
func TestRunsExpertParallel(t *testing.T) {
	for _, r := range InferenceXRuns() {
		ep := r.Benchmark.ExpertParallel
		own := r.Backend == model.BackendTRTLLM && r.To == "2025-11-02" ||
			r.Backend == model.BackendSGLang && r.Precision == "fp4" && r.To <= "2025-11-10" && r.To != ""
		want := r.Model == kimi || own || (r.Model == qwen35 && r.System == "h200_sxm") // the H200 rows' undated copies too
		if (ep != nil) != want || (ep != nil && *ep && !own) {
			t.Fatalf("run %s: expert_parallel %v, want explicit %v (false unless a script's own --ep_size or --enable-ep-moe)", r.Script, ep, want)
		}
	}
	if r, note, ok := noExpertParallel(Row{TP: 8, AttentionDP: 1, MoETP: 8, MoEEP: 1}, Benchmark{ExpertParallel: scriptSets(true)}); !ok ||
		r.MoETP != 1 || r.MoEEP != 8 || !strings.Contains(note, "--ep_size 8") {
		t.Fatalf("--ep_size TP on a row labelled moe_tp 8: %+v %q %v; want moe_ep 8", r, note, ok)
	}
	b := runOf(Row{Model: kimi, System: "b200_sxm", Precision: "fp4", Measured: "2026-03-11"}).Benchmark
	tep := Row{TP: 4, AttentionDP: 1, MoETP: 1, MoEEP: 4}
	r, note, ok := noExpertParallel(tep, b)
	if !ok || r.MoETP != 4 || r.MoEEP != 1 || r.Layout() != "TP" || !strings.Contains(note, "labelled moe_tp 1, moe_ep 4: replayed as moe_tp 4") {
		t.Fatalf("Kimi TEP label: %+v %q %v", r, note, ok)
	}
	if !strings.Contains(b.String(), "no expert parallelism") {
		t.Fatalf("benchmark line does not say it: %s", b)
	}
	on := true
	b.ExpertParallel = &on
	if _, _, ok := noExpertParallel(tep, b); ok {
		t.Fatal("--expert-parallel true still rewrites the labels")
	}
	if _, _, ok := noExpertParallel(tep, InferenceX()); ok {
		t.Fatal("a run without the setting rewrites the labels")
	}
	b.ExpertParallel = new(bool)
	if r, _, ok := noExpertParallel(Row{TP: 8, AttentionDP: 1, MoETP: 8, MoEEP: 1}, b); ok || r.MoETP != 8 {
		t.Fatal("a TP row is rewritten")
	}
}
