package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/compare"
	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/report"
	"github.com/routerlab/routerlab/router"
)

func newReplayCmd() *cobra.Command {
	var x experimentFlags
	var format, perRequest, out, plots string
	var load bool
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
			if format != "table" && format != "json" && format != "csv" {
				return fmt.Errorf("--format: want table, json or csv, got %q", format)
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
			// Goodput under goal.sla or the default SLO: counting it changes no simulated number.
			cfg.SLO = exp.File.Goal.ReportSLO()
			if plots != "" && out == "" {
				return errors.New("--plots writes into the --out directory: give --out DIR")
			}
			if out != "" {
				if err := notASweepDir(out, "replay"); err != nil {
					return err
				}
			}
			cfg.RecordRequests = perRequest != "" || out != ""
			// Decode stall and load balance: in the run directory always, on stdout when asked
			// (the summary's bytes stay as before without --load).
			cfg.LoadReport = load || out != ""
			if out != "" {
				// Snapshots only record the fleet for the heatmaps; the result is the same.
				cfg.SnapshotEveryUS = replaySnapshotUS
			}
			ctx, stop := showProgress(cmd.Context(), cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()), "replay")
			rep, err := exp.Run(ctx, cfg, x.requests)
			stop()
			if err != nil {
				return err
			}
			if perRequest != "" {
				if err := writeRequests(perRequest, rep.Requests); err != nil {
					return err
				}
			}
			// The fingerprint (with the simulator digest) only where an output carries it, and
			// once when both do.
			fp := sync.OnceValue(func() config.Fingerprint { return exp.PointFingerprint(point, x.requests) })
			if out != "" {
				if err := notASweepDir(out, "replay"); err != nil {
					return err
				}
				if err := writeReplayDir(out, plots, fp(), rep, exp.File.Goal); err != nil {
					return err
				}
			}
			w := cmd.OutOrStdout()
			switch format {
			case "json":
				return writeJSON(w, newReplayJSON(fp(), rep.Summary, exp.File.Goal))
			case "csv":
				return writeReplayCSV(w, newReplayJSON(fp(), rep.Summary, exp.File.Goal))
			}
			return writeSummaryTable(w, exp, point, cfg, rep.Summary)
		},
	}
	x.register(cmd, "replay only the first N requests of the trace (0 = all)")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json, or csv (one header line and one row: the experiment's settings, then the summary's numbers by their JSON keys)")
	cmd.Flags().BoolVar(&load, "load", false, "also report where decode time goes (stall behind prefill, in queues) and the load imbalance")
	cmd.Flags().StringVar(&perRequest, "per-request", "", "also write one JSON line per request to this file")
	cmd.Flags().StringVar(&out, "out", "", "also write DIR/replay.json, DIR/requests.jsonl and DIR/report.html (charts; routerlab compare reads DIR)")
	cmd.Flags().StringVar(&plots, "plots", "", "with --out: also write each chart to DIR/plots/ as svg or png")
	return cmd
}

// replaySnapshotUS is the fleet snapshot interval of replay --out: one a simulated second,
// which report.html's heatmaps bin to at most their width.
const replaySnapshotUS = 1_000_000

// Files of a replay's run directory, as replay --out writes them and compare reads them.
const (
	replayJSONName     = "replay.json"
	replayRequestsName = "requests.jsonl"
)

// writeReplayDir writes a replay's run directory: replay.json, requests.jsonl, report.html and,
// with plots, its charts.
func writeReplayDir(dir, plots string, fp config.Fingerprint, rep *engine.Report, goal config.Goal) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var js bytes.Buffer
	if err := writeJSON(&js, newReplayJSON(fp, rep.Summary, goal)); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, replayJSONName), js.Bytes(), 0o644); err != nil {
		return err
	}
	if err := writeRequests(filepath.Join(dir, replayRequestsName), rep.Requests); err != nil {
		return err
	}
	html, err := report.ReplayHTML(fp, rep, goal)
	if err != nil {
		return err
	}
	return writePage(dir, "report.html", html, plots, func() ([]report.Figure, error) { return report.ReplayFigures(rep) })
}

// writePage writes an HTML page into dir and, when plots names a format, its figures into
// dir/plots/.
func writePage(dir, name string, html []byte, plots string, figs func() ([]report.Figure, error)) error {
	if err := os.WriteFile(filepath.Join(dir, name), html, 0o644); err != nil {
		return err
	}
	if plots == "" {
		return nil
	}
	fs, err := figs()
	if err != nil {
		return err
	}
	return report.WriteFigures(filepath.Join(dir, "plots"), plots, fs)
}

// replayJSON is replay's JSON output: the experiment's fingerprint, then the summary's keys.
type replayJSON struct {
	Experiment config.Fingerprint `json:"experiment"`
	engine.Summary
}

// newReplayJSON leaves out the goodput counted under the default SLO: the JSON carries
// goodput only under goal.sla, as it always has, so a default run's bytes are unchanged.
func newReplayJSON(fp config.Fingerprint, s engine.Summary, goal config.Goal) replayJSON {
	if !goal.SLA.Set() {
		s.Goodput = nil
	}
	return replayJSON{Experiment: fp, Summary: s}
}

