package silicon

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// Group is one (model, GPU, precision) of the rows: counts, MAPEs and mean signed errors.
type Group struct {
	Backend   string  `json:"backend,omitempty"`
	Model     string  `json:"model"`
	System    string  `json:"system"`
	Precision string  `json:"precision"`
	Validated int     `json:"validated"`
	Skipped   int     `json:"skipped"`
	TTFTMAPE  float64 `json:"ttft_mape"`
	TPOTMAPE  float64 `json:"tpot_mape"`
	TTFTBias  float64 `json:"ttft_bias_pct"` // mean signed error
	TPOTBias  float64 `json:"tpot_bias_pct"`
	// SkipReason is the most frequent reason among the group's skipped rows.
	SkipReason string `json:"skip_reason,omitempty"`
}

// LayoutMAPE is the error over the validated rows of one layout.
type LayoutMAPE struct {
	Layout   string  `json:"layout"`
	Rows     int     `json:"rows"`
	TTFTMAPE float64 `json:"ttft_mape"`
	TPOTMAPE float64 `json:"tpot_mape"`
}

// ConcurrencyError is the signed mean error over the validated rows of one concurrency.
type ConcurrencyError struct {
	Concurrency int     `json:"concurrency"`
	Rows        int     `json:"rows"`
	TTFTGapMS   float64 `json:"ttft_gap_ms"` // mean measured − predicted TTFT
	TTFTErrPct  float64 `json:"ttft_err_pct"`
	TPOTErrPct  float64 `json:"tpot_err_pct"`
}

// Report is the whole validation; MAPEs are percentages over the validated rows.
type Report struct {
	Benchmark     Benchmark          `json:"benchmark"`
	Rows          []Result           `json:"rows"`
	TTFTMAPE      float64            `json:"ttft_mape"`
	TPOTMAPE      float64            `json:"tpot_mape"`
	Validated     int                `json:"validated"`
	Skipped       int                `json:"skipped"`
	Layouts       []LayoutMAPE       `json:"layouts"`
	Groups        []Group            `json:"groups"`
	Concurrencies []ConcurrencyError `json:"concurrencies"`
	// Disaggregated accounts for every disaggregated row, per backend (absent without them).
	Disaggregated []DisaggAccount `json:"disaggregated,omitempty"`
}

// DisaggAccount is one backend's disaggregated rows: how many were validated with their
// MAPEs, and the skipped ones by reason, most frequent first.
type DisaggAccount struct {
	Backend   string        `json:"backend"`
	Rows      int           `json:"rows"`
	Validated int           `json:"validated"`
	TTFTMAPE  float64       `json:"ttft_mape"`
	TPOTMAPE  float64       `json:"tpot_mape"`
	Skipped   []ReasonCount `json:"skipped"`
}

// ReasonCount is how many rows were skipped for one reason, and the first of them.
type ReasonCount struct {
	Reason    string `json:"reason"`
	Rows      int    `json:"rows"`
	FirstLine int    `json:"first_line"`
}

// disaggregated accounts for the disaggregated rows per backend, in order of first appearance.
func disaggregated(rows []Result) []DisaggAccount {
	var out []DisaggAccount
	idx := map[string]int{}
	var skipped [][]Result
	for _, r := range rows {
		if r.Mode != "disagg" {
			continue
		}
		b := cmp.Or(r.Backend, "vllm")
		i, ok := idx[b]
		if !ok {
			i = len(out)
			idx[b] = i
			out = append(out, DisaggAccount{Backend: b})
			skipped = append(skipped, nil)
		}
		a := &out[i]
		a.Rows++
		if r.Skipped != "" {
			skipped[i] = append(skipped[i], r)
			continue
		}
		a.Validated++
		a.TTFTMAPE += math.Abs(r.TTFTErrPct)
		a.TPOTMAPE += math.Abs(r.TPOTErrPct)
	}
	for i := range out {
		a := &out[i]
		if a.Validated > 0 {
			a.TTFTMAPE, a.TPOTMAPE = a.TTFTMAPE/float64(a.Validated), a.TPOTMAPE/float64(a.Validated)
		}
		for _, g := range byReason(skipped[i]) {
			a.Skipped = append(a.Skipped, ReasonCount{Reason: g.reason, Rows: g.rows, FirstLine: g.first})
		}
	}
	return out
}

