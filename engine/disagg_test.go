package engine

import (
	"context"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// inTransit is the block tables w holds for requests between their prefill and their decode:
// a prefill worker's copy until the transfer ends, a decode worker's reservation from the
// transfer's start (under SGLang from its pre-allocation, and until it takes the landed
// request into its running batch).
func inTransit(s *Sim, w *worker) [][]int32 {
	d := s.dis
	if d == nil {
		return nil
	}
	var out [][]int32
	if pd := d.pd; pd != nil && w.spec.decode {
		for ri, b := range pd.dstBlocks {
			if b != nil && d.first+int(pd.dst[ri]) == w.id {
				out = append(out, b)
			}
		}
		for _, ri := range pd.landed[w.id-d.first] {
			out = append(out, s.reqs[ri].fl.blocks)
		}
	}
	for ri, src := range d.src {
		if src == nil {
			continue
		}
		if int(d.srcWorker[ri]) == w.id {
			out = append(out, src)
		}
		if r := &s.reqs[ri]; int(r.worker) == w.id {
			out = append(out, r.fl.blocks) // empty while the reservation waits
		}
	}
	return out
}

// genDisagg makes cfg, drawn by genConfig, a disaggregated fleet: cfg.Workers prefill
// workers and a drawn decode pool, with a drawn transfer.
func genDisagg(t *rapid.T, cfg Config) Config {
	d := cfg.Worker
	d.MaxNumBatchedTokens = rapid.IntRange(8, 512).Draw(t, "decode_budget")
	d.MaxNumSeqs = rapid.IntRange(1, 8).Draw(t, "decode_seqs")
	d.NoPrefixCaching = rapid.Bool().Draw(t, "decode_no_prefix_caching")
	d.NumGPUBlocks = cfg.Worker.NumGPUBlocks + rapid.IntRange(0, 20).Draw(t, "decode_extra_blocks")
	cfg.Disagg = &Disagg{
		DecodeWorkers:   rapid.IntRange(1, 3).Draw(t, "decode_workers"),
		Decode:          d,
		TransferGBps:    rapid.SampledFrom([]float64{0, 0.001, 0.05}).Draw(t, "transfer_gbps"),
		KVBytesPerToken: int64(rapid.IntRange(1, 4096).Draw(t, "kv_bytes_per_token")),
		TransferMode:    TransferMode(rapid.SampledFrom(TransferModes()).Draw(t, "transfer_mode")),
	}
	return cfg
}

// transferUS is how long request r's KV takes to move when hit tokens are at the destination.
func transferUS(dg *Disagg, isl, hit int32) int64 {
	moved := float64(isl)
	if dg.TransferMode == TransferDestinationMissing {
		moved -= float64(hit)
	}
	if dg.TransferGBps == 0 {
		return 0
	}
	return int64(math.Ceil(moved * float64(dg.KVBytesPerToken) / (dg.TransferGBps * 1e3)))
}

// Every request is prefilled once on a prefill worker and decoded on exactly one decode
// worker; a transfer moves as many blocks as the prefill computed and the decode reserved;
// no decode starts before its transfer ends, which lasts the bytes over the bandwidth; the
// pools' invariants hold after every event, and the decode fast path changes nothing.
func TestDisaggInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tb := rapid.SampledFrom([]int{64, 128, 512}).Draw(t, "trace_block")
		tr := genTrace(t, tb)
		cfg := genDisagg(t, genConfig(t, tr))
		runDisaggChecked(t, cfg, tr, func(s *Sim, ri int32, r *request) {
			d := s.dis
			switch {
			case int(r.worker) < d.first:
				t.Fatalf("request %d completes on prefill worker %d", ri, r.worker)
			case d.landed[ri] < d.reserved[ri] || d.reserved[ri] < d.prefilled[ri] || d.prefilled[ri] < r.arrival:
				t.Fatalf("request %d: prefilled %d, reserved %d, landed %d", ri, d.prefilled[ri], d.reserved[ri], d.landed[ri])
			case r.firstTok <= d.landed[ri]:
				t.Fatalf("request %d: first token at %d, its KV landed at %d", ri, r.firstTok, d.landed[ri])
			}
		}, func(s *Sim, e event) {
			d := s.dis
			if e.phase == phaseTransferDone {
				r := &s.reqs[e.id]
				hit := d.hit[e.id] * s.blockSize // cached at the destination when reserved
				if got, want := e.time-d.reserved[e.id], transferUS(cfg.Disagg, r.isl, hit); got != want {
					t.Fatalf("request %d: transfer took %d µs, want %d", e.id, got, want)
				}
			}
			checkConserved(t, s)
			for i := range s.workers {
				w := &s.workers[i]
				for _, ri := range w.running {
					if w.spec.decode && d.src[ri] != nil {
						t.Fatalf("request %d runs on decode worker %d before its transfer ends", ri, i)
					}
					if w.spec.prefill && s.reqs[ri].fl.generated > 0 {
						t.Fatalf("request %d decodes on prefill worker %d", ri, i)
					}
				}
			}
		})
	})
}

