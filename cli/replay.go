package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

func newReplayCmd() *cobra.Command {
	var x experimentFlags
	var format, perRequest string
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Replay a trace through the simulated fleet once and print the summary",
		Long: `Replay runs one simulation of the experiment at Dynamo's default point: router knobs
left as lists take Dynamo's defaults (kv_router, overlap_score_credit 1, prefill_load_scale 1,
router_temperature 0) when the list offers them, every other list its first value. The output
states the point it ran. Override knobs with --set, e.g. --set router_mode=round_robin
--set prefill_load_scale=32 --set workload.replay_concurrency=8.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--format: want table or json, got %q", format)
			}
			exp, err := x.experiment()
			if err != nil {
				return err
			}
			point := exp.File.DefaultPoint()
			cfg, err := exp.EngineConfig(point)
			if err != nil {
				return err
			}
			cfg.RecordRequests = perRequest != ""
			rep, err := exp.Run(cmd.Context(), cfg, x.requests)
			if err != nil {
				return err
			}
			if perRequest != "" {
				if err := writeRequests(perRequest, rep.Requests); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if format == "json" {
				return writeJSON(out, replayJSON{Experiment: exp.PointFingerprint(point, x.requests), Summary: rep.Summary})
			}
			return writeSummaryTable(out, exp, point, cfg, rep.Summary)
		},
	}
	x.register(cmd.Flags(), "replay only the first N requests of the trace (0 = all)")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.Flags().StringVar(&perRequest, "per-request", "", "also write one JSON line per request to this file")
	return cmd
}

// replayJSON is replay's JSON output: the experiment's fingerprint, then the summary's keys.
type replayJSON struct {
	Experiment config.Fingerprint `json:"experiment"`
	engine.Summary
}

func writeRequests(path string, recs []engine.RequestRecord) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := engine.WriteRequests(fh, recs); err != nil {
		fh.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return fh.Close()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeSummaryTable(w io.Writer, exp *config.Experiment, point config.Point, cfg engine.Config, s engine.Summary) error {
	r := cfg.Router
	fmt.Fprintf(w, "trace %s (%d requests), %d workers, concurrency %d\n",
		exp.Trace.Name, s.RequestsCompleted, cfg.Workers, cfg.ReplayConcurrency)
	fmt.Fprintf(w, "router %s  overlap_score_credit %g  prefill_load_scale %g  router_temperature %g\n",
		r.Mode, r.OverlapScoreCredit, r.PrefillLoadScale, r.Temperature)
	for _, rj := range s.Rejections {
		fmt.Fprintf(w, "rejected %d requests before routing: %s (first: %s)\n", rj.Requests, rj.Reason, rj.First)
	}
	if dims := exp.File.Dimensions(); len(dims) > 0 {
		var at []string
		for i, d := range dims {
			at = append(at, d.Key+"="+d.Values[point[i]].Text)
		}
		fmt.Fprintf(w, "point of the search space: %s\n", strings.Join(at, " "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric (ms)\tmean\tp50\tp90\tp99\t")
	row := func(name string, mean, p50, p90, p99 float64) {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t\n", name, mean, p50, p90, p99)
	}
	row("TTFT", s.MeanTTFTMS, s.P50TTFTMS, s.P90TTFTMS, s.P99TTFTMS)
	row("TPOT", s.MeanTPOTMS, s.P50TPOTMS, s.P90TPOTMS, s.P99TPOTMS)
	row("ITL", s.MeanITLMS, s.P50ITLMS, s.P90ITLMS, s.P99ITLMS)
	row("e2e latency", s.MeanE2EMS, s.P50E2EMS, s.P90E2EMS, s.P99E2EMS)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%.2f req/s  output %.0f tok/s  input %.0f tok/s  prefix reuse %.3f  simulated %.1f s  wall %.0f ms\n",
		s.RequestThroughput, s.OutputThroughput, s.InputThroughput, s.PrefixCacheReusedRatio, s.DurationMS/1000, s.WallTimeMS)
	if g := s.Goodput; g != nil {
		fmt.Fprintf(w, "SLO %s: %d of %d requests met it (%.1f %%, %s), goodput %.2f req/s\n",
			exp.File.Goal.SLAText(), g.Good, s.RequestsCompleted, 100*g.Attainment,
			map[bool]string{true: "attained", false: "missed"}[100*g.Attainment >= exp.File.Goal.SLAPercentile], g.RequestsPerS)
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "worker\trequests\tprompt tokens\treused tokens\tpeak blocks\tpreemptions\t")
	for i, ws := range s.Workers {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t\n", i, ws.Requests, ws.PromptTokens, ws.ReusedTokens, ws.PeakBlocks, ws.Preemptions)
	}
	return tw.Flush()
}