func (rep *Report) summarise() {
	type acc struct {
		n                      int
		ttft, tpot, gap, sttft float64
		stpot                  float64
	}
	all := acc{}
	by := map[string]*acc{}
	byConc := map[int]*acc{}
	for _, r := range rep.Rows {
		if r.Skipped != "" {
			rep.Skipped++
			continue
		}
		rep.Validated++
		if by[r.ValidatedAs] == nil {
			by[r.ValidatedAs] = &acc{}
		}
		if byConc[r.Concurrency] == nil {
			byConc[r.Concurrency] = &acc{}
		}
		for _, x := range []*acc{by[r.ValidatedAs], byConc[r.Concurrency], &all} {
			x.n++
			x.ttft += math.Abs(r.TTFTErrPct)
			x.tpot += math.Abs(r.TPOTErrPct)
			x.gap += r.TTFTMS - r.PredTTFTMS
			x.sttft += r.TTFTErrPct
			x.stpot += r.TPOTErrPct
		}
	}
	if all.n > 0 {
		rep.TTFTMAPE, rep.TPOTMAPE = all.ttft/float64(all.n), all.tpot/float64(all.n)
	}
	for _, k := range slices.Sorted(maps.Keys(by)) {
		a := by[k]
		rep.Layouts = append(rep.Layouts, LayoutMAPE{Layout: k, Rows: a.n,
			TTFTMAPE: a.ttft / float64(a.n), TPOTMAPE: a.tpot / float64(a.n)})
	}
	rep.Groups = groups(rep.Rows)
	rep.Disaggregated = disaggregated(rep.Rows)
	for _, c := range slices.Sorted(maps.Keys(byConc)) {
		a, n := byConc[c], float64(byConc[c].n)
		rep.Concurrencies = append(rep.Concurrencies, ConcurrencyError{Concurrency: c, Rows: a.n,
			TTFTGapMS: a.gap / n, TTFTErrPct: a.sttft / n, TPOTErrPct: a.stpot / n})
	}
}

// groups summarises the rows per (model, GPU, precision), in order of first appearance.
func groups(rows []Result) []Group {
	var out []Group
	idx := map[[4]string]int{}
	reasons := map[int]map[string]int{}
	for _, r := range rows {
		k := [4]string{r.Backend, r.Model, r.System, r.Precision}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Group{Backend: r.Backend, Model: r.Model, System: r.System, Precision: r.Precision})
			reasons[i] = map[string]int{}
		}
		g := &out[i]
		if r.Skipped != "" {
			g.Skipped++
			reason, _, _ := strings.Cut(r.Skipped, " (")
			if _, rest, ok := strings.Cut(reason, ": "); ok && strings.Contains(reason[:strings.Index(reason, ": ")], ":") {
				reason = rest // a file:line prefix
			}
			reasons[i][reason]++
			continue
		}
		g.Validated++
		g.TTFTMAPE += math.Abs(r.TTFTErrPct)
		g.TPOTMAPE += math.Abs(r.TPOTErrPct)
		g.TTFTBias += r.TTFTErrPct
		g.TPOTBias += r.TPOTErrPct
	}
	for i := range out {
		g := &out[i]
		if n := float64(g.Validated); n > 0 {
			g.TTFTMAPE, g.TPOTMAPE, g.TTFTBias, g.TPOTBias = g.TTFTMAPE/n, g.TPOTMAPE/n, g.TTFTBias/n, g.TPOTBias/n
		}
		best := 0
		for _, reason := range slices.Sorted(maps.Keys(reasons[i])) {
			if n := reasons[i][reason]; n > best {
				g.SkipReason, best = reason, n
			}
		}
	}
	return out
}

