package report

import (
	"fmt"
	"strconv"

	"github.com/routerlab/routerlab/engine"
)

// DisaggSection adds a disaggregated replay's pools to its report.html (PoolTable); nothing
// for an aggregated one.
func DisaggSection(pg *Page, s engine.Summary) {
	d := s.Disagg
	if d == nil {
		return
	}
	pg.Heading("Disaggregated pools")
	pg.Para("TTFT %s ms: prefill %s, wait for a decode slot %s, KV transfer %s, first decode step %s (means, ms). "+
		"Workers p0… are the prefill pool, d0… the decode pool in the heatmaps above.",
		f1(s.MeanTTFTMS), f1(d.MeanPrefillMS), f1(d.MeanDecodeWaitMS), f1(d.MeanTransferMS), f1(d.MeanFirstDecodeMS))
	pg.Table(PoolTable(*d, s.MeanTTFTMS, s.MeanTPOTMS))
}

// PoolTable is a disaggregated run's pools, the same in a replay's and a sweep's reports:
// each pool's load (the peak share of KV blocks a worker held, the busiest worker's requests
// ÷ the pool's mean), prefix hits and time — the prefill's part of the mean TTFT, the mean
// TPOT (all decoding runs on the decode pool) — and the KV transfer's mean, p95 and volume.
func PoolTable(d engine.DisaggSummary, ttft, tpot float64) ([]string, [][]string) {
	load := func(p engine.PoolSummary) string {
		return fmt.Sprintf("peak KV %s %% · imbalance %s", f1(100*p.PeakBlockShare), strconv.FormatFloat(p.RequestImbalance, 'f', 2, 64))
	}
	hits := func(p engine.PoolSummary) string { return strconv.FormatFloat(p.PrefixHitRatio, 'f', 3, 64) }
	return []string{"pool", "workers", "load", "prefix hits", "time"}, [][]string{
		{"prefill", strconv.Itoa(d.Prefill.Workers), load(d.Prefill), hits(d.Prefill),
			fmt.Sprintf("prefill %s ms of TTFT %s ms (%s %%)", f1(d.MeanPrefillMS), f1(ttft), f1(100*d.PrefillTTFTShare))},
		{"decode", strconv.Itoa(d.Decode.Workers), load(d.Decode), hits(d.Decode), fmt.Sprintf("TPOT %s ms", strconv.FormatFloat(tpot, 'f', 2, 64))},
		{"KV transfer", "", "", "", fmt.Sprintf("mean %s ms, p95 %s ms; %s GB", f1(d.MeanTransferMS), f1(d.P95TransferMS), f1(d.TransferGB))},
	}
}

// poolLabels names a disaggregated fleet's heatmap rows, one worker a row: p0… for the
// prefill pool, d0… for the decode pool.
func poolLabels(d *engine.DisaggSummary, labels []string) {
	for i := range labels {
		if i < d.Prefill.Workers {
			labels[i] = "p" + strconv.Itoa(i)
		} else {
			labels[i] = "d" + strconv.Itoa(i-d.Prefill.Workers)
		}
	}
}
