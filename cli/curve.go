package cli

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/report"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/sweep"
)

// routerKnobs are the keys a --router setting may name.
var routerKnobs = []string{config.KeyRouterMode, config.KeyOverlapScoreCredit, config.KeyPrefillLoadScale, config.KeyRouterTemperature}

func newCurveCmd() *cobra.Command {
	var x experimentFlags
	var routers []string
	var concurrencies []int
	var out, plots, format string
	cmd := &cobra.Command{
		Use:   "curve",
		Short: "Latency against throughput across concurrency for several router settings (the Pareto view)",
		Long: `curve replays the experiment closed loop at each --concurrency for each --router setting
and prints requests/s, output tok/s, TTFT, TPOT and e2e latency (and, with goal.sla, the
share of requests meeting it and the goodput) per point, marking the Pareto front: the
points that no other point beats on both requests/s and mean e2e latency — where to pick an
operating point. A --router is default_kv (Dynamo's default: kv_router, credit 1, scale 1,
T 0), round_robin, random, least_loaded, or router knobs in --set form joined by commas
(prefill_load_scale=4,overlap_score_credit=1: the rest at Dynamo's defaults). --out DIR
writes curve.json and curve.html (the table and the curves as charts); --plots svg|png
also writes the charts to DIR/plots/. --format json prints what curve.json holds, --format
csv the table (pareto: true or false).`,
		Example: `  routerlab curve
  routerlab curve --router default_kv --router round_robin --router prefill_load_scale=4 --concurrency 8,16,32,64,128 --out runs/curve
  routerlab curve --set goal.sla.ttft_ms=200 --set goal.sla.tpot_ms=12`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if plots != "" && out == "" {
				return fmt.Errorf("--plots writes into the --out directory: give --out DIR")
			}
			if format != "table" && format != "json" && format != "csv" {
				return fmt.Errorf("--format: want table, json or csv, got %q", format)
			}
			exp, err := x.experiment()
			if err != nil {
				return err
			}
			var rs []sweep.CurveRouter
			for _, spec := range routers {
				r, err := curveRouter(exp.File, spec)
				if err != nil {
					return err
				}
				rs = append(rs, r)
			}
			point := exp.File.DefaultPoint()
			base, err := exp.EngineConfig(point)
			if err != nil {
				return err
			}
			// Goodput under goal.sla or the default SLO: counting it changes no simulated number.
			base.SLO = exp.File.Goal.ReportSLO()
			if out != "" {
				if err := notASweepDir(out, "curve"); err != nil {
					return err
				}
			}
			requests := x.requests
			if requests == 0 {
				requests = exp.File.Workload.SearchRequests
			}
			progress := startProgress(cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()), "curve", "replays")
			points, err := sweep.Curve(cmd.Context(), exp, base, rs, concurrencies, requests, progress.Set)
			progress.Stop()
			if err != nil {
				return err
			}
			sla := exp.File.Goal.SLAText()
			fp := exp.PointFingerprint(point, requests)
			if err := writeCurve(cmd.OutOrStdout(), format, terminalSafe(exp.Trace.Name), requests, sla, fp, points); err != nil {
				return err
			}
			if out == "" {
				return nil
			}
			if err := notASweepDir(out, "curve"); err != nil {
				return err
			}
			return writeCurveDir(out, plots, points, fp, sla)
		},
	}
	x.register(cmd, "replay the first N requests of the trace (default: workload.search_requests, 2000)")
	cmd.Flags().StringArrayVar(&routers, "router", []string{"default_kv", "round_robin"}, "a router setting: default_kv, round_robin, random, least_loaded, or knobs like prefill_load_scale=4,overlap_score_credit=1 (repeatable)")
	cmd.Flags().IntSliceVar(&concurrencies, "concurrency", []int{4, 8, 16, 32, 64, 128}, "requests in flight, one replay each")
	cmd.Flags().StringVar(&out, "out", "", "also write DIR/curve.json and DIR/curve.html")
	cmd.Flags().StringVar(&plots, "plots", "", "with --out: also write the charts to DIR/plots/ as svg or png")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json or csv")
	return cmd
}

