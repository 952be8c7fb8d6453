package cli

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/natsweep"
)

// experimentFlags are the flags every command that simulates shares: which experiment file,
// which trace, which overrides, how many requests.
type experimentFlags struct {
	configPath string
	tracePath  string
	format     string
	sets       []string
	requests   int
	strict     bool
}

func (x *experimentFlags) register(cmd *cobra.Command, requestsHelp string) {
	fs := cmd.Flags()
	fs.StringVar(&x.configPath, "config", "", "experiment YAML (default: the embedded seed experiment, examples/router-sweep.yaml)")
	fs.StringVar(&x.tracePath, "trace", "", "trace file or builtin:toolagent|builtin:conversation (overrides workload.trace_path)")
	fs.StringVar(&x.format, "trace-format", "", "the trace's row format: mooncake|mooncake-delta|agentic_mooncake|applied_compute_agentic|auto (overrides workload.trace_format)")
	fs.StringArrayVar(&x.sets, "set", nil, "override a key: router_mode=round_robin, replicas=64, layout=tp4·ep4, workload.replay_concurrency=8 (repeatable; the explorer's knob names work)")
	fs.IntVar(&x.requests, "requests", 0, requestsHelp)
	fs.BoolVar(&x.strict, "strict", false, "a request the fleet would reject (longer than context_length) is an error naming its line (workload.strict)")
	_ = cmd.RegisterFlagCompletionFunc("set", completeSet)
}

// completeSet completes --set: the keys it accepts (with "=" and no space after), then after
// "key=" the values the key takes where it has a fixed set (config.SetValues).
func completeSet(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	key, prefix, hasValue := strings.Cut(toComplete, "=")
	if !hasValue {
		for _, k := range config.SetKeys() {
			if strings.HasPrefix(k, toComplete) {
				out = append(out, k+"=")
			}
		}
		return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	}
	for _, v := range config.SetValues(key) {
		if strings.HasPrefix(v, prefix) {
			out = append(out, key+"="+v)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// file loads the experiment file and applies --trace, --set and --strict together, so their
// order never matters and the experiment is checked once.
func (x *experimentFlags) file() (*config.File, error) {
	var f *config.File
	if x.configPath == "" {
		f = config.Default()
	} else {
		var err error
		if f, err = config.Load(x.configPath); err != nil {
			return nil, err
		}
	}
	var sets []string
	if x.tracePath != "" {
		sets = append(sets, "workload.trace_path="+quoteYAML(x.tracePath))
	}
	if x.format != "" {
		sets = append(sets, "workload.trace_format="+quoteYAML(x.format))
	}
	sets = append(sets, x.sets...)
	if x.strict {
		sets = append(sets, "workload.strict=true")
	}
	if err := f.Apply(sets); err != nil {
		return nil, err
	}
	return f, nil
}

// experiment loads the file as file does and resolves its trace and worker.
func (x *experimentFlags) experiment() (*config.Experiment, error) {
	f, err := x.file()
	if err != nil {
		return nil, err
	}
	return config.NewExperiment(f)
}

// quoteYAML makes a path a YAML double-quoted scalar, whatever characters it holds.
func quoteYAML(s string) string {
	out := []byte{'"'}
	for _, r := range s {
		switch r {
		case '"', '\\':
			out = append(out, '\\', byte(r))
		default:
			out = append(out, string(r)...)
		}
	}
	return string(append(out, '"'))
}

// experimentArgs returns the flags set on the command line except those named in skip, as
// arguments that repeat them; credentials in a URL (--nats user:password@) are redacted, as
// the arguments are printed.
func experimentArgs(fs *pflag.FlagSet, skip ...string) []string {
	var args []string
	fs.Visit(func(fl *pflag.Flag) {
		if slices.Contains(skip, fl.Name) {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+fl.Name, v)
			}
			return
		}
		args = append(args, "--"+fl.Name, natsweep.Redact(fl.Value.String()))
	})
	return args
}

// shellJoin joins args into a command line a POSIX shell reads back as the same arguments.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// minusOneMeans annotates a numeric flag whose -1 has a documented meaning (such as
// --shared-experts-stream-tokens -1: no second stream), the one negative value it takes.
const minusOneMeans = "routerlab-minus-one-means"

// allowMinusOne marks flag name of fs as taking -1 (minusOneMeans).
func allowMinusOne(fs *pflag.FlagSet, name string) {
	if err := fs.SetAnnotation(name, minusOneMeans, []string{"true"}); err != nil {
		panic(err) // a flag name of this program's own: caught by tests
	}
}

// noNegativeNumbers rejects a negative, NaN or infinite value of any numeric flag set on the
// command line: no count, size, ratio, duration or bound of routerlab means anything below
// zero (but -1 of the flags marked by allowMinusOne), and a NaN would silently disable any
// bound it is compared with.
func noNegativeNumbers(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(fl *pflag.Flag) {
		switch fl.Value.Type() {
		case "int", "int64", "float64":
			x, perr := strconv.ParseFloat(fl.Value.String(), 64)
			switch {
			case perr != nil || err != nil:
			case math.IsNaN(x) || math.IsInf(x, 0):
				err = fmt.Errorf("--%s: %s is not a finite number", fl.Name, fl.Value)
			case x == -1 && fl.Annotations[minusOneMeans] != nil:
			case x < 0 && fl.Annotations[minusOneMeans] != nil:
				err = fmt.Errorf("--%s: %s: want -1 (see --help) or a number from 0 up", fl.Name, fl.Value)
			case x < 0:
				err = fmt.Errorf("--%s: %s must not be negative", fl.Name, fl.Value)
			}
		case "duration":
			if d, perr := time.ParseDuration(fl.Value.String()); perr == nil && d < 0 && err == nil {
				err = fmt.Errorf("--%s: %s must not be negative", fl.Name, fl.Value)
			}
		}
	})
	return err
}
