package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/compare"
	"github.com/routerlab/routerlab/report"
)

// exitFailIf is compare's exit status when a --fail-if condition holds: distinct from 1 (an
// error), so a script can tell a regression from a broken comparison.
const exitFailIf = 3

func newCompareCmd() *cobra.Command {
	var failIf []string
	var html, plots, format string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B [RUN_C …]",
		Short: "Put runs side by side: every metric's difference, paired bootstrap intervals, the settings that changed",
		Long: `compare reads runs — a replay directory (routerlab replay --out DIR), a sweep directory
(its validated best run) or a replay JSON file (replay --format json) — and compares each
run after the first against the first: every summary metric with its absolute and relative
difference; for runs that kept per-request records of the same requests (replay --out), the
paired per-request difference of e2e latency, TTFT and TPOT with a 95 % bootstrap interval;
and the experiment settings that differ. --html FILE writes the same as one self-contained
page with the latency distributions (--plots svg|png beside it: each chart as a file).
--format json writes the comparisons as JSON (metrics, paired intervals, settings), --format
csv the metric tables as CSV (one row per run and metric).

--fail-if METRIC>+2% (or >=, <, <=; a change in % or in the metric's unit; repeatable)
makes the exit status 3 when the condition holds for any run against the first: a
regression gate for scripts.`,
		Example: `  routerlab replay --out runs/default
  routerlab replay --set prefill_load_scale=4 --out runs/scale4
  routerlab compare runs/default runs/scale4 --fail-if 'mean_e2e_latency_ms>+2%'`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" && format != "csv" {
				return fmt.Errorf("--format: want table, json or csv, got %q", format)
			}
			if plots != "" && html == "" {
				return errors.New("--plots writes beside the --html page: give --html FILE")
			}
			var conds []compare.Condition
			for _, s := range failIf {
				c, err := compare.ParseCondition(s)
				if err != nil {
					return err
				}
				conds = append(conds, c)
			}
			runs := make([]*compare.Run, len(args))
			for i, a := range args {
				r, err := compare.Load(a)
				if err != nil {
					return err
				}
				runs[i] = r
			}
			out := cmd.OutOrStdout()
			var cs []*compare.Comparison
			var failed []string
			for i, r := range runs[1:] {
				c, err := compare.Compare(runs[0], r, seed)
				if err != nil {
					return err
				}
				if format == "table" {
					if i > 0 {
						fmt.Fprintln(out)
					}
					if err := c.WriteText(out); err != nil {
						return err
					}
				}
				for _, cond := range conds {
					holds, what, err := cond.Check(c)
					if err != nil {
						return err
					}
					if holds {
						failed = append(failed, fmt.Sprintf("%s: %s: %s", r.Path, cond.Text, what))
					}
				}
				cs = append(cs, c)
			}
			switch format {
			case "json":
				if err := compare.WriteJSON(out, cs); err != nil {
					return err
				}
			case "csv":
				if err := compare.WriteCSV(out, cs); err != nil {
					return err
				}
			}
			if html != "" {
				page, err := compare.HTML(cs)
				if err != nil {
					return err
				}
				if err := writePage(filepath.Dir(html), filepath.Base(html), page, plots, func() ([]report.Figure, error) { return compare.Figures(cs) }); err != nil {
					return err
				}
			}
			if len(failed) > 0 {
				msg := "--fail-if holds:"
				for _, f := range failed {
					msg += "\n  " + f
				}
				return &exitError{code: exitFailIf, err: errors.New(msg)}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&failIf, "fail-if", nil, "exit with status 3 when a metric's change holds, e.g. 'mean_e2e_latency_ms>+2%' (repeatable)")
	cmd.Flags().StringVar(&html, "html", "", "also write the comparison as a self-contained HTML page to this file")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the bootstrap resampling")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json or csv")
	cmd.Flags().StringVar(&plots, "plots", "", "with --html: also write each chart to plots/ beside the page as svg or png")
	return cmd
}