// curveJSON is curve.json and curve --format json.
type curveJSON struct {
	Experiment config.Fingerprint `json:"experiment"`
	Points     []sweep.CurvePoint `json:"points"`
}

// writeCurve prints the curve's points as format says: the table under its heading lines,
// curveJSON, or the table as CSV.
func writeCurve(w io.Writer, format, traceName string, requests int, sla string, fp config.Fingerprint, points []sweep.CurvePoint) error {
	head, rows := sweep.CurveTable(points, true)
	switch format {
	case "json":
		return writeJSON(w, curveJSON{fp, points})
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write(head)
		for _, r := range rows {
			r[len(r)-1] = strconv.FormatBool(r[len(r)-1] != "")
			_ = cw.Write(r)
		}
		cw.Flush()
		return cw.Error()
	}
	fmt.Fprintf(w, "%s, first %d requests, closed loop; ◆ Pareto front (requests/s against mean e2e latency)\n", traceName, requests)
	fmt.Fprintf(w, "SLO %s\n", sla)
	return writeAlignedTable(w, head, rows)
}

// writeAlignedTable prints a table's heading and rows in right-aligned columns.
func writeAlignedTable(w io.Writer, head []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	return tw.Flush()
}

// curveRouter reads one --router: a policy name, default_kv, or router knobs in --set form.
func curveRouter(f *config.File, spec string) (sweep.CurveRouter, error) {
	def := router.DefaultConfig()
	switch spec {
	case "default_kv":
		return sweep.CurveRouter{Name: spec, Router: def}, nil
	case string(router.ModeRoundRobin), string(router.ModeRandom), string(router.ModeLeastLoaded):
		def.Mode = router.Mode(spec)
		return sweep.CurveRouter{Name: spec, Router: def}, nil
	}
	// Knobs in --set form, on a copy of the file whose router lists hold Dynamo's defaults.
	g := f.Clone()
	sets := []string{"router_mode=kv_router", "overlap_score_credit=1", "prefill_load_scale=1", "router_temperature=0"}
	given := make([]bool, len(sets))
	for _, a := range strings.Split(spec, ",") {
		key, _, _ := strings.Cut(a, "=")
		i := slices.Index(routerKnobs, strings.TrimSpace(key))
		if i < 0 {
			return sweep.CurveRouter{}, fmt.Errorf("--router %q: %q is not a router knob (want %s, or default_kv, round_robin, random, least_loaded)",
				spec, key, strings.Join(routerKnobs, ", "))
		}
		if given[i] {
			return sweep.CurveRouter{}, fmt.Errorf("--router %q: %s is set twice (as --set refuses a repeated key)", spec, routerKnobs[i])
		}
		sets[i], given[i] = a, true
	}
	if err := g.Apply(sets); err != nil {
		return sweep.CurveRouter{}, fmt.Errorf("--router %q: %w", spec, err)
	}
	val := func(key string) config.Value { v, _ := g.At(nil, key); return v }
	mode, err := router.ParseMode(val(config.KeyRouterMode).Text)
	if err != nil {
		return sweep.CurveRouter{}, fmt.Errorf("--router %q: %w", spec, err)
	}
	return sweep.CurveRouter{Name: spec, Router: router.Config{Mode: mode, OverlapScoreCredit: val(config.KeyOverlapScoreCredit).Num,
		PrefillLoadScale: val(config.KeyPrefillLoadScale).Num, Temperature: val(config.KeyRouterTemperature).Num}}, nil
}

func writeCurveDir(dir, plots string, points []sweep.CurvePoint, fp config.Fingerprint, sla string) error {
	if err := writeJSONFile(dir, "curve.json", curveJSON{fp, points}); err != nil {
		return err
	}
	html, err := sweep.CurveHTML(points, fp, sla)
	if err != nil {
		return err
	}
	return writePage(dir, "curve.html", html, plots, func() ([]report.Figure, error) { return sweep.CurveFigures(points) })
}