// writeReplayCSV writes a replay as two CSV lines, so that replays' lines stack into one
// table: the fingerprint's settings, then the summary's numbers by their JSON keys (as
// compare names them; wall time, which differs between identical runs, left out). Per-worker
// numbers are in --format json.
func writeReplayCSV(w io.Writer, r replayJSON) error {
	keys, vals := compare.Metrics(r.Summary)
	head := make([]string, 0, len(r.Experiment)+len(keys))
	row := make([]string, 0, cap(head))
	for _, st := range r.Experiment {
		head, row = append(head, st.Key), append(row, st.Value)
	}
	for i, k := range keys {
		head, row = append(head, k), append(row, strconv.FormatFloat(vals[i], 'g', -1, 64))
	}
	cw := csv.NewWriter(w)
	_ = cw.Write(head)
	_ = cw.Write(row)
	cw.Flush()
	return cw.Error()
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
	fleet := fmt.Sprintf("%d workers", cfg.Workers)
	if cfg.Disagg != nil {
		fleet = fmt.Sprintf("%d prefill + %d decode workers", cfg.Workers, cfg.Disagg.DecodeWorkers)
	}
	fmt.Fprintf(w, "trace %s (%d requests), %s, concurrency %d\n",
		terminalSafe(exp.Trace.Name), s.RequestsCompleted, fleet, cfg.ReplayConcurrency)
	fmt.Fprintf(w, "router %s  overlap_score_credit %g  prefill_load_scale %g  router_temperature %g\n",
		r.Mode, r.OverlapScoreCredit, r.PrefillLoadScale, r.Temperature)
	for _, rj := range s.Rejections {
		fmt.Fprintf(w, "rejected %d requests before routing: %s (first: %s)\n", rj.Requests, rj.Reason, rj.First)
	}
	if line := pointLine(exp.File.Dimensions(), point, r.Mode); line != "" {
		fmt.Fprintln(w, line)
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
	if line := report.SLOLine(s, exp.File.Goal); line != "" {
		fmt.Fprintln(w, line)
	}
	if l := s.Load; l != nil {
		fmt.Fprintf(w, "decode stall %.2f ms of TPOT (%.1f %%): behind prefill %.1f ms, in queues %.1f ms per request; imbalance decode %.3f, KV blocks %.3f\n",
			l.MeanTPOTStallMS, 100*l.TPOTStallShare, l.MeanDecodeStallMS, l.MeanQueueStallMS, l.DecodeImbalance, l.BlockImbalance)
	}
	if t := s.KVTiers; t != nil {
		fmt.Fprintln(w, t)
	}
	if d := s.Disagg; d != nil {
		fmt.Fprintf(w, "TTFT %.1f ms: prefill %.1f (%.1f %%), wait for a decode slot %.1f, KV transfer %.1f (p95 %.1f; %.1f GB in all), first decode step %.1f\n",
			s.MeanTTFTMS, d.MeanPrefillMS, 100*d.PrefillTTFTShare, d.MeanDecodeWaitMS, d.MeanTransferMS, d.P95TransferMS, d.TransferGB, d.MeanFirstDecodeMS)
		if d.Bypassed > 0 {
			fmt.Fprintf(w, "conditional disaggregation: %d requests prefilled on their decode worker (TTFT's parts above are over the others)\n", d.Bypassed)
		}
		for _, p := range []struct {
			name string
			p    engine.PoolSummary
		}{{"prefill", d.Prefill}, {"decode", d.Decode}} {
			fmt.Fprintf(w, "%-7s pool: %d workers, prefix hits %.3f, peak KV %.1f %%, request imbalance %.3f, %d preemptions",
				p.name, p.p.Workers, p.p.PrefixHitRatio, 100*p.p.PeakBlockShare, p.p.RequestImbalance, p.p.Preemptions)
			if p.name == "decode" { // every output token after the first is decoded there
				fmt.Fprintf(w, ", TPOT %.2f ms", s.MeanTPOTMS)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "worker\trequests\tprompt tokens\treused tokens\tpeak blocks\tpreemptions\t")
	for i, ws := range s.Workers {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t\n", i, ws.Requests, ws.PromptTokens, ws.ReusedTokens, ws.PeakBlocks, ws.Preemptions)
	}
	return tw.Flush()
}

// pointLine says which point of the search space a replay ran: its router mode first (it
// decides which other knobs apply), then the dimensions that apply to it; the KV router's
// knobs under another mode are named as ignored, not listed as if they mattered. "" when the
// file has no dimensions.
func pointLine(dims []config.Dimension, point config.Point, mode router.Mode) string {
	if len(dims) == 0 {
		return ""
	}
	at := []string{config.KeyRouterMode + "=" + string(mode)}
	var ignored []string
	for i, d := range dims {
		switch d.Key {
		case config.KeyRouterMode:
		case config.KeyOverlapScoreCredit, config.KeyPrefillLoadScale, config.KeyRouterTemperature:
			if mode != router.ModeKV {
				ignored = append(ignored, d.Key)
				continue
			}
			fallthrough
		default:
			at = append(at, d.Key+"="+d.Values[point[i]].Text)
		}
	}
	line := "point of the search space: " + strings.Join(at, " ")
	if len(ignored) > 0 {
		line += fmt.Sprintf(" (%s ignores %s)", mode, strings.Join(ignored, ", "))
	}
	return line
}
