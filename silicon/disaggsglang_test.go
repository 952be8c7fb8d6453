package silicon

import (
	"context"
	"testing"

	"github.com/routerlab/routerlab/model"
)

// The diagnosis of SGLang's four disaggregated Qwen3-32B FP8 rows (docs/validation.md,
// "Disaggregated rows"): under the collection's assumed BF16 KV cache the TP1 × 5 / TP1 × 11
// row's replayed TTFT is almost all the wait for a decode worker's pre-allocation (its KV pool
// holds fewer than its 48 requests of 4,000 tokens and 512 reserved), not the prefill pool;
// with an FP8 KV cache no request waits for a decode worker, and that row's prefill pool
// alone keeps TTFT above the measured 567 ms. Logged per row: the TTFT's parts and each
// decode worker's KV tokens against its requests' prompts and reserve.
func TestSGLangDisaggDiagnosis(t *testing.T) {
	rows := sampleRows(t, "replays SGLang's four disaggregated rows twice; skipped in -short", func(r Row) bool {
		return r.Mode == "disagg" && r.Backend == "sglang" && r.Model == "Qwen/Qwen3-32B" && r.System == "h100_sxm"
	})
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	const reserved = 512 // SGLang's num_reserved_decode_tokens (engine/disagg_sglang.go)
	for _, kv := range []string{model.KVBF16, model.KVFP8} {
		for i, r := range rows {
			b, _ := Options{Benchmark: InferenceX()}.benchmarkOf(r)
			b.KVCacheDtype = kv
			pd, dd, skip := disaggDeployments(r, b)
			if skip != "" {
				t.Fatal(skip)
			}
			dw, err := model.NewWorker(dd)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := disaggReport(context.Background(), pd, dd, r, b, 0)
			if err != nil {
				t.Fatal(err)
			}
			s, c := rep.Summary.Disagg, dw.Capacity()
			per := r.Concurrency / r.Disagg.DecodeWorkers
			t.Logf("%s KV, line %d (prefill TP%d × %d, decode TP%d × %d, c %d): TTFT %.0f ms (measured %.1f) = prefill %.0f + decode wait %.0f + transfer %.1f + first step %.1f; TPOT %.2f ms (measured %.2f); decode worker KV %d tokens for %d requests × (%d + %d)",
				kv, r.Line, r.Disagg.PrefillTP, r.Disagg.PrefillWorkers, r.Disagg.DecodeTP, r.Disagg.DecodeWorkers, r.Concurrency,
				rep.Summary.MeanTTFTMS, r.TTFTMS, s.MeanPrefillMS, s.MeanDecodeWaitMS, s.MeanTransferMS, s.MeanFirstDecodeMS,
				rep.Summary.MeanTPOTMS, r.TPOTMS, c.NumGPUBlocks*c.BlockSize, per, r.ISL, reserved)
			switch {
			case kv == model.KVBF16 && i == 0 && (s.MeanDecodeWaitMS < 0.9*rep.Summary.MeanTTFTMS || c.NumGPUBlocks*c.BlockSize >= per*(r.ISL+reserved)):
				t.Fatalf("BF16, line %d: the decode wait is not the TTFT, or the decode pool holds the load", r.Line)
			case kv == model.KVFP8 && s.MeanDecodeWaitMS != 0:
				t.Fatalf("FP8, line %d: requests wait %.1f ms for a decode worker", r.Line, s.MeanDecodeWaitMS)
			case kv == model.KVFP8 && i == 0 && s.MeanPrefillMS < 3*r.TTFTMS:
				t.Fatalf("FP8, line %d: the prefill pool kept up (%.0f ms)", r.Line, s.MeanPrefillMS)
			}
		}
	}
}
