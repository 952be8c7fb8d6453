package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/trace"
)

func newTraceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Synthesize, describe and cut Mooncake traces",
		Long: `Mooncake traces are JSON lines {"timestamp", "input_length", "output_length", "hash_ids"};
hash_ids name the prompt's 512-token prefix blocks. Wherever a trace path is accepted,
builtin:toolagent and builtin:conversation name the built-in synthetic traces, and
builtin:toolagent-sessions and builtin:conversation-sessions the same requests as sessions.
stats and subset also read Dynamo's session formats (--trace-format): mooncake rows with
session_id and delay, mooncake-delta, agentic_mooncake and applied_compute_agentic.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newTraceSynthCmd(), newTraceStatsCmd(), newTraceSubsetCmd())
	return cmd
}

func newTraceSynthCmd() *cobra.Command {
	var profile, out, format, shape string
	var seed uint64
	var requests int
	var agentic bool
	spec := trace.DefaultAgenticSpec()
	var fixed trace.FixedOptions
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Generate a synthetic Mooncake trace (deterministic for a seed)",
		Long: `Generates a built-in profile's trace (--profile), the same requests as sessions
(--profile toolagent-sessions: session_id added, each later turn's delay the gap to its
session's previous timestamp, as Dynamo infers it), or, with --agentic, tool-agent
sessions: each session draws one of --prompt-groups system prompts of --system-tokens
(shared whole blocks), then a first user message; every later turn sends the previous
prompt, its answer and a tool result (the prompt's hash ids extend the previous turn's)
after a tool wait. Token counts and tool waits are exponential draws with the stated
means (at least 1 token); sessions start as a Poisson process of --session-rate per
second; a session ends early when input + output would pass 131,072 tokens. Written as
mooncake session rows (session_id, delay = the tool wait) or agentic_mooncake rows
(request_id, wait_for the previous turn, tool_wait_ms).`,
		Example: `  routerlab trace synth --profile toolagent --out toolagent.jsonl
  routerlab trace synth --profile toolagent-sessions --requests 2000 --out sessions.jsonl
  routerlab trace synth --agentic --sessions 500 --turns 12 --tool-wait-ms 5000 --out agent.jsonl
  routerlab trace synth --agentic --trace-format agentic_mooncake | head
  routerlab trace synth --shape burst:600:120:4 --out burst.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if agentic {
				if shape != "" {
					return fmt.Errorf("--shape: not with --agentic (its sessions start at --session-rate)")
				}
				for _, name := range []string{"profile", "requests"} {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s: not with --agentic (its size is --sessions × --turns)", name)
					}
				}
				f, err := trace.ParseFormatName(format)
				if err != nil {
					return err
				}
				spec.Format, spec.Seed = f, seed
				t, err := trace.SynthesizeAgentic(spec)
				if err != nil {
					return err
				}
				return writeTrace(cmd.OutOrStdout(), out, t)
			}
			for _, name := range []string{"sessions", "turns", "session-rate", "system-tokens", "prompt-groups", "user-tokens", "tool-tokens", "output-tokens", "tool-wait-ms", "trace-format"} {
				if cmd.Flags().Changed(name) {
					return fmt.Errorf("--%s: only with --agentic", name)
				}
			}
			if requests < 0 {
				return fmt.Errorf("--requests: %d must not be negative (0: the profile's size)", requests)
			}
			var sh trace.Shape
			if shape != "" {
				var err error
				if sh, err = trace.ParseShape(shape); err != nil {
					return fmt.Errorf("--shape: %w", err)
				}
			}
			var t *trace.Trace
			var err error
			if profile == "fixed" {
				fixed.Requests, fixed.Seed = cmp.Or(requests, 1000), seed
				t, err = trace.Fixed(fixed)
			} else {
				synth := trace.Synthesize
				if base, ok := strings.CutSuffix(profile, trace.SessionsSuffix); ok {
					if shape != "" {
						return fmt.Errorf("--shape: not with a sessions profile (a session's turns follow their delays, not the clock)")
					}
					profile, synth = base, trace.SynthesizeSessions
				}
				t, err = synth(profile, seed, requests)
			}
			if err != nil {
				return err
			}
			if shape != "" {
				t = trace.Reshape(t, sh)
			}
			return writeTrace(cmd.OutOrStdout(), out, t)
		},
	}
	cmd.Flags().StringVar(&profile, "profile", "toolagent", "workload profile: "+strings.Join(trace.Profiles(), "|")+", or either with "+trace.SessionsSuffix+"; fixed: equal requests (--isl, --osl, --prefix-ratio, --prefix-groups)")
	cmd.Flags().IntVar(&fixed.ISL, "isl", 1024, "fixed: every prompt's tokens")
	cmd.Flags().IntVar(&fixed.OSL, "osl", 128, "fixed: every output's tokens")
	cmd.Flags().Float64Var(&fixed.SharedPrefixRatio, "prefix-ratio", 0, "fixed: share of each prompt that is one of --prefix-groups shared prefixes (whole 512-token blocks)")
	cmd.Flags().IntVar(&fixed.PrefixGroups, "prefix-groups", 1, "fixed: how many shared prefixes")
	cmd.Flags().Uint64Var(&seed, "seed", trace.DefaultSeed, "random seed")
	cmd.Flags().IntVar(&requests, "requests", 0, "number of requests (default: the profile's, 23608 for toolagent, 12031 for conversation)")
	cmd.Flags().StringVar(&out, "out", "", "output file (default: standard output)")
	cmd.Flags().BoolVar(&agentic, "agentic", false, "tool-agent sessions with growing prompts and tool waits (the flags below)")
	cmd.Flags().IntVar(&spec.Sessions, "sessions", spec.Sessions, "--agentic: sessions")
	cmd.Flags().IntVar(&spec.Turns, "turns", spec.Turns, "--agentic: requests per session")
	cmd.Flags().Float64Var(&spec.SessionRate, "session-rate", spec.SessionRate, "--agentic: session starts per second (Poisson)")
	cmd.Flags().IntVar(&spec.SystemTokens, "system-tokens", spec.SystemTokens, "--agentic: tokens of a system prompt with tool definitions")
	cmd.Flags().IntVar(&spec.PromptGroups, "prompt-groups", spec.PromptGroups, "--agentic: distinct system prompts, one drawn per session")
	cmd.Flags().Float64Var(&spec.UserTokens, "user-tokens", spec.UserTokens, "--agentic: mean tokens of the first user message")
	cmd.Flags().Float64Var(&spec.ToolTokens, "tool-tokens", spec.ToolTokens, "--agentic: mean tokens of a tool result added before each later turn")
	cmd.Flags().Float64Var(&spec.OutputTokens, "output-tokens", spec.OutputTokens, "--agentic: mean output tokens per turn")
	cmd.Flags().Float64Var(&spec.ToolWaitMS, "tool-wait-ms", spec.ToolWaitMS, "--agentic: mean tool wait before each later turn (ms)")
	cmd.Flags().StringVar(&format, "trace-format", "mooncake", "--agentic: rows written: mooncake (session_id, delay) or agentic_mooncake (request_id, wait_for, tool_wait_ms)")
	cmd.Flags().StringVar(&shape, "shape", "", "a load shape over the profile's arrivals, rates as multiples of the profile's on its clock: "+trace.ShapeSpecs+" (docs/planner.md)")
	return cmd
}