// WriteJSON prints the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteTable prints one line per row, then the MAPE per layout and overall.
// listSkipped is how many skipped rows the table lists one by one; more (a file such as
// AIConfigurator's whole sample, thousands of rows of other models) are counted by reason.
const listSkipped = 40

type skipGroup struct {
	reason      string
	rows, first int
}

// skippedByReason groups the skipped rows by their reason (byReason).
func (rep *Report) skippedByReason() []skipGroup { return byReason(rep.Rows) }

// byReason groups rows' skips by their reason without the row's own details: a "file:line: "
// prefix and anything from " (" on (a missing table's list of the embedded ones), most
// frequent first.
func byReason(rows []Result) []skipGroup {
	idx := map[string]int{}
	var out []skipGroup
	for _, r := range rows {
		if r.Skipped == "" {
			continue
		}
		reason := r.Skipped
		if file, rest, ok := strings.Cut(reason, ": "); ok {
			if _, line, ok := strings.Cut(file, ":"); ok && line != "" && strings.Trim(line, "0123456789") == "" {
				reason = rest
			}
		}
		reason, _, _ = strings.Cut(reason, " (")
		i, ok := idx[reason]
		if !ok {
			i = len(out)
			idx[reason] = i
			out = append(out, skipGroup{reason: reason, first: r.Line})
		}
		out[i].rows++
	}
	slices.SortStableFunc(out, func(a, b skipGroup) int { return b.rows - a.rows })
	return out
}

