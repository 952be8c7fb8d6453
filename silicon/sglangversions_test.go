package silicon

import (
	"testing"

	"github.com/routerlab/routerlab/model"
)

// Each SGLang row replays on the tables of its run's release (model.SGLangTablesVersion), and
// those tables are embedded: the gap-analysis runs of 0.5.6.post2 on H200 and of 0.5.1.post1 on
// H100 (nearest: 0.5.6.post2), InferenceX's v0.5.10.post1 runs on B300, a 0.5.8.post1 run on
// 0.5.9, and B200's v0.5.5 image (its run's image when the row records no version) on B200's
// oldest collection, 0.5.9. TRT-LLM rows stay on the one embedded release.
func TestSGLangRowsReplayTheirRelease(t *testing.T) {
	for _, c := range []struct {
		r    Row
		want string
	}{
		{Row{Backend: "sglang", Model: "Qwen/Qwen3-235B-A22B-FP8", System: "h200_sxm", Precision: "fp8", BackendVersion: "0.5.6.post2",
			TP: 2, AttentionDP: 1, MoETP: 2, MoEEP: 1, ISL: 1000, OSL: 500, Concurrency: 4}, "0.5.6.post2"},
		{Row{Backend: "sglang", Model: "meta-llama/Llama-3.1-8B-Instruct", System: "h200_sxm", Precision: "fp8", BackendVersion: "0.5.6.post2",
			TP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 1, ISL: 1000, OSL: 500, Concurrency: 4}, "0.5.6.post2"},
		{Row{Backend: "sglang", Model: "Qwen/Qwen3-32B", System: "h100_sxm", BackendVersion: "0.5.1.post1",
			TP: 4, AttentionDP: 1, MoETP: 4, MoEEP: 1, ISL: 1000, OSL: 500, Concurrency: 4}, "0.5.6.post2"},
		{Row{Backend: "sglang", Model: "Qwen/Qwen3-32B", System: "h100_sxm", BackendVersion: "0.5.8.post1",
			TP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 1, ISL: 1000, OSL: 500, Concurrency: 4}, "0.5.9"},
		{Row{Backend: "sglang", Model: "deepseek-ai/DeepSeek-V3", System: "b300_sxm", Precision: "fp8", BackendVersion: "0.5.10.post1", Measured: "2026-04-17",
			TP: 8, AttentionDP: 1, MoETP: 8, MoEEP: 1, ISL: 8192, OSL: 1024, Concurrency: 4}, "0.5.10"},
		{Row{Backend: "sglang", Model: "Qwen/Qwen3.5-397B-A17B", System: "b300_sxm", Precision: "bf16", BackendVersion: "0.5.10.post1", Measured: "2026-04-17",
			TP: 4, AttentionDP: 1, MoETP: 4, MoEEP: 1, ISL: 1024, OSL: 1024, Concurrency: 4}, "0.5.10"},
		{Row{Backend: "sglang", Model: "deepseek-ai/DeepSeek-V3", System: "b200_sxm", Precision: "fp8", BackendVersion: "0.5.5", Measured: "2025-11-18",
			TP: 8, AttentionDP: 1, MoETP: 1, MoEEP: 8, ISL: 1024, OSL: 1024, Concurrency: 4}, "0.5.9"},
		{Row{Backend: "trtllm", Model: "Qwen/Qwen3-32B", System: "h100_sxm", Precision: "fp8", BackendVersion: "1.0.0",
			TP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 1, ISL: 1000, OSL: 500, Concurrency: 4}, model.BackendTRTLLM.EmbeddedVersion()},
	} {
		d := runOf(c.r).Benchmark.deployment(c.r)
		if d.BackendVersion != c.want {
			t.Errorf("%s %s %s %s: replayed on %s, want %s", c.r.Backend, c.r.Model, c.r.System, c.r.BackendVersion, d.BackendVersion, c.want)
			continue
		}
		if _, err := model.NewWorker(d); err != nil {
			t.Errorf("%s %s %s %s: %v", c.r.Backend, c.r.Model, c.r.System, c.r.BackendVersion, err)
		}
	}
}
