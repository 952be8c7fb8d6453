package silicon

import (
	"context"
	"fmt"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
)

// Disaggregated rows of AIConfigurator's sample (mode disagg): a prefill pool and a decode
// pool measured together under one client's concurrency. Every backend's rows are read; a
// vLLM row is replayed on a disaggregated fleet (engine.Disagg) of the row's shapes and worker
// counts, and each row that is not says why (disaggSkipOf: the first of the pools' labels,
// their tables, the backend's disaggregated serving).

// DisaggShape is a disaggregated row's two pools: each worker's layout and how many.
type DisaggShape struct {
	PrefillWorkers int `json:"prefill_num_workers"`
	PrefillTP      int `json:"prefill_tp_size"`
	PrefillDP      int `json:"prefill_attention_dp_size"`
	PrefillMoETP   int `json:"prefill_moe_tp_size"`
	PrefillMoEEP   int `json:"prefill_moe_ep_size"`
	DecodeWorkers  int `json:"decode_num_workers"`
	DecodeTP       int `json:"decode_tp_size"`
	DecodeDP       int `json:"decode_attention_dp_size"`
	DecodeMoETP    int `json:"decode_moe_tp_size"`
	DecodeMoEEP    int `json:"decode_moe_ep_size"`
}

// TransferGBps is the KV transfer bandwidth a disaggregated row is replayed with: Dynamo's
// mocker default (kv_transfer_bandwidth 64 GB/s, inter-node InfiniBand,
// lib/mocker/src/common/protocols.rs at 04c3ab60); the sample does not record the runs'
// interconnect.
const TransferGBps = 64

// disaggRow reads a disaggregated row's pools into r, or says why they cannot be known.
func (p *rowParser) disaggRow(r *Row) {
	for _, c := range []string{"prefill_num_workers", "decode_num_workers", "prefill_tp_size", "decode_tp_size"} {
		if _, ok := p.col[c]; !ok || p.str(c) == "" {
			r.Unsupported = "mode disagg: " + c + " not recorded: the pools are unknown"
			return
		}
	}
	r.Disagg = &DisaggShape{
		PrefillWorkers: p.positive("prefill_num_workers"), PrefillTP: p.positive("prefill_tp_size"),
		PrefillDP: p.optionalCol("prefill_attention_dp_size", 1, 1), PrefillMoETP: p.optionalCol("prefill_moe_tp_size", 0, 0), PrefillMoEEP: p.optionalCol("prefill_moe_ep_size", 0, 0),
		DecodeWorkers: p.positive("decode_num_workers"), DecodeTP: p.positive("decode_tp_size"),
		DecodeDP: p.optionalCol("decode_attention_dp_size", 1, 1), DecodeMoETP: p.optionalCol("decode_moe_tp_size", 0, 0), DecodeMoEEP: p.optionalCol("decode_moe_ep_size", 0, 0),
	}
	if pp := p.optionalCol("prefill_pp_size", 1, 1) * p.optionalCol("decode_pp_size", 1, 1); pp > 1 {
		r.Unsupported = "mode disagg: pipeline parallelism is not modelled"
	}
}

// optionalCol is optional for a column the file may lack altogether (def).
func (p *rowParser) optionalCol(c string, def, lo int) int {
	if _, ok := p.col[c]; !ok {
		return def
	}
	return p.optional(c, def, lo)
}

// disaggConcurrency is the client concurrency of a disaggregated row that does not record
// silicon_concurrency (AIConfigurator's gap-analysis rows, "c_" in their ids): its decode
// pool's batch, decode_batch_size × decode_num_workers × decode_attention_dp_size, the identity
// every disaggregated row of the sample that records both satisfies (267 of them, all three
// backends; TestDisaggConcurrencyIdentity). 0 when decode_batch_size is not recorded.
func (p *rowParser) disaggConcurrency(s *DisaggShape) int {
	if _, ok := p.col["decode_batch_size"]; !ok || p.str("decode_batch_size") == "" {
		return 0
	}
	c := p.bounded("decode_batch_size", MaxConcurrency)
	for _, f := range []int{s.DecodeWorkers, s.DecodeDP} {
		if f > MaxConcurrency/max(c, 1) {
			p.fail("decode_batch_size", "times decode_num_workers and decode_attention_dp_size exceeds %d, the limit of a replayed row's concurrency", MaxConcurrency)
			return 0
		}
		c *= f
	}
	return c
}

