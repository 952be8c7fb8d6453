package backend

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/tui"
)

// The explorer's disaggregated fleet (tui/disagg.go): the knobs' Replicas workers of one
// layout, Prefill of them the prefill pool and the rest the decode pool, each pool with the
// experiment's prefill_* and decode_* scalar keys (config.File.SplitPools), and its KV
// transfer (config.File.DisaggEngine) and conditional disaggregation as the knobs have it.

// disaggFits says why deployment dk cannot be disaggregated ("" when it can): Dynamo's
// replay disaggregates vLLM workers only, and a pool needs a worker.
func (s *Sim) disaggFits(dk tui.Deployment) string {
	d := s.base.Worker
	if err := s.deploy(&d, dk); err != nil {
		return err.Error()
	}
	if b := d.Backend.OrDefault(); b != model.BackendVLLM {
		return fmt.Sprintf("backend %s: disaggregated fleets are modelled for vLLM workers only (e cycles the backend)", b)
	}
	if s.base.Fleet != nil {
		return "a fleet the planner scales is not modelled disaggregated"
	}
	return ""
}

// split makes cfg, whose deployment is set (its KV blocks the file's, 0 when derived), the
// disaggregated fleet of k, each pool's blocks resolved.
func (s *Sim) split(cfg *engine.Config, k tui.Knobs) error {
	dk := k.Deployment
	switch {
	case k.Index.G2Blocks > 0:
		return fmt.Errorf("num_g2_blocks: KV tiers are not modelled for a disaggregated fleet; set them to 0 or join the pools (a)")
	case cfg.Router.Load.TrackOutputBlocks:
		return fmt.Errorf("router_track_output_blocks: Dynamo's prefill router tracks no active blocks; set it to false or join the pools (a)")
	case dk.Prefill >= dk.Replicas:
		return fmt.Errorf("prefill workers: %d of %d leaves the decode pool empty", dk.Prefill, dk.Replicas)
	}
	prefill, _ := s.exp.File.SplitPools(cfg.Worker)
	_, decode := s.exp.File.SplitPools(cfg.Worker)
	if dk.DecodeLayout != "" || dk.DecodeBatchedTokens > 0 || dk.DecodeSeqs > 0 {
		dd := s.base.Worker
		if err := s.deploy(&dd, decodeOf(dk)); err != nil {
			return err
		}
		_, decode = s.exp.File.SplitPools(dd)
	}
	if dk.Conditional {
		// vLLM decode workers under conditional disaggregation run with
		// --enable-conditional-disagg, which publishes their KV (ai-dynamo/dynamo
		// docs/components/router/router-disaggregated-serving.md, "Backend Requirements").
		decode.NoPrefixCaching = false
	}
	var kvBytes int64
	for _, d := range []*model.Deployment{&prefill, &decode} {
		w, err := s.worker(*d)
		if err != nil {
			return err
		}
		if d.NumGPUBlocks == 0 {
			d.NumGPUBlocks = w.Capacity().NumGPUBlocks
		}
		if d == &prefill {
			kvBytes = w.KVBytesPerTokenModel()
		}
	}
	cfg.Worker, cfg.Workers = prefill, dk.Prefill
	cfg.Disagg = s.exp.File.DisaggEngine(dk.Replicas-dk.Prefill, decode, kvBytes)
	return s.conditional(cfg, dk)
}

// conditional sets cfg's conditional disaggregation as the knobs have it (`c`): on at the
// file's isl_bounding thresholds, or off.
func (s *Sim) conditional(cfg *engine.Config, dk tui.Deployment) error {
	if !dk.Conditional {
		cfg.Disagg.Conditional = nil
		return nil
	}
	if cfg.Router.Mode != router.ModeKV {
		return fmt.Errorf("router_conditional_disagg: needs router_mode kv_router (Dynamo's frontend refuses --router-conditional-disagg outside --router-mode kv); c turns it off")
	}
	c := s.exp.File.Disagg.ConditionalThresholds()
	cfg.Disagg.Conditional = &c
	return nil
}

// conditionalRule is isl_bounding's rule at c's thresholds, in words.
func conditionalRule(c engine.ConditionalDisagg) string {
	return fmt.Sprintf("a decode worker lacking < %d tokens and < %s of a prompt prefills it",
		c.EffISLThreshold, strconv.FormatFloat(c.EffISLRatioThreshold, 'g', -1, 64))
}