func (rep *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%5s %-6s %5s %5s %5s │ %9s %9s %7s │ %8s %8s %7s\n",
		"line", "layout", "conc", "isl", "osl", "TTFT ms", "pred", "err", "TPOT ms", "pred", "err")
	for _, r := range rep.Rows {
		layout := r.ValidatedAs
		if layout == "" {
			layout = r.Layout()
		}
		if r.Skipped != "" && rep.Skipped > listSkipped {
			continue // summarised by reason below
		}
		fmt.Fprintf(&b, "%5d %-6s %5d %5d %5d │ %9.1f ", r.Line, layout, r.Concurrency, r.ISL, r.OSL, r.TTFTMS)
		if r.Skipped != "" {
			fmt.Fprintf(&b, "skipped: %s\n", r.Skipped)
			continue
		}
		fmt.Fprintf(&b, "%9.1f %+6.1f%% │ %8.2f %8.2f %+6.1f%%\n", r.PredTTFTMS, r.TTFTErrPct, r.TPOTMS, r.PredTPOTMS, r.TPOTErrPct)
	}
	b.WriteString("\n")
	for _, l := range rep.Layouts {
		fmt.Fprintf(&b, "%-6s %3d rows   TTFT MAPE %5.1f%%   TPOT MAPE %5.1f%%\n", l.Layout, l.Rows, l.TTFTMAPE, l.TPOTMAPE)
	}
	fmt.Fprintf(&b, "all    %3d rows   TTFT MAPE %5.1f%%   TPOT MAPE %5.1f%%   (%d skipped)\n",
		rep.Validated, rep.TTFTMAPE, rep.TPOTMAPE, rep.Skipped)
	if len(rep.Groups) > 1 {
		fmt.Fprintf(&b, "\n%-44s %4s %8s   %9s %6s  %9s %6s\n", "by model, GPU and precision", "rows", "skipped", "TTFT MAPE", "bias", "TPOT MAPE", "bias")
		for _, g := range rep.Groups {
			name := fmt.Sprintf("%s %s %s", g.Model, g.System, cmp.Or(g.Precision, "bf16"))
			if g.Backend != "" && g.Backend != "vllm" {
				name = g.Backend + " " + name
			}
			if g.Validated == 0 {
				fmt.Fprintf(&b, "%-44s %4d %8d   skipped: %s\n", name, g.Validated, g.Skipped, g.SkipReason)
				continue
			}
			fmt.Fprintf(&b, "%-44s %4d %8d   %8.1f%% %+5.1f%%  %8.1f%% %+5.1f%%\n", name, g.Validated, g.Skipped,
				g.TTFTMAPE, g.TTFTBias, g.TPOTMAPE, g.TPOTBias)
		}
	}
	if rep.Skipped > listSkipped {
		b.WriteString("\nskipped rows by reason (--format json lists each)\n")
		for _, g := range rep.skippedByReason() {
			fmt.Fprintf(&b, "%6d  %s (first: line %d)\n", g.rows, g.reason, g.first)
		}
	}
	rep.writeDisaggregated(&b)
	b.WriteString("\nby concurrency   rows   TTFT gap (measured − pred)   TTFT err   TPOT err\n")
	for _, c := range rep.Concurrencies {
		fmt.Fprintf(&b, "%14d   %4d   %21.1f ms   %+7.1f%%   %+7.1f%%\n", c.Concurrency, c.Rows, c.TTFTGapMS, c.TTFTErrPct, c.TPOTErrPct)
	}
	for _, r := range rep.Rows {
		if r.Note != "" {
			fmt.Fprintf(&b, "line %d: %s\n", r.Line, r.Note)
		}
	}
	fmt.Fprintf(&b, "benchmark %s\n", rep.Benchmark)
	rep.writeRuns(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRuns lists the runs whose settings replayed the validated rows, when they are not all
// the profile's own: each with its rows, its settings and what of them is not priced.
func (rep *Report) writeRuns(b *strings.Builder) {
	type run struct {
		script, image, notModelled string
		bench                      Benchmark
		rows                       int
	}
	var runs []*run
	idx := map[string]*run{}
	for _, r := range rep.Rows {
		if r.Skipped != "" || r.Script == "" {
			continue
		}
		x, ok := idx[r.Script]
		if !ok {
			x = &run{script: r.Script, image: r.Image, notModelled: r.NotModelled, bench: r.Benchmark}
			idx[r.Script] = x
			runs = append(runs, x)
		}
		x.rows++
	}
	if len(runs) < 2 {
		return
	}
	b.WriteString("\nrows replayed with the settings of the run that measured them:\n")
	for _, x := range runs {
		fmt.Fprintf(b, "%5d rows  %s (%s)\n            %s\n", x.rows, x.script, x.image, x.bench)
		if x.notModelled != "" {
			fmt.Fprintf(b, "            not modelled: %s\n", x.notModelled)
		}
	}
}

// writeDisaggregated accounts for the disaggregated rows: per backend, the validated ones with
// their MAPEs, then the skipped ones by reason.
func (rep *Report) writeDisaggregated(b *strings.Builder) {
	if len(rep.Disaggregated) == 0 {
		return
	}
	rows, validated := 0, 0
	for _, a := range rep.Disaggregated {
		rows, validated = rows+a.Rows, validated+a.Validated
	}
	fmt.Fprintf(b, "\ndisaggregated rows: %d (validated %d, skipped %d)\n", rows, validated, rows-validated)
	for _, a := range rep.Disaggregated {
		fmt.Fprintf(b, "%-8s %5d rows  %5d validated", a.Backend, a.Rows, a.Validated)
		if a.Validated > 0 {
			fmt.Fprintf(b, "   TTFT MAPE %5.1f%%   TPOT MAPE %5.1f%%", a.TTFTMAPE, a.TPOTMAPE)
		}
		b.WriteString("\n")
		for _, g := range a.Skipped {
			fmt.Fprintf(b, "%8s %5d skipped: %s (first: line %d)\n", "", g.Rows, g.Reason, g.FirstLine)
		}
	}
}
