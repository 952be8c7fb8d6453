package report

import (
	"fmt"
	"strconv"

	"github.com/routerlab/routerlab/engine"
)

// DisaggSection adds a disaggregated replay's pools to its report.html: each pool's load,
// prefix reuse and share of the latency, and the KV transfer; nothing for an aggregated one.
func DisaggSection(pg *Page, s engine.Summary) {
	d := s.Disagg
	if d == nil {
		return
	}
	load := func(p engine.PoolSummary) string {
		return fmt.Sprintf("peak KV %s %% · imbalance %s", f1(100*p.PeakBlockShare), strconv.FormatFloat(p.RequestImbalance, 'f', 2, 64))
	}
	hits := func(p engine.PoolSummary) string { return strconv.FormatFloat(p.PrefixHitRatio, 'f', 3, 64) }
	pg.Heading("Disaggregated pools")
	pg.Para("TTFT %s ms: prefill %s, wait for a decode slot %s, KV transfer %s, first decode step %s (means, ms). "+
		"Workers p0… are the prefill pool, d0… the decode pool in the heatmaps above.",
		f1(s.MeanTTFTMS), f1(d.MeanPrefillMS), f1(d.MeanDecodeWaitMS), f1(d.MeanTransferMS), f1(d.MeanFirstDecodeMS))
	pg.Table([]string{"pool", "workers", "requests", "load", "prefix hits", "time"}, [][]string{
		{"prefill", strconv.Itoa(d.Prefill.Workers), strconv.Itoa(d.Prefill.Requests), load(d.Prefill), hits(d.Prefill),
			fmt.Sprintf("%s %% of TTFT", f1(100*d.PrefillTTFTShare))},
		{"decode", strconv.Itoa(d.Decode.Workers), strconv.Itoa(d.Decode.Requests), load(d.Decode), hits(d.Decode),
			fmt.Sprintf("TPOT %s ms", strconv.FormatFloat(s.MeanTPOTMS, 'f', 2, 64))},
		{"KV transfer", "", "", "", "", fmt.Sprintf("mean %s ms, p95 %s ms; %s GB", f1(d.MeanTransferMS), f1(d.P95TransferMS), f1(d.TransferGB))},
	})
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