// pools are the row's prefill and decode workers as rows of one worker each (the layout
// fields), for the aggregated path's label readings and deployment.
func (s *DisaggShape) pools(r Row) (prefill, decode Row) {
	prefill, decode = r, r
	prefill.Disagg, decode.Disagg = nil, nil
	prefill.TP, prefill.AttentionDP, prefill.MoETP, prefill.MoEEP = s.PrefillTP, s.PrefillDP, s.PrefillMoETP, s.PrefillMoEEP
	decode.TP, decode.AttentionDP, decode.MoETP, decode.MoEEP = s.DecodeTP, s.DecodeDP, s.DecodeMoETP, s.DecodeMoEEP
	return prefill, decode
}

// disaggSkip is why a disaggregated row's pools cannot be replayed, or "".
func disaggSkip(prefill, decode Row) string {
	for _, x := range []struct {
		pool string
		r    Row
	}{{"prefill", prefill}, {"decode", decode}} {
		switch {
		case x.r.MoETP*x.r.MoEEP != x.r.TP*x.r.AttentionDP:
			return fmt.Sprintf("%s pool: labels tp %d, attention_dp %d, moe_tp %d, moe_ep %d do not describe one worker", x.pool, x.r.TP, x.r.AttentionDP, x.r.MoETP, x.r.MoEEP)
		case x.r.AttentionDP > 1 && model.Backend(x.r.Backend).OrDefault() == model.BackendSGLang:
			return fmt.Sprintf("%s pool: attention_dp %d: SGLang's attention data parallelism in a disaggregated fleet is not modelled", x.pool, x.r.AttentionDP)
		}
	}
	return ""
}

// poolsPriced says why a disaggregated row's pools have no step times, or "": each pool's
// deployment loads its table (a pool of attention ranks its rank's and its experts' width's,
// model/attentiondp.go), or the loader's reason (which names what is missing) is the row's. seen keeps the answers by deployment.
func poolsPriced(pd, dd model.Deployment, seen map[model.Deployment]string) string {
	for _, x := range []struct {
		pool string
		d    model.Deployment
	}{{"prefill", pd}, {"decode", dd}} {
		why, ok := seen[x.d]
		if !ok {
			if _, err := model.NewWorker(x.d); err != nil {
				why = x.pool + " pool: " + err.Error()
				if x.d.AttentionDP > 1 {
					why = fmt.Sprintf("%s pool: attention_dp %d: %s", x.pool, x.d.AttentionDP, attentionDPWhat(err, x.d))
				}
			}
			seen[x.d] = why
		}
		if why != "" {
			return why
		}
	}
	return ""
}

// disaggBackendSkip is why a disaggregated row whose pools are priced is still not replayed
// under benchmark profile o, or "": TensorRT-LLM's disaggregated serving is not modelled, and
// an SGLang row under the inferencex profile needs its own run's settings (vLLM's rows fall
// back to the seed's run, as aggregated ones do). Its rows reach this reason only once their
// labels and tables would allow a replay.
func disaggBackendSkip(r Row, o Options) string {
	switch model.Backend(r.Backend).OrDefault() {
	case model.BackendTRTLLM:
		return "TensorRT-LLM's disaggregated serving is not modelled: both pools are priced, but Dynamo's replay rejects TensorRT-LLM disaggregation and so does routerlab"
	case model.BackendSGLang:
		if _, ok := listedRun(r); !ok && o.Benchmark.Name == "inferencex" {
			return "SGLang: both pools are priced, but no run of silicon/runs.go measured this row: its servers' settings are unknown"
		}
	}
	return ""
}

