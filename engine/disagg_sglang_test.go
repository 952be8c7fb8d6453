package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// Under SGLang's disaggregated serving every request is pre-allocated on one decode worker
// before its prefill starts, prefilled once, moved whole (the decode worker caches nothing),
// and decoded on exactly that worker from its landing, its first token the prefill's; the
// pools' invariants (blocks conserved, reservations included) hold after every event, and
// the decode fast path changes nothing.
func TestDisaggSGLangInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tb := rapid.SampledFrom([]int{64, 128, 512}).Draw(t, "trace_block")
		tr := genTrace(t, tb)
		cfg := genDisagg(t, genConfig(t, tr))
		cfg.Worker.Backend, cfg.Disagg.Decode.Backend = model.BackendSGLang, model.BackendSGLang
		cfg.Worker.NumGPUBlocks++ // SGLang refuses a request that fills the pool (Admit)
		for _, d := range []*model.Deployment{&cfg.Worker, &cfg.Disagg.Decode} {
			d.MaxNumBatchedTokens = max(d.MaxNumBatchedTokens, d.BlockSize)
		}
		// Room for the longest request beside SGLang's reserved decode tokens (Admit refuses
		// a prompt without it: TestSGLangPreallocationRefusal).
		longest := 0
		for _, r := range tr.Requests {
			longest = max(longest, r.InputLength+r.OutputLength)
		}
		reserve := (longest + sglangReservedDecodeTokens + cfg.Worker.BlockSize - 1) / cfg.Worker.BlockSize
		cfg.Disagg.Decode.NumGPUBlocks = max(cfg.Disagg.Decode.NumGPUBlocks, cfg.Worker.NumGPUBlocks, reserve)
		runDisaggChecked(t, cfg, tr, func(s *Sim, ri int32, r *request) {
			d := s.dis
			switch {
			case int(r.worker) != d.first+int(d.pd.dst[ri]):
				t.Fatalf("request %d completes on worker %d, pre-allocated on decode worker %d", ri, r.worker, d.pd.dst[ri])
			case d.reserved[ri] < r.arrival || d.prefilled[ri] < d.reserved[ri] || d.landed[ri] < d.prefilled[ri]:
				t.Fatalf("request %d: arrived %d, reserved %d, prefilled %d, landed %d", ri, r.arrival, d.reserved[ri], d.prefilled[ri], d.landed[ri])
			case d.landed[ri]-d.prefilled[ri] != transferUS(&Disagg{TransferGBps: cfg.Disagg.TransferGBps, KVBytesPerToken: cfg.Disagg.KVBytesPerToken}, r.isl, 0):
				t.Fatalf("request %d: transfer took %d µs", ri, d.landed[ri]-d.prefilled[ri])
			case r.firstTok < d.landed[ri] || r.firstTok == 0:
				t.Fatalf("request %d: first token at %d, its KV landed at %d", ri, r.firstTok, d.landed[ri])
			}
		}, func(s *Sim, e event) {
			d := s.dis
			if d.pd == nil {
				t.Fatal("an SGLang fleet without SGLang's flow")
			}
			for ri, src := range d.src {
				r := &s.reqs[ri]
				// KV blocks are conserved through the transfer: the prefill's copy and the
				// decode worker's pre-allocation are each the whole prompt.
				if want := int(s.blocksFor(r.isl)); src != nil && (len(src) != want || len(r.fl.blocks) != want) {
					t.Fatalf("request %d: prefill holds %d blocks, decode %d, prompt needs %d", ri, len(src), len(r.fl.blocks), want)
				}
				if b := d.pd.dstBlocks[ri]; b != nil && len(b) != int(s.blocksFor(r.isl)) {
					t.Fatalf("request %d: %d blocks pre-allocated for a prompt of %d", ri, len(b), r.isl)
				}
			}
			for i := range s.workers {
				w := &s.workers[i]
				for _, ri := range w.running {
					switch {
					case w.spec.decode && (d.src[ri] != nil || d.pd.dstBlocks[ri] != nil):
						t.Fatalf("request %d runs on decode worker %d before its KV landed", ri, i)
					case w.spec.prefill && s.reqs[ri].fl.generated > 0:
						t.Fatalf("request %d decodes on prefill worker %d", ri, i)
					case w.spec.prefill && d.pd.dstBlocks[ri] == nil:
						t.Fatalf("request %d prefills on worker %d before a decode worker pre-allocated it", ri, i)
					}
				}
			}
		})
	})
}