// checkConserved fails t unless every request in transfer holds its prompt's blocks on both
// sides: KV blocks are conserved through the transfer.
func checkConserved(t *rapid.T, s *Sim) {
	for ri, src := range s.dis.src {
		r := &s.reqs[ri]
		if src == nil || len(r.fl.blocks) == 0 {
			continue
		}
		if want := int(s.blocksFor(r.isl)); len(src) != want || len(r.fl.blocks) != want {
			t.Fatalf("request %d: prefill holds %d blocks, decode reserved %d, prompt needs %d", ri, len(src), len(r.fl.blocks), want)
		}
	}
}

// runDisaggChecked replays disaggregated fleet cfg on drawn step times, step by step and
// with the decode fast path, checking the pools after every event, done on each completed
// request and also after every event; then that every request was prefilled once (on a prefill
// worker, or on its decode worker when conditional disaggregation bypassed), decoded on
// a decode worker and completed with all its tokens, every pool drained, and that both loops
// gave one report.
func runDisaggChecked(t *rapid.T, cfg Config, tr *trace.Trace, done func(s *Sim, ri int32, r *request), also func(s *Sim, e event)) {
	timer := PoolTimers{
		Prefill: &fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "base")), perToken: 1},
		Decode:  &fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "decode_base")), perToken: 2},
	}
	runDisaggTimed(t, cfg, timer, tr, done, also)
}

// runDisaggTimed is runDisaggChecked on the pools' step timers of timer.
func runDisaggTimed(t *rapid.T, cfg Config, timer PoolTimers, tr *trace.Trace, done func(s *Sim, ri int32, r *request), also func(s *Sim, e event)) {
	var reports [2]string
	for i, stepwise := range []bool{true, false} {
		s, err := New(cfg, timer, tr)
		if err != nil {
			t.Fatal(err)
		}
		s.stepwise = stepwise
		mirror := newKVMirror(len(s.workers))
		s.onKV = mirror.apply
		index := map[*request]int32{}
		for k := range s.reqs {
			index[&s.reqs[k]] = int32(k)
		}
		s.onDone = func(r *request) {
			ri := index[r]
			if f := r.fl; f.generated != r.out || f.tokens != r.isl+r.out {
				t.Fatalf("request %d completes with %+v", ri, *f)
			}
			done(s, ri, r)
		}
		runChecked(t, s, mirror, nil, func(e event) { also(s, e) })
		prefilled, decoded := 0, 0
		for i := range s.workers {
			w := &s.workers[i]
			if len(w.running) != 0 || w.waiting.len() != 0 || w.pool.inUse != 0 {
				t.Fatalf("worker %d not drained", i)
			}
			if w.spec.prefill {
				prefilled += w.requests
			} else {
				decoded += w.requests
			}
		}
		// A request conditional disaggregation bypassed is prefilled on its decode worker.
		if prefilled+s.dis.bypassed != len(tr.Requests) || decoded != len(tr.Requests) || s.completed != len(tr.Requests) {
			t.Fatalf("%d requests: %d prefilled on prefill workers, %d bypassed, %d decoded, %d completed",
				len(tr.Requests), prefilled, s.dis.bypassed, decoded, s.completed)
		}
		rep, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		reports[i] = reportJSON(t, rep)
	}
	if reports[0] != reports[1] {
		t.Fatalf("decode fast path changed the report:\n%s\n%s", reports[0], reports[1])
	}
}