// conditionalSets are the --set overrides of the knobs' conditional disaggregation where it
// differs from the file's (an aggregated fleet has it off); on, the sweep's router_mode
// list holds kv_router alone, the only mode Dynamo's frontend runs it under, and the decode
// pool caches prefixes.
func (s *Sim) conditionalSets(dk tui.Deployment) []string {
	on := dk.Conditional && dk.Prefill > 0
	var sets []string
	switch f := s.exp.File; {
	case on && !f.Disagg.ConditionalOn():
		sets = append(sets, "router_conditional_disagg=true", config.KeyRouterMode+"=["+string(router.ModeKV)+"]")
	case !on && f.Disagg.ConditionalOn():
		sets = append(sets, "router_conditional_disagg=false")
	}
	if c := s.exp.File.Disagg.DecodePrefixCaching; on && (c == nil || !*c) {
		sets = append(sets, "decode_enable_prefix_caching=true")
	}
	return sets
}

// timer prices cfg's steps: w, or each pool on its own worker model.
func (s *Sim) timer(cfg engine.Config, w *model.Worker) (model.StepTimer, error) {
	if cfg.Disagg == nil {
		return w, nil
	}
	p, err := s.worker(cfg.Worker)
	if err != nil {
		return nil, err
	}
	d, err := s.worker(cfg.Disagg.Decode)
	if err != nil {
		return nil, err
	}
	return engine.PoolTimers{Prefill: p, Decode: d}, nil
}

// disaggMetrics are the explorer's figures of a disaggregated summary and its mean TPOT.
func disaggMetrics(d *engine.DisaggSummary, tpot float64) *tui.DisaggMetrics {
	pool := func(p engine.PoolSummary) tui.PoolMetrics {
		return tui.PoolMetrics{Workers: p.Workers, PrefixHit: p.PrefixHitRatio, PeakBlockShare: p.PeakBlockShare, Imbalance: p.RequestImbalance}
	}
	return &tui.DisaggMetrics{
		PrefillMS: d.MeanPrefillMS, DecodeWaitMS: d.MeanDecodeWaitMS, TransferMS: d.MeanTransferMS, FirstDecodeMS: d.MeanFirstDecodeMS,
		TransferP95MS: d.P95TransferMS, TransferGB: d.TransferGB, PrefillTTFTShare: d.PrefillTTFTShare, TPOTMS: tpot,
		Prefill: pool(d.Prefill), Decode: pool(d.Decode), Bypassed: d.Bypassed,
	}
}

// evalKnobs are a sweep evaluation's knobs (knobs of its configuration at at) and, for a
// disaggregated fleet, its pools: the fleet's split goes into the knobs, so the sweep
// table keeps two splits of one router point apart.
func evalKnobs(cfg map[string]string, at tui.Knobs, runs []engine.Summary) (tui.Knobs, *tui.DisaggMetrics) {
	k := knobs(cfg, at)
	if len(runs) == 0 || runs[0].Disagg == nil {
		return k, nil
	}
	d, _, tpot := sweep.MeanDisagg(runs)
	k.Deployment.Prefill, k.Deployment.Replicas = d.Prefill.Workers, d.Prefill.Workers+d.Decode.Workers
	return k, disaggMetrics(&d, tpot)
}

// decodeOf is the decode pool of dk as a deployment of its own: its layout and engine limits
// where dk names them.
func decodeOf(dk tui.Deployment) tui.Deployment {
	d := dk
	d.Layout = cmp.Or(dk.DecodeLayout, dk.Layout)
	d.MaxBatchedTokens = cmp.Or(dk.DecodeBatchedTokens, dk.MaxBatchedTokens)
	d.MaxSeqs = cmp.Or(dk.DecodeSeqs, dk.MaxSeqs)
	d.Prefill, d.DecodeLayout, d.DecodeBatchedTokens, d.DecodeSeqs = 0, "", 0, 0
	return d
}

// fileSplit puts a disaggregated experiment's own split into d, whose fields are its prefill
// pool's: the pools' workers, and the decode pool's layout and engine limits where they
// differ from the prefill pool's.
func (s *Sim) fileSplit(d *tui.Deployment, dg *engine.Disagg) {
	dec := dg.Decode
	d.Replicas, d.Prefill = s.base.Workers+dg.DecodeWorkers, s.base.Workers
	d.Conditional = dg.Conditional != nil
	if l := layoutName(dec.Layout(), s.catalog.moe[dec.ModelName], dec.Quantization); l != d.Layout {
		d.DecodeLayout = l
	}
	if dec.MaxNumBatchedTokens != d.MaxBatchedTokens {
		d.DecodeBatchedTokens = dec.MaxNumBatchedTokens
	}
	if dec.MaxNumSeqs != d.MaxSeqs {
		d.DecodeSeqs = dec.MaxNumSeqs
	}
}

// layoutGPUs is the GPUs one worker of layout takes on d's model and GPU (0: no such layout).
func (s *Sim) layoutGPUs(d tui.Deployment, layout string) int {
	d.Layout = layout
	o, err := s.option(d)
	if err != nil {
		return 0
	}
	return o.layout.TP * max(1, o.layout.AttentionDP)
}
