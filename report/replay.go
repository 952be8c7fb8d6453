package report

import (
	"fmt"
	"strconv"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

// ReplayFigures are the charts of one replay: its TTFT, TPOT and e2e distributions and its
// fleet heatmaps (when it kept per-request records and snapshots).
func ReplayFigures(rep *engine.Report) ([]Figure, error) {
	figs, err := LatencyCDFs([]string{"replay"}, []*engine.Report{rep})
	if err != nil {
		return nil, err
	}
	hs, err := FleetHeatmaps("replay", rep, FleetScale{})
	if err != nil {
		return nil, err
	}
	fl, err := FleetFigures(rep)
	return append(append(figs, fl...), hs...), err
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// SLOLine is the sentence on the SLO a replay counted goodput under, the same in the CLI's
// table and in report.html: "SLO TTFT ≤ 200 ms, TPOT ≤ 12 ms for 90 % of requests: 1687 of
// 2000 requests met it (84.4 %, missed: 90 % must), goodput 13.90 req/s"; "" when the
// summary has no goodput.
func SLOLine(s engine.Summary, goal config.Goal) string {
	g := s.Goodput
	if g == nil {
		return ""
	}
	verdict := "attained"
	if 100*g.Attainment < goal.SLAPercentile {
		verdict = "missed"
	}
	return fmt.Sprintf("SLO %s: %d of %d requests met it (%.1f %%, %s: %g %% must), goodput %.2f req/s",
		goal.SLAText(), g.Good, s.RequestsCompleted, 100*g.Attainment, verdict, goal.SLAPercentile, g.RequestsPerS)
}

// ReplayHTML is report.html of one replay: what ran (the fingerprint), the latency table,
// throughput and goodput under goal's SLO, the workers, and the charts.
func ReplayHTML(fp config.Fingerprint, rep *engine.Report, goal config.Goal) ([]byte, error) {
	s := rep.Summary
	pg := &Page{Title: "routerlab replay"}
	get := func(k string) string { v, _ := fp.Get(k); return v }
	pg.Para("%d requests of %s, %d workers (%s), concurrency %s; router %s, overlap_score_credit %s, prefill_load_scale %s, router_temperature %s.",
		s.RequestsCompleted, get("workload.trace_path"), len(s.Workers), get("search_space.parallel_configs"),
		get("workload.replay_concurrency"), get("search_space.router_mode"), get("search_space.overlap_score_credit"),
		get("search_space.prefill_load_scale"), get("search_space.router_temperature"))
	pg.Heading("Latency")
	pg.Table([]string{"metric (ms)", "mean", "p50", "p90", "p99"}, [][]string{
		{"TTFT", f1(s.MeanTTFTMS), f1(s.P50TTFTMS), f1(s.P90TTFTMS), f1(s.P99TTFTMS)},
		{"TPOT", f1(s.MeanTPOTMS), f1(s.P50TPOTMS), f1(s.P90TPOTMS), f1(s.P99TPOTMS)},
		{"ITL", f1(s.MeanITLMS), f1(s.P50ITLMS), f1(s.P90ITLMS), f1(s.P99ITLMS)},
		{"e2e latency", f1(s.MeanE2EMS), f1(s.P50E2EMS), f1(s.P90E2EMS), f1(s.P99E2EMS)},
	})
	pg.Para("%.2f req/s, output %.0f tok/s, input %.0f tok/s, prefix reuse %.3f, %.1f s simulated.",
		s.RequestThroughput, s.OutputThroughput, s.InputThroughput, s.PrefixCacheReusedRatio, s.DurationMS/1000)
	if line := SLOLine(s, goal); line != "" {
		pg.Para("%s; goodput as vLLM's benchmark_serving counts it.", line)
	}
	if t := s.KVTiers; t != nil {
		pg.Para("%s.", t)
	}
	for _, rj := range s.Rejections {
		pg.Para("Rejected before routing: %d requests, %s (first: %s).", rj.Requests, rj.Reason, rj.First)
	}
	figs, err := ReplayFigures(rep)
	if err != nil {
		return nil, err
	}
	for _, f := range figs {
		pg.Figure(f)
	}
	FleetSection(pg, s)
	LoadSection(pg, s)
	DisaggSection(pg, s)
	pg.Heading("Workers")
	var rows [][]string
	for i, w := range s.Workers {
		rows = append(rows, []string{strconv.Itoa(i), strconv.Itoa(w.Requests), strconv.FormatInt(w.PromptTokens, 10),
			strconv.FormatInt(w.ReusedTokens, 10), strconv.Itoa(w.PeakBlocks), strconv.Itoa(w.Preemptions)})
	}
	pg.Table([]string{"worker", "requests", "prompt tokens", "reused tokens", "peak blocks", "preemptions"}, rows)
	FingerprintTable(pg, fp)
	return pg.HTML()
}

// FingerprintTable adds the experiment section: every setting that changes a result.
func FingerprintTable(pg *Page, fp config.Fingerprint) {
	pg.Heading("Experiment")
	pg.Para("Every setting that changes a result; fingerprint digest %s.", fp.Digest()[:16])
	rows := make([][]string, len(fp))
	for i, st := range fp {
		rows[i] = []string{st.Key, st.Value}
	}
	pg.Table([]string{"setting", "value"}, rows)
}