// derivedLoadSkip checks a derived concurrency (disaggConcurrency) against the row's own
// TPOT: every decode step reads each GPU's shard of the weights and of every running
// sequence's KV at least once, so at the GPU's peak HBM bandwidth (mem_bw, without
// AIConfigurator's empirical derating) and with the smallest KV cache vLLM serves (FP8, one
// byte per element) a decode worker's step takes at least
// (weight bytes + sequences × mean context × KV bytes per token) ÷ mem_bw per GPU. Of a MoE
// model's routed experts a step is sure to read only top-k per layer (every token may pick
// the same ones), so the floor counts top-k ÷ experts of their shard. A measured TPOT below
// that floor means the label is not the load the row measured: the row is skipped with the
// arithmetic. "" when the label is consistent.
func derivedLoadSkip(r Row, dd model.Deployment) string {
	if !r.ConcurrencyDerived || r.Disagg.DecodeDP > 1 {
		return ""
	}
	w, err := model.NewWorker(dd)
	if err != nil {
		return "" // poolsPriced reports it
	}
	c := w.Capacity()
	kvPerGPU := float64(c.KVBytesPerToken) / float64(c.KVElementBytes) // FP8: one byte per element
	seqs := float64(r.Concurrency) / float64(r.Disagg.DecodeWorkers)
	ctx := float64(r.ISL) + float64(r.OSL)/2
	weights := float64(c.WeightBytes)
	if s := w.Table().LLM; s.MoE() {
		weights -= float64(w.RoutedExpertBytes()) * (1 - float64(s.TopK)/float64(s.Experts))
	}
	bytes := weights + seqs*ctx*kvPerGPU
	floorMS := bytes / w.Table().GPU.MemBW * 1e3
	if r.TPOTMS >= floorMS {
		return ""
	}
	return fmt.Sprintf("silicon_concurrency not recorded, and decode_batch_size × decode_num_workers = %d is not the load this row measured: "+
		"%.0f sequences per decode worker at a mean context of %.0f tokens read at least %.1f GB per GPU per step (weights, top-k experts of a MoE, an FP8 KV cache), "+
		"%.2f ms at %s's peak %.0f GB/s, above the measured TPOT %.2f ms",
		r.Concurrency, seqs, ctx, bytes/1e9, floorMS, dd.HardwareSKU, w.Table().GPU.MemBW/1e9, r.TPOTMS)
}

// derivedNote says how a row's concurrency was read when it does not record one.
func derivedNote(r Row) string {
	return fmt.Sprintf("concurrency %d read as decode_batch_size × decode_num_workers %d × decode_attention_dp_size %d (silicon_concurrency not recorded)",
		r.Concurrency, r.Disagg.DecodeWorkers, r.Disagg.DecodeDP)
}

// disaggDeployments are a disaggregated row's two pools' deployments under benchmark b: the
// decode pool without prefix caching, as Spica runs it.
func disaggDeployments(r Row, b Benchmark) (prefill, decode model.Deployment, skip string) {
	pr, dr := r.Disagg.pools(r)
	pr, _, _ = denseLabels(pr)
	dr, _, _ = denseLabels(dr)
	if skip := disaggSkip(pr, dr); skip != "" {
		return prefill, decode, skip
	}
	prefill, decode = b.deployment(pr), b.deployment(dr)
	decode.NoPrefixCaching = true
	return prefill, decode, ""
}

// replayDisagg runs a disaggregated row's benchmark on a fleet of its pools.
func replayDisagg(ctx context.Context, pd, dd model.Deployment, r Row, b Benchmark, seed uint64) (ttft, tpot float64, err error) {
	rep, err := disaggReport(ctx, pd, dd, r, b, seed)
	if err != nil {
		return 0, 0, err
	}
	return rep.Summary.MeanTTFTMS, rep.Summary.MeanTPOTMS, nil
}

// disaggReport is the report of replayDisagg's timed run: its TTFT's parts by pool too.
func disaggReport(ctx context.Context, pd, dd model.Deployment, r Row, b Benchmark, seed uint64) (*engine.Report, error) {
	pw, err := model.NewWorker(pd)
	if err != nil {
		return nil, err
	}
	dw, err := model.NewWorker(dd)
	if err != nil {
		return nil, err
	}
	pd.NumGPUBlocks, dd.NumGPUBlocks = pw.Capacity().NumGPUBlocks, dw.Capacity().NumGPUBlocks
	rc := router.DefaultConfig()
	rc.BlockSize = pd.BlockSize
	cfg := engine.Config{Workers: r.Disagg.PrefillWorkers, Worker: pd, Router: rc, ReplayConcurrency: r.Concurrency, Seed: seed,
		Disagg: &engine.Disagg{DecodeWorkers: r.Disagg.DecodeWorkers, Decode: dd, TransferGBps: TransferGBps, KVBytesPerToken: pw.KVBytesPerTokenModel()}}
	return benchmarkRun(ctx, cfg, engine.PoolTimers{Prefill: pw, Decode: dw}, r, b, seed)
}