func newTraceStatsCmd() *cobra.Command {
	var format, traceFormat string
	var blockSize int
	cmd := &cobra.Command{
		Use:   "stats PATH|builtin:NAME",
		Short: "Describe a trace: lengths, arrival span, prefix reuse, cache-size curve, sessions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--format: %q is not table or json", format)
			}
			t, err := loadTrace(args[0], blockSize, traceFormat)
			if err != nil {
				return err
			}
			s := trace.Stats(t)
			if format == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			return writeStatsTable(cmd.OutOrStdout(), s)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table|json")
	cmd.Flags().IntVar(&blockSize, "block-size", trace.DefaultBlockSize, "tokens per hash id (trace_block_size)")
	traceFormatFlag(cmd, &traceFormat)
	return cmd
}

func newTraceSubsetCmd() *cobra.Command {
	var first, blockSize int
	var out, traceFormat string
	cmd := &cobra.Command{
		Use:   "subset --first N PATH|builtin:NAME --out FILE",
		Short: "Write the first N requests of a trace (the rule --requests uses everywhere)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if first < 1 {
				return fmt.Errorf("--first: %d must be at least 1", first)
			}
			if out == "" {
				return errors.New("--out: required")
			}
			t, err := loadTrace(args[0], blockSize, traceFormat)
			if err != nil {
				return err
			}
			sub := t.First(first)
			if len(sub.Requests) < first {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s has only %d requests; writing all of them\n", t.Name, len(sub.Requests))
			}
			return writeTrace(cmd.OutOrStdout(), out, sub)
		},
	}
	cmd.Flags().IntVar(&first, "first", 0, "number of leading requests to keep")
	cmd.Flags().StringVar(&out, "out", "", "output file (in the trace's format)")
	cmd.Flags().IntVar(&blockSize, "block-size", trace.DefaultBlockSize, "tokens per hash id (trace_block_size)")
	traceFormatFlag(cmd, &traceFormat)
	return cmd
}

