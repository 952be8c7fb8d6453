package engine

import (
	"context"
	"testing"

	"github.com/routerlab/routerlab/internal/cputime"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/trace"
)

// BenchmarkReplayBackends replays the seed (builtin:toolagent, 8 workers, c = 32) under each
// backend's scheduler, priced by the seed's vLLM timer so that only the scheduler differs.
// TensorRT-LLM runs with its 32-token blocks (twice the blocks) and chunked prefill, which
// the seed's long prompts need; "trtllm_whole" is its default, which refuses prompts over
// max_num_tokens. "vllm_block32" is vLLM at TensorRT-LLM's block size, the fair comparison.
func BenchmarkReplayBackends(b *testing.B) {
	tr, err := trace.Load("builtin:toolagent", trace.DefaultBlockSize)
	if err != nil {
		b.Fatal(err)
	}
	for _, backend := range []string{"vllm", "vllm_block32", "sglang", "sglang_lpm", "trtllm", "trtllm_whole"} {
		b.Run(backend, func(b *testing.B) {
			cfg, mw := seedConfig(b)
			switch backend {
			case "vllm_block32":
				cfg.Worker.BlockSize, cfg.Router.BlockSize = 32, 32
				cfg.Worker.NumGPUBlocks *= 2
			case "sglang", "sglang_lpm":
				cfg.Worker.Backend = model.BackendSGLang
				if backend == "sglang_lpm" {
					cfg.Scheduler.SGLangPolicy = SGLangLPM
				}
			case "trtllm", "trtllm_whole":
				cfg.Worker.Backend = model.BackendTRTLLM
				cfg.Worker.BlockSize, cfg.Router.BlockSize = 32, 32
				cfg.Worker.NumGPUBlocks *= 2
				cfg.Scheduler.TRTLLMChunkedPrefill = backend == "trtllm"
			}
			var rep *Report
			cpu0 := cputime.Process()
			for b.Loop() {
				if rep, err = Replay(context.Background(), cfg, mw, tr); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cputime.Process() - cpu0
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			s := rep.Summary
			b.ReportMetric(float64(s.RequestsCompleted), "requests")
			b.ReportMetric(s.PrefixCacheReusedRatio, "reuse")
			b.ReportMetric(s.MeanTTFTMS, "ttft_ms")
			b.ReportMetric(s.MeanTPOTMS, "tpot_ms")
		})
	}
}
