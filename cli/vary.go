package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/sweep"
)

func newVaryCmd() *cobra.Command {
	var x experimentFlags
	var traces []string
	var xs []float64
	var xLabel, out, format string
	cmd := &cobra.Command{
		Use:   "vary KEY VALUE [VALUE …]",
		Short: "Replay the experiment at each value of one key, on one or more traces, and chart the results",
		Long: `vary replays the experiment (as replay does: the file's replay discipline, its default
point) once per VALUE of KEY — any key --set takes — on each --traces, and prints p99 and mean
TTFT, p99 ITL, scaling events and GPU-hours per replay. --out DIR writes vary.json and
vary.html (the table, and each figure against the value: one line per trace and, with
several, their median). The x axis is the values when they are numbers, else --x gives one
number per value (a dict's interval, say).`,
		Example: `  routerlab vary startup_time 0 60 120 180 --config examples/planner-sla.yaml --out runs/startup
  routerlab vary planner_scaling_policy '{enable_throughput_scaling: true, enable_load_scaling: true, throughput_adjustment_interval_seconds: 300, load_adjustment_interval_seconds: 1}' \
    '{enable_throughput_scaling: true, enable_load_scaling: true, throughput_adjustment_interval_seconds: 300, load_adjustment_interval_seconds: 10}' \
    --x 1,10 --x-label "load interval (s)" --config examples/planner-sla.yaml`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, values := args[0], args[1:]
			if format != "table" && format != "json" {
				return fmt.Errorf("--format: want table or json, got %q", format)
			}
			if len(xs) == 0 {
				for _, v := range values {
					f, err := strconv.ParseFloat(v, 64)
					if err != nil {
						return fmt.Errorf("value %q of %s is not a number: give --x, one number per value", v, key)
					}
					xs = append(xs, f)
				}
			}
			if len(xs) != len(values) {
				return fmt.Errorf("--x: %d numbers for %d values", len(xs), len(values))
			}
			if xLabel == "" {
				xLabel = key
			}
			base, err := x.experiment()
			if err != nil {
				return err
			}
			fp := base.PointFingerprint(base.File.DefaultPoint(), x.requests)
			if len(traces) == 0 {
				traces = []string{""} // the file's
			}
			progress := startProgress(cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()), "vary", "replays")
			defer progress.Stop()
			var points []sweep.VaryPoint
			for _, tr := range traces {
				for i, v := range values {
					px := x
					px.sets = append(slices.Clone(x.sets), key+"="+v)
					if tr != "" {
						px.tracePath = tr
					}
					exp, err := px.experiment()
					if err != nil {
						return err
					}
					cfg, err := exp.EngineConfig(exp.File.DefaultPoint())
					if err != nil {
						return err
					}
					cfg.SLO = exp.File.Goal.ReportSLO()
					rep, err := exp.Run(cmd.Context(), cfg, x.requests)
					if err != nil {
						return fmt.Errorf("%s=%s on %s: %w", key, v, exp.Trace.Name, err)
					}
					points = append(points, sweep.VaryPoint{Value: v, X: xs[i], Trace: terminalSafe(exp.Trace.Name), Summary: rep.Summary})
					progress.Set(len(points), len(traces)*len(values))
				}
			}
			progress.Stop()
			if out != "" {
				if err := writeVaryDir(out, key, xLabel, points, fp); err != nil {
					return err
				}
			}
			w := cmd.OutOrStdout()
			if format == "json" {
				return writeJSON(w, varyJSON{fp, points})
			}
			head, rows := sweep.VaryTable(key, points)
			return writeAlignedTable(w, head, rows)
		},
	}
	x.register(cmd, "replay only the first N requests of each trace (0 = all)")
	cmd.Flags().StringArrayVar(&traces, "traces", nil, "a trace to replay every value on (repeatable: one line per trace; default: --trace or the file's)")
	cmd.Flags().Float64SliceVar(&xs, "x", nil, "the x axis: one number per value (default: the values, when numbers)")
	cmd.Flags().StringVar(&xLabel, "x-label", "", "the x axis's label (default: KEY)")
	cmd.Flags().StringVar(&out, "out", "", "also write DIR/vary.json and DIR/vary.html")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

// varyJSON is vary.json and vary --format json.
type varyJSON struct {
	Experiment config.Fingerprint `json:"experiment"`
	Points     []sweep.VaryPoint  `json:"points"`
}

func writeVaryDir(dir, key, xLabel string, points []sweep.VaryPoint, fp config.Fingerprint) error {
	if err := writeJSONFile(dir, "vary.json", varyJSON{fp, points}); err != nil {
		return err
	}
	html, err := sweep.VaryHTML(key, xLabel, points, fp)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "vary.html"), html, 0o644)
}

// writeJSONFile writes v as JSON to dir/name, making dir.
func writeJSONFile(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := writeJSON(f, v); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
