package silicon

import (
	"context"
	"fmt"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
)

// Disaggregated rows of AIConfigurator's sample (mode disagg): a prefill pool and a decode
// pool measured together under one client's concurrency. vLLM rows are replayed on a
// disaggregated fleet (engine.Disagg) of the row's shapes and worker counts; SGLang and
// TensorRT-LLM rows are skipped with the reason.

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

// disaggRow reads a disaggregated row's pools into r, or says why it cannot be replayed.
func (p *rowParser) disaggRow(r *Row) {
	switch r.Backend {
	case "sglang":
		r.Unsupported = "mode disagg, SGLang: SGLang's disaggregated serving (its own KV transfer and scheduler) is not priced yet"
		return
	case "trtllm":
		r.Unsupported = "mode disagg, TensorRT-LLM: not priced (Dynamo's replay rejects TensorRT-LLM disaggregation)"
		return
	}
	for _, c := range []string{"prefill_num_workers", "decode_num_workers", "prefill_tp_size", "decode_tp_size"} {
		if _, ok := p.col[c]; !ok || p.str(c) == "" {
			r.Unsupported = "mode disagg: " + c + " not recorded: the pools are unknown"
			return
		}
	}
	opt := func(c string, def, lo int) int {
		if _, ok := p.col[c]; !ok {
			return def
		}
		return p.optional(c, def, lo)
	}
	r.Disagg = &DisaggShape{
		PrefillWorkers: p.positive("prefill_num_workers"), PrefillTP: p.positive("prefill_tp_size"),
		PrefillDP: opt("prefill_attention_dp_size", 1, 1), PrefillMoETP: opt("prefill_moe_tp_size", 0, 0), PrefillMoEEP: opt("prefill_moe_ep_size", 0, 0),
		DecodeWorkers: p.positive("decode_num_workers"), DecodeTP: p.positive("decode_tp_size"),
		DecodeDP: opt("decode_attention_dp_size", 1, 1), DecodeMoETP: opt("decode_moe_tp_size", 0, 0), DecodeMoEEP: opt("decode_moe_ep_size", 0, 0),
	}
	if pp := opt("prefill_pp_size", 1, 1) * opt("decode_pp_size", 1, 1); pp > 1 {
		r.Unsupported = "mode disagg: pipeline parallelism is not modelled"
	}
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
		case x.r.AttentionDP > 1:
			return fmt.Sprintf("%s pool: attention_dp %d: attention data parallelism is not modelled", x.pool, x.r.AttentionDP)
		}
	}
	return ""
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
	pw, err := model.NewWorker(pd)
	if err != nil {
		return 0, 0, err
	}
	dw, err := model.NewWorker(dd)
	if err != nil {
		return 0, 0, err
	}
	pd.NumGPUBlocks, dd.NumGPUBlocks = pw.Capacity().NumGPUBlocks, dw.Capacity().NumGPUBlocks
	rc := router.DefaultConfig()
	rc.BlockSize = pd.BlockSize
	cfg := engine.Config{Workers: r.Disagg.PrefillWorkers, Worker: pd, Router: rc, ReplayConcurrency: r.Concurrency, Seed: seed,
		Disagg: &engine.Disagg{DecodeWorkers: r.Disagg.DecodeWorkers, Decode: dd, TransferGBps: TransferGBps, KVBytesPerToken: pw.KVBytesPerTokenModel()}}
	rep, err := benchmarkRun(ctx, cfg, engine.PoolTimers{Prefill: pw, Decode: dw}, r, b, seed)
	if err != nil {
		return 0, 0, err
	}
	return rep.Summary.MeanTTFTMS, rep.Summary.MeanTPOTMS, nil
}
