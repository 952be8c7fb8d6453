package engine

import (
	"context"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/router"
)

// A disaggregated replay's records name each request's prefill worker and transfer (none for
// a request conditional disaggregation prefilled on its decode worker), and the summary's
// transfer tail and prefill share are those records' figures; an aggregated replay's
// records carry no handoff.
func TestDisaggReportFiguresProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := genTrace(t, rapid.SampledFrom([]int{64, 512}).Draw(t, "trace_block"))
		agg := genConfig(t, tr)
		cfg := genDisagg(t, agg)
		if cfg.Router.Mode == router.ModeKV && rapid.Bool().Draw(t, "conditional") {
			cfg.Disagg.Conditional = &ConditionalDisagg{EffISLThreshold: rapid.IntRange(0, 1<<16).Draw(t, "eff_isl"),
				EffISLRatioThreshold: rapid.Float64Range(0.5, 1).Draw(t, "eff_isl_ratio")}
		}
		timer := PoolTimers{Prefill: &fakeTimer{base: 50, perToken: 1}, Decode: &fakeTimer{base: 30, perToken: 2}}
		rep, err := Replay(context.Background(), cfg, timer, tr)
		if err != nil {
			t.Fatal(err)
		}
		d := rep.Summary.Disagg
		var moves []float64
		local := 0
		for _, r := range rep.Requests {
			h := r.Handoff
			switch {
			case h == nil && r.Worker >= cfg.Workers:
				local++ // prefilled on its decode worker
				continue
			case h == nil:
				t.Fatalf("request %d: no handoff, on prefill worker %d", r.ID, r.Worker)
			case h.PrefillWorker < 0 || h.PrefillWorker >= cfg.Workers:
				t.Fatalf("request %d: prefill worker %d of %d", r.ID, h.PrefillWorker, cfg.Workers)
			case r.Worker < cfg.Workers:
				t.Fatalf("request %d: decode worker %d is in the prefill pool", r.ID, r.Worker)
			case h.DecodeCachedTokens < 0 || h.DecodeCachedTokens > r.InputLength:
				t.Fatalf("request %d: %d of %d prompt tokens cached at the decode worker", r.ID, h.DecodeCachedTokens, r.InputLength)
			}
			moves = append(moves, h.TransferMS)
		}
		if local != d.Bypassed {
			t.Fatalf("%d records without a handoff, %d bypassed", local, d.Bypassed)
		}
		if len(moves) == 0 {
			return
		}
		slices.Sort(moves)
		if want := moves[rank(0.95, len(moves))]; d.P95TransferMS != want {
			t.Fatalf("p95_transfer_ms %v, records' 95th percentile %v", d.P95TransferMS, want)
		}
		if d.P95TransferMS < moves[0] || d.MeanTransferMS > moves[len(moves)-1]+1e-3 {
			t.Fatalf("transfer mean %v, p95 %v outside the records' [%v, %v]", d.MeanTransferMS, d.P95TransferMS, moves[0], moves[len(moves)-1])
		}
		if ttft := d.MeanPrefillMS + d.MeanDecodeWaitMS + d.MeanTransferMS + d.MeanFirstDecodeMS; ttft > 0 {
			if got, want := d.PrefillTTFTShare, d.MeanPrefillMS/ttft; math.Abs(got-want) > 2e-3*max(1, 1/ttft) {
				t.Fatalf("prefill_ttft_share %v, mean_prefill_ms ÷ the parts' sum %v", got, want)
			}
		}
		if d.PrefillTTFTShare < 0 || d.PrefillTTFTShare > 1 {
			t.Fatalf("prefill_ttft_share %v outside [0, 1]", d.PrefillTTFTShare)
		}

		rep, err = Replay(context.Background(), agg, timer.Prefill, tr)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Requests {
			if r.Handoff != nil {
				t.Fatalf("request %d of an aggregated replay has a handoff %+v", r.ID, *r.Handoff)
			}
		}
	})
}
