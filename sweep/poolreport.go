package sweep

import (
	"fmt"
	"strings"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/report"
)

// A disaggregated sweep's reports (report.md and report.html) show, beside the ranking of
// the deployment modes, the pools of the best disaggregated configuration: each pool's
// load, prefix reuse and share of the latency, and the KV transfer.

// modeOf is the deployment mode of an evaluation (agg or disagg).
func (s *Search) modeOf(e *Evaluation) (string, bool) {
	v, ok := e.Config["parallel_configs"]
	return s.File.ModeOf(v), ok
}

// bestDisagg is the best evaluation of a disaggregated fleet; nil when none was evaluated.
func (s *Search) bestDisagg() *Evaluation {
	var best *Evaluation
	for i := range s.Evaluations {
		e := &s.Evaluations[i]
		if len(e.Runs) == 0 || e.Runs[0].Disagg == nil {
			continue
		}
		if best == nil || s.Objective.Better(e.Metrics, best.Metrics) {
			best = e
		}
	}
	return best
}

// MeanDisagg is the mean over runs (of a disaggregated fleet) of each disaggregated figure
// the reports and the explorer's sweep table show, and the runs' mean TTFT and TPOT.
func MeanDisagg(runs []engine.Summary) (d engine.DisaggSummary, ttft, tpot float64) {
	n := float64(len(runs))
	for _, r := range runs {
		x := r.Disagg
		d.Prefill.Workers, d.Decode.Workers = x.Prefill.Workers, x.Decode.Workers
		for _, p := range [][2]*engine.PoolSummary{{&d.Prefill, &x.Prefill}, {&d.Decode, &x.Decode}} {
			p[0].PrefixHitRatio += p[1].PrefixHitRatio / n
			p[0].PeakBlockShare += p[1].PeakBlockShare / n
			p[0].RequestImbalance += p[1].RequestImbalance / n
		}
		d.MeanPrefillMS += x.MeanPrefillMS / n
		d.MeanDecodeWaitMS += x.MeanDecodeWaitMS / n
		d.MeanFirstDecodeMS += x.MeanFirstDecodeMS / n
		d.PrefillTTFTShare += x.PrefillTTFTShare / n
		d.MeanTransferMS += x.MeanTransferMS / n
		d.P95TransferMS += x.P95TransferMS / n
		d.TransferGB += x.TransferGB / n
		ttft += r.MeanTTFTMS / n
		tpot += r.MeanTPOTMS / n
	}
	return d, ttft, tpot
}

// poolTable is the pools of evaluation e (disaggregated) as a sentence and a table.
func poolTable(e *Evaluation) (string, []string, [][]string) {
	d, ttft, tpot := MeanDisagg(e.Runs)
	head, rows := report.PoolTable(d, ttft, tpot)
	text := fmt.Sprintf("The best disaggregated configuration, %s, on the search requests (means over %d run(s)). "+
		"Load: the most KV blocks a worker held ÷ its blocks, and the busiest worker's requests ÷ the pool's mean; "+
		"the decode pool's prefix hits are the prompt tokens it held at the reservation.", e.Key, len(e.Runs))
	return text, head, rows
}

const poolsTitle = "Disaggregated pools"

// writePools writes the pools of the best disaggregated configuration, if any was evaluated.
func writePools(w *strings.Builder, s *Search) {
	e := s.bestDisagg()
	if e == nil {
		return
	}
	text, head, rows := poolTable(e)
	fmt.Fprintf(w, "## %s\n\n%s\n\n", poolsTitle, text)
	writeTable(w, head, []string{"---", "---:", "---", "---:", "---"}, rows)
}

// poolsPage is report.html's deployment-mode section, as report.md's: the best of each mode
// (when both were searched) and the pools of the best disaggregated configuration.
func (s *Search) poolsPage(pg *report.Page) {
	if len(s.Space.shapes) > 1 {
		if text, head, rows := s.bestPerTable("deployment_mode", s.modeOf); rows != nil {
			pg.Heading("Best per deployment_mode")
			pg.Para("%s", text)
			pg.Table(head, rows)
		}
	}
	if e := s.bestDisagg(); e != nil {
		text, head, rows := poolTable(e)
		pg.Heading(poolsTitle)
		pg.Para("%s", text)
		pg.Table(head, rows)
	}
}