// With one worker per pool, a free transfer, pools too large to evict and one request at a
// time, a disaggregated fleet differs from an aggregated one only by the decode worker's
// step that computes the prompt's last token: the same prefix hits, the same decode
// stretch, and TTFT and e2e latency later by exactly that step.
func TestDisaggAgreesWithAggAtZeroTransfer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := genTrace(t, 64)
		need := 0
		for _, r := range tr.Requests {
			need += (r.InputLength + r.OutputLength + 63) / 64
		}
		d := deployment(need, rapid.IntRange(8, 512).Draw(t, "budget"), rapid.IntRange(1, 8).Draw(t, "max_seqs"))
		rc := router.DefaultConfig()
		agg := Config{Workers: 1, Worker: d, Router: rc, ReplayConcurrency: 1, RecordRequests: true}
		dis := agg
		dis.Disagg = &Disagg{DecodeWorkers: 1, Decode: d, KVBytesPerToken: 1 << 18}
		timer := &fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "base")), perToken: int64(rapid.IntRange(0, 3).Draw(t, "per_token"))}
		a, err := Replay(context.Background(), agg, timer, tr)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Replay(context.Background(), dis, PoolTimers{Prefill: timer, Decode: timer}, tr)
		if err != nil {
			t.Fatal(err)
		}
		if a.Summary.PrefixCacheReusedRatio != b.Summary.PrefixCacheReusedRatio {
			t.Fatalf("prefix reuse: agg %v, disagg %v", a.Summary.PrefixCacheReusedRatio, b.Summary.PrefixCacheReusedRatio)
		}
		step := float64(timer.base+timer.perToken) / 1000 // one token's step, ms
		for i := range a.Requests {
			x, y := a.Requests[i], b.Requests[i]
			if x.ID != y.ID || x.CachedTokens != y.CachedTokens ||
				math.Abs(y.TTFTMS-x.TTFTMS-step) > 1e-9 || math.Abs((y.E2EMS-y.TTFTMS)-(x.E2EMS-x.TTFTMS)) > 1e-9 {
				t.Fatalf("request %d: agg %+v, disagg %+v (one step %g ms)", x.ID, x, y, step)
			}
		}
	})
}