// A decode worker that can pre-allocate one prompt beside its 512 reserved decode tokens
// holds the second request's prefill back until the first request leaves, though a prefill
// worker is free for it from the start: 2 × (1,100 + 1,000 µs) + the first's two 11 µs
// decodes.
func TestSGLangPreallocationHoldsPrefill(t *testing.T) {
	tr := &trace.Trace{Name: "two", BlockSize: 64, Requests: []trace.Request{
		req(0, 1000, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16),
		req(0, 1000, 3, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36)}}
	p := deployment(100, 2048, 4)
	p.Backend = model.BackendSGLang
	dd := p
	dd.NumGPUBlocks = 24 // 1,536 tokens: one prompt of 1,000 and 512 reserved
	cfg := Config{Workers: 2, Worker: p, Router: router.Config{Mode: router.ModeRoundRobin, BlockSize: 64}, ArrivalSpeedupRatio: 1, RecordRequests: true,
		Disagg: &Disagg{DecodeWorkers: 1, Decode: dd, TransferGBps: 1, KVBytesPerToken: 1000}}
	timer := PoolTimers{Prefill: &fakeTimer{base: 100, perToken: 1}, Decode: &fakeTimer{base: 10, perToken: 1}}
	rep, err := Replay(context.Background(), cfg, timer, tr)
	if err != nil {
		t.Fatal(err)
	}
	ttft := []float64{rep.Requests[0].TTFTMS, rep.Requests[1].TTFTMS}
	slices.Sort(ttft)
	if ttft[0] != 2.1 || ttft[1] != 4.222 {
		t.Fatalf("TTFTs %v ms, want 2.100 and 4.222 (the second prefill waits for the first request's end at 2.122)", ttft)
	}
	if w := rep.Summary.Disagg.MeanDecodeWaitMS; w != 1.061 {
		t.Fatalf("mean wait for the pre-allocation %v ms, want 1.061 (0 and 2.122)", w)
	}
}

// A prompt that cannot fit a decode worker beside SGLang's reserved decode tokens is refused
// with the reason (SGLang would leave it in the pre-allocation queue for ever).
func TestSGLangPreallocationRefusal(t *testing.T) {
	tr := &trace.Trace{Name: "two", BlockSize: 64, Requests: []trace.Request{
		req(0, 1000, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), req(0, 100, 3, 21, 22)}}
	p := deployment(100, 2048, 4)
	p.Backend = model.BackendSGLang
	dd := p
	dd.NumGPUBlocks = 20 // 1,280 tokens
	cfg := Config{Workers: 1, Worker: p, Router: router.DefaultConfig(), ArrivalSpeedupRatio: 1,
		Disagg: &Disagg{DecodeWorkers: 1, Decode: dd, TransferGBps: 1, KVBytesPerToken: 1000}}
	served, rejected, err := cfg.Admit(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(served) != 1 || served[0] != 1 || len(rejected) != 1 || rejected[0].Requests != 1 ||
		!strings.Contains(rejected[0].Reason, "prompt + SGLang's 512 reserved decode tokens exceed a decode worker's 1280 KV tokens") {
		t.Fatalf("served %v, rejected %+v", served, rejected)
	}
	cfg.Strict = true
	if _, _, err := cfg.Admit(tr); err == nil || !strings.Contains(err.Error(), "two:1: input_length 1000: prompt + SGLang's 512") {
		t.Fatalf("strict: %v", err)
	}
}
