package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/natsweep"
	"github.com/routerlab/routerlab/report"
	"github.com/routerlab/routerlab/sweep"
)

// sweepOptions are the sweep command's own flags; the zero value takes everything from the
// experiment file and writes to a new directory under ./runs/.
type sweepOptions struct {
	requests  int    // > 0: workload.search_requests
	out       string // output directory ("" = new directory under ./runs/)
	resume    bool
	parallel  int    // > 0: sweep.parallel_evals
	algorithm string // non-empty: sweep.algorithm
	seed      string // non-empty: sweep.seed
	plots     string // non-empty: also write every chart as OUT/plots/NAME.svg or .png
	nats      natsFlags
	audit     float64 // --nats-audit: the fraction of remote results replayed here
	// again are the command-line flags that chose the experiment, repeated in the command that
	// resumes an interrupted sweep (a resume must describe the same experiment).
	again []string
}

func newSweepCmd() *cobra.Command {
	var x experimentFlags
	var o sweepOptions
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Search the router knobs for the best configuration, validate it on the full trace, write a report",
		Long: `sweep searches the experiment's search space (its list-valued search_space keys) for the
configuration that best meets goal.target, evaluating candidates on the first
workload.search_requests requests (default 2000), then replays round_robin, default_kv
(kv_router, credit 1.0, scale 1.0, T 0) and the winner on the full trace.

Algorithms: gp_bandit (Gaussian-process UCB with pure-exploration batches; default),
random, grid (every canonical configuration). OUT receives ledger.jsonl (one line per
finished evaluation, so --resume continues an interrupted sweep), summary.json, report.md,
report.html (the report with its charts, one self-contained file) and evaluations.csv;
--plots svg|png also writes each chart to OUT/plots/. Each records the experiment's fingerprint; --resume refuses a ledger of
a different experiment, listing the settings that differ. One sweep at a time writes OUT
(a second fails naming the first's PID). SIGINT, SIGTERM or SIGHUP stops after the finished
evaluations' ledger lines and prints the command that continues (exit status 130).
Requests longer than context_length are rejected and counted, as vLLM does; --strict makes
them an error.`,
		Example: `  routerlab sweep --config examples/router-sweep.yaml --out runs/seed
  routerlab sweep --algorithm grid --requests 500 --set 'router_temperature=[0.0]'
  routerlab sweep --out runs/seed --resume
  routerlab sweep --nats nats://10.0.0.5:4222 --out runs/seed     # simulations on 'routerlab worker's`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := x.file()
			if err != nil {
				return err
			}
			o.requests = x.requests
			o.again = experimentArgs(cmd.Flags(), "out", "resume", "parallel")
			return runSweep(cmd.Context(), f, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	x.register(cmd, "search requests: the first N of the trace (overrides workload.search_requests)")
	fl := cmd.Flags()
	fl.StringVar(&o.out, "out", "", "output directory (default: a new directory under ./runs/)")
	fl.BoolVar(&o.resume, "resume", false, "continue the sweep whose ledger.jsonl is in --out")
	fl.IntVar(&o.parallel, "parallel", 0, "simulations run at once (overrides sweep.parallel_evals)")
	fl.StringVar(&o.algorithm, "algorithm", "", "gp_bandit, random or grid (overrides sweep.algorithm)")
	fl.StringVar(&o.seed, "seed", "", "search seed (overrides sweep.seed)")
	fl.StringVar(&o.plots, "plots", "", "also write each chart of report.html to OUT/plots/ as svg or png, for slides")
	o.nats.register(fl, "run the simulations on the workers of this NATS server (routerlab worker) instead of here")
	fl.Float64Var(&o.audit, "nats-audit", natsweep.DefaultAudit, "fraction of the workers' results replayed here and compared (0 to 1; each worker's first is replayed too unless 0); a worker whose result differs is refused")
	return cmd
}

// apply writes the command-line overrides into the experiment file, through its own
// validation.
func (o sweepOptions) apply(f *config.File) error {
	var sets []string
	if o.requests > 0 {
		sets = append(sets, "workload.search_requests="+strconv.Itoa(o.requests))
	}
	if o.parallel > 0 {
		sets = append(sets, "sweep.parallel_evals="+strconv.Itoa(o.parallel))
	}
	if o.algorithm != "" {
		sets = append(sets, "sweep.algorithm="+o.algorithm)
	}
	if o.seed != "" {
		sets = append(sets, "sweep.seed="+o.seed)
	}
	return f.Apply(sets)
}

// exitInterrupted is the exit status of a sweep stopped by SIGINT or SIGTERM (128 + SIGINT),
// as shells report a command ended by Ctrl-C.
const exitInterrupted = 130

// runSweep runs a whole sweep of f and prints its report; progress goes to stderr. SIGINT,
// SIGTERM or SIGHUP (its terminal closed) stops it after the ledger lines of finished evaluations, with status 130 and the
// command that continues it.
func runSweep(ctx context.Context, f *config.File, o sweepOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	start := time.Now()
	if err := o.apply(f); err != nil {
		return err
	}
	if !(o.audit >= 0 && o.audit <= 1) {
		return fmt.Errorf("--nats-audit: %v must be between 0 and 1", o.audit)
	}
	if o.resume && o.out != "" {
		// A ledger that cannot be read is refused before the digest below is computed (a
		// build's first sweep: over a second of CPU).
		if _, err := sweep.ReadLedgerExperiment(o.out); err != nil {
			return err
		}
	}
	// The simulator digest (for the ledger's fingerprint) does not depend on the
	// experiment: a build's first sweep computes it on a second core while the trace
	// loads (about 1.5 s of CPU, docs/trust.md), later ones read it from the cache.
	go config.SimulatorDigest()
	exp, err := config.NewExperiment(f)
	if err != nil {
		return err
	}
	out, err := sweepDir(o, start)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "sweep: writing %s\n", out)
	var sim sweep.Simulator = exp
	if o.nats.c.URL != "" {
		co, err := natsweep.NewCoordinator(ctx, o.nats.c, exp, exp.Fingerprint(), natsweep.CoordinatorOptions{Out: out, Status: stderr, Audit: o.audit})
		if err != nil {
			return err
		}
		defer co.Close()
		sim = co
	}
	events := make(chan sweep.Event)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		progress(stderr, isTerminal(stderr), events)
	}()
	res, err := sweep.Run(ctx, f, sim, sweep.Options{Out: out, Resume: o.resume, Experiment: exp.Fingerprint(), Progress: events})
	close(events)
	<-printed
	var stopped *sweep.Interrupted
	if errors.As(err, &stopped) {
		again := append([]string{"routerlab", "sweep"}, o.again...)
		again = append(again, "--out", out, "--resume")
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted after %d evaluations; continue with: %s",
			stopped.Evaluations, shellJoin(again))}
	}
	if err != nil {
		return err
	}
	if o.plots != "" {
		figs, err := res.Figures()
		if err == nil {
			err = report.WriteFigures(filepath.Join(out, "plots"), o.plots, figs)
		}
		if err != nil {
			return err
		}
	}
	s := res.Search
	for _, n := range s.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	fmt.Fprint(stdout, res.Terminal())
	fmt.Fprintf(stdout, "%d evaluations (%d from the ledger) in %.1f s; wrote %s: summary.json, report.md, report.html, evaluations.csv, %s\n",
		len(s.Evaluations), s.Resumed, time.Since(start).Seconds(), out, sweep.LedgerName)
	return nil
}