// handoffReplay replays one 1,000-token prompt of 3 output tokens on one prefill and two
// decode workers of backend b: steps of 100 µs (prefill) or 10 µs (decode) plus 1 µs a
// token, the KV at 1 GB/s and 1,000 bytes a token.
func handoffReplay(t *testing.T, b model.Backend) *Report {
	t.Helper()
	tr := &trace.Trace{Name: "one", BlockSize: 64, Requests: []trace.Request{req(0, 1000, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)}}
	d := deployment(100, 2048, 4)
	d.Backend = b
	cfg := Config{Workers: 1, Worker: d, Router: router.DefaultConfig(), ReplayConcurrency: 1, RecordRequests: true,
		Disagg: &Disagg{DecodeWorkers: 2, Decode: d, TransferGBps: 1, KVBytesPerToken: 1000}}
	timer := PoolTimers{Prefill: &fakeTimer{base: 100, perToken: 1}, Decode: &fakeTimer{base: 10, perToken: 1}}
	rep, err := Replay(context.Background(), cfg, timer, tr)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A handoff's timing, by hand: a 1,000-token prompt at 1 GB/s and 1,000 bytes per token
// moves in 1,000 µs after a prefill of 100 + 1,000 µs. vLLM's decode worker then computes the
// prompt's last token (11 µs) and decodes two more (11 µs each). Under SGLang the prefill's
// token is the first one, which the idle decode worker streams as the KV lands
// (disagg_sglang.go): TTFT 11 µs sooner, and one decode fewer.
func TestDisaggHandoffTimeline(t *testing.T) {
	for _, c := range []struct {
		backend         model.Backend
		ttft, e2e, dec1 float64
		share           float64 // prefill's part of TTFT
	}{{model.BackendVLLM, 2.111, 2.133, 0.011, 0.52108}, {model.BackendSGLang, 2.1, 2.122, 0, 0.52381}} { // 1,100 of 2,111 and of 2,100 µs
		rep := handoffReplay(t, c.backend)
		r := rep.Requests[0]
		if r.TTFTMS != c.ttft || r.E2EMS != c.e2e || r.Worker != 1 && r.Worker != 2 {
			t.Fatalf("%s: record %+v, want TTFT %v ms, e2e %v ms on a decode worker", c.backend, r, c.ttft, c.e2e)
		}
		if h := r.Handoff; h == nil || *h != (Handoff{PrefillWorker: 0, TransferMS: 1}) {
			t.Fatalf("%s: record's handoff %+v, want prefill worker 0 and a 1 ms transfer", c.backend, h)
		}
		got := *rep.Summary.Disagg
		want := DisaggSummary{
			Prefill:       PoolSummary{Workers: 1, Requests: 1, PeakBlockShare: 0.16, RequestImbalance: 1},
			Decode:        PoolSummary{Workers: 2, Requests: 1, PeakBlockShare: 0.16, RequestImbalance: 2}, // 1,003 tokens in 16 blocks
			MeanPrefillMS: 1.1, MeanTransferMS: 1, MeanFirstDecodeMS: c.dec1, TransferGB: 0.001,            // 10⁶ bytes
			P95TransferMS: 1, PrefillTTFTShare: c.share,
		}
		if got != want {
			t.Fatalf("%s: disagg summary %+v, want %+v", c.backend, got, want)
		}
	}
}

// Under the dynosim reference each pool's steps are shaped as Dynamo's mocker prices them:
// the prefill worker's last chunk samples the first token within its prefill pass (no
// decode pass), and the decode worker's first step for a handed-off request is one plain
// decode at the prompt's context (no prefill pass). Under silicon the prefill's last chunk
// carries the first token and the decode worker computes the prompt's last token as a
// one-token chunk.
func TestDisaggDynosimPoolBatches(t *testing.T) {
	tr := &trace.Trace{Name: "one", BlockSize: 64, Requests: []trace.Request{req(0, 300, 3, 1, 2, 3, 4, 5)}}
	for _, ref := range []string{model.ReferenceSilicon, model.ReferenceDynosim} {
		d := deployment(100, 200, 4)
		d.TimingReference = ref
		cfg := Config{Workers: 1, Worker: d, Router: router.DefaultConfig(), ReplayConcurrency: 1,
			Disagg: &Disagg{DecodeWorkers: 1, Decode: d, KVBytesPerToken: 1000}}
		var pools [2][]model.Batch
		rec := func(k int) model.StepTimer {
			return timerFunc(func(b *model.Batch) int64 {
				pools[k] = append(pools[k], model.Batch{Prefill: append([]model.Chunk(nil), b.Prefill...), Decodes: b.Decodes,
					DecodeContextTokens: b.DecodeContextTokens, FirstTokens: b.FirstTokens, FirstTokenContextTokens: b.FirstTokenContextTokens})
				return 100
			})
		}
		if _, err := Replay(context.Background(), cfg, PoolTimers{Prefill: rec(0), Decode: rec(1)}, tr); err != nil {
			t.Fatal(err)
		}
		chunk := func(n, cached, first int) model.Batch {
			b := model.Batch{Prefill: []model.Chunk{{NewTokens: n, CachedTokens: cached}}, FirstTokens: first}
			if first > 0 {
				b.FirstTokenContextTokens = int64(cached + n)
			}
			return b
		}
		decode := func(ctx int64) model.Batch {
			return model.Batch{Prefill: []model.Chunk{}, Decodes: 1, DecodeContextTokens: ctx}
		}
		want := [2][]model.Batch{{chunk(200, 0, 0), chunk(100, 200, 1)}, {chunk(1, 299, 1), decode(301), decode(302)}}
		if ref == model.ReferenceDynosim {
			want = [2][]model.Batch{{chunk(200, 0, 0), chunk(100, 200, 0)}, {decode(300), decode(301), decode(302)}}
		}
		for k := range pools {
			if len(pools[k]) != len(want[k]) {
				t.Fatalf("%s: pool %d batches %+v, want %+v", ref, k, pools[k], want[k])
			}
			for j := range want[k] {
				g, w := pools[k][j], want[k][j]
				if len(g.Prefill) != len(w.Prefill) || len(g.Prefill) > 0 && g.Prefill[0] != w.Prefill[0] ||
					g.Decodes != w.Decodes || g.DecodeContextTokens != w.DecodeContextTokens ||
					g.FirstTokens != w.FirstTokens || g.FirstTokenContextTokens != w.FirstTokenContextTokens {
					t.Fatalf("%s: pool %d step %d %+v, want %+v", ref, k, j, g, w)
				}
			}
		}
	}
}