func traceFormatFlag(cmd *cobra.Command, v *string) {
	names := []string{"auto"}
	for _, f := range trace.Formats() {
		names = append(names, string(f))
	}
	cmd.Flags().StringVar(v, "trace-format", "auto", "row format, as Dynamo's replay names it: "+strings.Join(names, "|")+
		" (auto: from the first row; mooncake-delta is never detected)")
}

func loadTrace(spec string, blockSize int, format string) (*trace.Trace, error) {
	f, err := trace.ParseFormatName(format)
	if err != nil {
		return nil, err
	}
	return trace.LoadFormat(spec, blockSize, f)
}

// writeTrace writes JSONL, in the trace's own format, to the file path, or to stdout when
// path is empty.
func writeTrace(stdout io.Writer, path string, t *trace.Trace) error {
	if path == "" {
		return trace.WriteTrace(stdout, t)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := trace.WriteTrace(f, t); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

func writeStatsTable(w io.Writer, s trace.Statistics) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format+"\n", a...) }
	p("trace\t%s", s.Name)
	p("requests\t%s", group(int64(s.Requests)))
	p("span\t%s ms (%.1f min)", group(s.SpanMS), float64(s.SpanMS)/60000)
	p("block size\t%d tokens", s.BlockSize)
	p("")
	p("tokens\tmean\tp50\tp90\tp99\tmax")
	for _, d := range []struct {
		name string
		d    trace.Distribution
	}{{"input", s.InputLength}, {"output", s.OutputLength}} {
		p("%s\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f", d.name, d.d.Mean, d.d.P50, d.d.P90, d.d.P99, d.d.Max)
	}
	p("")
	p("prefix-cache ratio\t%.3f\t(unbounded cache: share of %s input blocks seen before; %s unique)",
		s.PrefixCacheRatio, group(s.InputBlocks), group(int64(s.UniqueBlocks)))
	p("LRU cache\thit ratio")
	for _, c := range s.CacheCurve {
		p("  %s blocks (%s tokens)\t%.3f", group(int64(c.CapacityBlocks)), group(c.CapacityTokens), c.HitRatio)
	}
	p("")
	sh := s.Sharing
	p("first blocks\t%d distinct; the commonest starts %.1f %% of requests", sh.DistinctFirstBlocks, 100*sh.TopFirstBlockShare)
	p("sessions\t%s, %.2f turns each on average", group(int64(sh.Sessions)), sh.MeanTurnsPerSession)
	p("continuations\t%s requests, %.1f %% of their blocks cached on average", group(int64(sh.ContinuationRequests)), 100*sh.MeanContinuationHitFrac)
	p("shared-prompt starts\t%s sessions, sharing %.1f blocks on average", group(int64(sh.SharedPromptStarts)), sh.MeanSharedPromptBlocks)
	if st := s.SessionStructure; st != nil {
		p("")
		p("declared structure\t%s rows", st.Format)
		p("sessions\t%s", group(int64(st.Sessions)))
		p("\tmean\tp50\tp90\tp99\tmax")
		row := func(name string, d trace.Distribution) {
			p("%s\t%.2f\t%.0f\t%.0f\t%.0f\t%.0f", name, d.Mean, d.P50, d.P90, d.P99, d.Max)
		}
		row("turns per session", st.TurnsPerSession)
		row("dependency depth", st.DependencyDepth)
		p("waiting requests\t%s (a later turn, or a row with wait_for)", group(int64(st.DependentRequests)))
		p("tool waits\t%s", group(int64(st.ToolWaits)))
		if st.ToolWaits > 0 {
			row("tool wait ms", st.ToolWaitMS)
		}
		if st.Delays > 0 {
			p("delays\t%s (after the previous turn or the dependencies complete)", group(int64(st.Delays)))
			row("delay ms", *st.DelayMS)
		}
	}
	return tw.Flush()
}

// group formats an integer with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