// sweepDir returns the output directory: --out, or a new runs/sweep-TIME directory, created
// here so that two sweeps started in the same second never share one. A resume needs an
// existing ledger.
func sweepDir(o sweepOptions, now time.Time) (string, error) {
	if o.out != "" {
		if o.resume {
			if _, err := os.Stat(filepath.Join(o.out, sweep.LedgerName)); err != nil {
				return "", fmt.Errorf("--resume: %w", err)
			}
		}
		return o.out, nil
	}
	if o.resume {
		return "", errors.New("--resume needs --out DIR naming the sweep to continue")
	}
	if err := os.MkdirAll("runs", 0o755); err != nil {
		return "", err
	}
	base := filepath.Join("runs", "sweep-"+now.UTC().Format("20060102-150405"))
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755) // fails if the directory exists, atomically
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// progress reports each event on stderr: one updating status line on a terminal, one line
// per event otherwise (logs).
func progress(w io.Writer, tty bool, events <-chan sweep.Event) {
	width := 0
	for ev := range events {
		var b strings.Builder
		switch {
		case ev.Phase == sweep.PhaseSearch:
			fmt.Fprintf(&b, "sweep round %d/%d  %d/%d  best %.1f %s", ev.Round, ev.Rounds, ev.Done, ev.Total, ev.BestValue, ev.Unit)
			if !tty {
				fmt.Fprintf(&b, "  last %.1f %s  %s", ev.Value, ev.Unit, ev.Key)
			}
			if ev.Resumed {
				b.WriteString("  (from ledger)")
			}
		case ev.Key == "": // a phase begins, or the sweep is done
			b.WriteString(ev.Progress.String())
		default:
			fmt.Fprintf(&b, "%s  %s %.1f %s", ev.Progress, ev.Key, ev.Value, ev.Unit)
		}
		line := b.String()
		if !tty {
			fmt.Fprintln(w, line)
			continue
		}
		pad := max(0, width-len([]rune(line)))
		width = len([]rune(line))
		fmt.Fprintf(w, "\r%s%s", line, strings.Repeat(" ", pad))
	}
	if width > 0 {
		fmt.Fprintln(w)
	}
}
