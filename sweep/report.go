package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/guptarohit/asciigraph"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

// Result is a finished sweep: its search and, unless validation is off, its validation.
type Result struct {
	Search     *Search
	Validation *Validation // nil when validate.enabled is false
}

// Summary is summary.json. Every metrics object has the keys of the replay JSON summary.
type Summary struct {
	// Experiment is the fingerprint of what was swept: every setting that changes a result.
	Experiment     config.Fingerprint `json:"experiment"`
	Goal           string             `json:"goal"`
	Algorithm      string             `json:"algorithm"`
	Seed           uint64             `json:"seed"`
	SearchRequests int                `json:"search_requests"`
	Evaluations    int                `json:"evaluations"`
	Candidates     int                `json:"candidates"` // canonical configurations in the space
	Stop           string             `json:"stop"`
	Best           BestSummary        `json:"best"`
	// Validation lists round_robin, default_kv and best on the validation requests.
	Validation         []Validated     `json:"validation"`
	ValidationRequests int             `json:"validation_requests,omitempty"`
	E2EBestVsDefaultKV *PairedDiff     `json:"e2e_best_minus_default_kv,omitempty"`
	Saturation         []SaturationRow `json:"prefill_load_scale_saturation,omitempty"`
}

// BestSummary is the winner of the search. Metrics is its search run at the workload seed;
// Value and Mean average all its seeds.
type BestSummary struct {
	Key     string            `json:"key"`
	Config  map[string]string `json:"config"`
	Value   float64           `json:"value"`
	Seeds   []uint64          `json:"seeds"`
	Mean    Metrics           `json:"mean"`
	Metrics engine.Summary    `json:"metrics"`
}

// Summary builds summary.json's content.
func (r *Result) Summary() Summary {
	s := r.Search
	b := s.BestEvaluation()
	out := Summary{
		Experiment: s.Experiment,
		Goal:       s.Objective.String(), Algorithm: s.File.Sweep.Algorithm, Seed: s.File.Sweep.Seed,
		SearchRequests: b.Runs[0].RequestsCompleted, Evaluations: len(s.Evaluations),
		Candidates: len(s.Space.Candidates), Stop: s.Stop,
		Best:       BestSummary{Key: b.Key, Config: b.Config, Value: b.Value, Seeds: b.Seeds, Mean: b.Metrics, Metrics: b.Runs[0]},
		Validation: []Validated{},
	}
	if v := r.Validation; v != nil {
		out.Validation, out.ValidationRequests = v.Runs, v.Requests
		out.E2EBestVsDefaultKV, out.Saturation = v.Paired, v.Saturation
	}
	return out
}

// Ranked returns the indices of the evaluations, best first (ties by evaluation order).
func (s *Search) Ranked() []int {
	idx := make([]int, len(s.Evaluations))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ma, mb := s.Evaluations[a].Metrics, s.Evaluations[b].Metrics
		switch {
		case s.Objective.Better(ma, mb):
			return -1
		case s.Objective.Better(mb, ma):
			return 1
		}
		return 0
	})
	return idx
}

// BestSoFar is the goal's target of the best evaluation after each evaluation.
func (s *Search) BestSoFar() []float64 {
	out := make([]float64, len(s.Evaluations))
	best := 0
	for i := range s.Evaluations {
		if s.Objective.Better(s.Evaluations[i].Metrics, s.Evaluations[best].Metrics) {
			best = i
		}
		out[i] = s.Evaluations[best].Value
	}
	return out
}

// Chart draws the best-so-far target against the number of evaluations.
func (s *Search) Chart(width int) string {
	series := s.BestSoFar()
	if len(series) == 1 {
		series = append(series, series[0]) // asciigraph needs two points for a line
	}
	name := map[string]string{"e2e_latency": "mean e2e latency", "ttft": "mean TTFT", "tpot": "mean TPOT", "throughput": "output throughput"}[s.Objective.Target]
	return asciigraph.Plot(series, asciigraph.Height(10), asciigraph.Width(width), asciigraph.Precision(1),
		asciigraph.Caption(fmt.Sprintf("best %s (%s) vs evaluations (1…%d)", name, s.Objective.Unit(), len(s.Evaluations))))
}

// OutputNames are the files a finished sweep writes beside its ledger.
var OutputNames = []string{"summary.json", "report.md", "evaluations.csv", "report.html"}

// removeOutputs deletes a finished sweep's files from dir: a sweep that starts (or resumes)
// there writes them anew when it finishes, and until then an old summary beside a new ledger
// would describe another run.
func removeOutputs(dir string) error {
	for _, name := range OutputNames {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// WriteFiles writes summary.json, report.md, evaluations.csv and report.html into dir.
func (r *Result) WriteFiles(dir string) error {
	sum, err := json.MarshalIndent(r.Summary(), "", "  ")
	if err != nil {
		return err
	}
	html, err := r.HTML()
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{
		{OutputNames[0], append(sum, '\n')},
		{OutputNames[1], []byte(r.Markdown())},
		{OutputNames[2], r.CSV()},
		{OutputNames[3], html},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// deploymentDims are the search keys that change the hardware or the engine rather than the
// router: a sweep over them answers "which deployment wins, by how much".
var deploymentDims = []string{config.KeyHardwareSKU, config.KeyBackend, "parallel_configs", "agg_max_num_batched_tokens", "agg_max_num_seqs",
	"prefill_max_num_batched_tokens", "prefill_max_num_seqs", "decode_max_num_batched_tokens", "decode_max_num_seqs", config.KeyKVCacheDtype}

// writeDeploymentDims writes, for every deployment key the sweep varied, the best evaluation
// at each of its values and how far it is from the winner; first, when parallel_configs holds
// both deployment modes, the best of each mode (the branches ranked against each other).
func writeDeploymentDims(w *strings.Builder, s *Search) {
	if len(s.Space.shapes) > 1 {
		writeBestPer(w, s, "deployment_mode", s.modeOf)
	}
	for _, d := range s.Space.Dims {
		if slices.Contains(deploymentDims, d.Key) {
			writeBestPer(w, s, d.Key, func(e *Evaluation) (string, bool) {
				v, ok := e.Config[d.Key]
				return v, ok
			})
		}
	}
}

// writeBestPer writes the best evaluation at each value of key (valueOf) and how far it is
// from the winner; nothing when fewer than two values were evaluated.
func writeBestPer(w *strings.Builder, s *Search, key string, valueOf func(*Evaluation) (string, bool)) {
	text, head, rows := s.bestPerTable(key, valueOf)
	if rows == nil {
		return
	}
	fmt.Fprintf(w, "## Best per %s\n\n%s\n\n", key, text)
	writeTable(w, head, []string{"---", "---:", "---:", "---"}, rows)
}

// bestPerTable is the best evaluation at each value of key (valueOf) and how far it is from
// the winner, as a sentence and a table; no rows when fewer than two values were evaluated.
func (s *Search) bestPerTable(key string, valueOf func(*Evaluation) (string, bool)) (string, []string, [][]string) {
	order, best := s.bestPer(valueOf)
	if len(order) < 2 {
		return "", nil, nil
	}
	unit := s.Objective.Unit()
	win, second := best[order[0]], best[order[1]]
	text := fmt.Sprintf("%s %s won: %s %s against %s for %s (%s).", key, order[0], ff(win.Value, 1), unit,
		ff(second.Value, 1), order[1], pct(win.Value, second.Value))
	var rows [][]string
	for _, v := range order {
		e := best[v]
		rows = append(rows, []string{v, ff(e.Value, 1), pct(e.Value, win.Value), e.Key})
	}
	return text, []string{key, "best " + unit, "vs winner", "best configuration"}, rows
}

// writeTable writes a Markdown table (align: each column's rule) and a blank line.
func writeTable(w *strings.Builder, head, align []string, rows [][]string) {
	fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(align, "|"))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	w.WriteString("\n")
}

// bestPer is the best evaluation at each value valueOf gives, the values best first.
func (s *Search) bestPer(valueOf func(*Evaluation) (string, bool)) ([]string, map[string]*Evaluation) {
	best := map[string]*Evaluation{}
	var order []string
	for i := range s.Evaluations {
		e := &s.Evaluations[i]
		v, ok := valueOf(e)
		if !ok {
			continue
		}
		if cur, seen := best[v]; !seen {
			order = append(order, v)
			best[v] = e
		} else if s.Objective.Better(e.Metrics, cur.Metrics) {
			best[v] = e
		}
	}
	slices.SortStableFunc(order, func(a, b string) int {
		if s.Objective.Better(best[a].Metrics, best[b].Metrics) {
			return -1
		}
		if s.Objective.Better(best[b].Metrics, best[a].Metrics) {
			return 1
		}
		return 0
	})
	return order, best
}

func ff(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

func pct(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%+.1f %%", 100*(a-b)/b)
}

// CSV is evaluations.csv: every evaluated configuration, best first. n is the number of
// simulation runs (seeds) averaged into the row; variants is how many points of the raw
// search space are this configuration.
func (r *Result) CSV() []byte {
	s := r.Search
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := []string{"rank", "key"}
	for _, d := range s.Space.Dims {
		head = append(head, d.Key)
	}
	head = append(head, "value", "mean_e2e_latency_ms", "mean_ttft_ms", "mean_tpot_ms",
		"output_throughput_tok_s", "prefix_cache_reused_ratio", "sla_violation", "n", "variants", "round", "candidate")
	w.Write(head)
	for rank, i := range s.Ranked() {
		e := &s.Evaluations[i]
		c, _ := s.Space.Index(e.Key)
		row := []string{strconv.Itoa(rank + 1), e.Key}
		for _, d := range s.Space.Dims {
			row = append(row, e.Config[d.Key])
		}
		m := e.Metrics
		row = append(row, ff(e.Value, 4), ff(m.E2EMS, 4), ff(m.TTFTMS, 4), ff(m.TPOTMS, 4), ff(m.OutputTokS, 2),
			ff(m.PrefixReuse, 5), ff(s.Objective.Violation(m), 5), strconv.Itoa(len(e.Runs)),
			strconv.Itoa(s.Space.Candidates[c].Variants), strconv.Itoa(e.Round), strconv.Itoa(e.Candidate))
		w.Write(row)
	}
	w.Flush()
	return buf.Bytes()
}

// Markdown is report.md. It holds no wall-clock times, so identical sweeps give identical
// reports.
func (r *Result) Markdown() string {
	var w strings.Builder
	r.writeOverview(&w)
	r.writeExperiment(&w)
	r.writeAll(&w)
	return w.String()
}

// writeRejections says how many of a phase's requests the fleet rejected before routing, and
// why (the same for every configuration: rejection depends on the deployment, not the router).
func writeRejections(w *strings.Builder, phase string, s engine.Summary) {
	for _, rj := range s.Rejections {
		fmt.Fprintf(w, "Rejected before routing, as vLLM rejects them: %d of the %d %s requests, %s (first: %s).\n\n",
			rj.Requests, s.RequestsCompleted+s.RequestsRejected, phase, rj.Reason, rj.First)
	}
}

// writeExperiment writes the experiment fingerprint as a short table, one row per section of
// the experiment file (summary.json has it key by key): what a reader needs to reproduce the
// sweep, and what --resume compares.
func (r *Result) writeExperiment(w *strings.Builder) {
	fmt.Fprintf(w, "## Experiment\n\nEvery setting that changes a result (`--resume` refuses a ledger whose settings differ).\n\n| | |\n|---|---|\n")
	var sections []string
	rows := map[string][]string{}
	for _, s := range r.Search.Experiment {
		sec, key, dotted := strings.Cut(s.Key, ".")
		if _, ok := rows[sec]; !ok {
			sections = append(sections, sec)
		}
		if dotted {
			rows[sec] = append(rows[sec], key+"="+s.Value)
		} else {
			rows[sec] = append(rows[sec], s.Value)
		}
	}
	for _, sec := range sections {
		fmt.Fprintf(w, "| %s | %s |\n", sec, strings.ReplaceAll(strings.Join(rows[sec], "; "), "|", "\\|"))
	}
	w.WriteString("\n")
}

// Terminal is the report without the table of every evaluation, for the CLI.
func (r *Result) Terminal() string {
	var w strings.Builder
	r.writeOverview(&w)
	return w.String()
}

// writeOverview writes the header, the best configuration, the validation and saturation
// tables and the convergence chart.
func (r *Result) writeOverview(w *strings.Builder) {
	s := r.Search
	f := s.File
	b := s.BestEvaluation()
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# routerlab sweep: %s\n\n", f.Name)
	p("- goal: %s\n", s.Objective)
	p("- algorithm: %s, seed %d; at most %d rounds × %d candidates\n", f.Sweep.Algorithm, f.Sweep.Seed,
		s.Rounds, f.Sweep.CandidatesPerRound)
	p("- search: first %d requests of %s; %d of %d canonical configurations evaluated; stop: %s\n",
		b.Runs[0].RequestsCompleted, f.Workload.TracePath, len(s.Evaluations), len(s.Space.Candidates), s.Stop)
	p("- stochastic configurations (router_temperature > 0, random) are averaged over %d seeds\n\n", StochasticSeeds)

	p("## Best configuration\n\n| knob | value |\n|---|---|\n")
	for _, d := range s.Space.Dims {
		if v, ok := b.Config[d.Key]; ok {
			p("| %s | %s |\n", d.Key, v)
		}
	}
	p("\nOn the search requests: %s %s %s.\n\n", strings.TrimPrefix(s.Objective.String(), "minimise "), ff(b.Value, 2), s.Objective.Unit())
	writeRejections(w, "search", b.Runs[0])
	writeDeploymentDims(w, s)
	writePools(w, s)
	writeSpace(w, s)

	if v := r.Validation; v != nil {
		p("## Validation on %d requests\n\n", v.Requests)
		sla := f.Goal.SLAText()
		head, rule := "", ""
		if sla != "" {
			head, rule = " SLO met | goodput req/s |", "---:|---:|"
		}
		p("| configuration | mean e2e ms | mean TTFT ms | mean TPOT ms | req/s | output tok/s | prefix reuse |%s\n|---|---:|---:|---:|---:|---:|---:|%s\n", head, rule)
		ms := make([]Metrics, len(v.Runs))
		for i, run := range v.Runs {
			ms[i] = metricsOf(run.Metrics)
			m := ms[i]
			p("| %s | %s | %s | %s | %s | %s | %s |", run.Name, ff(m.E2EMS, 1), ff(m.TTFTMS, 1), ff(m.TPOTMS, 2),
				ff(run.Metrics.RequestThroughput, 2), ff(m.OutputTokS, 0), ff(m.PrefixReuse, 3))
			if g := run.Metrics.Goodput; g != nil {
				p(" %s %% | %s |", ff(100*g.Attainment, 1), ff(g.RequestsPerS, 2))
			}
			p("\n")
		}
		if len(ms) == 3 {
			bm, dm := ms[2], ms[1]
			p("| best vs default_kv | %s | %s | %s | %s | %s | %s |", pct(bm.E2EMS, dm.E2EMS), pct(bm.TTFTMS, dm.TTFTMS),
				pct(bm.TPOTMS, dm.TPOTMS), pct(v.Runs[2].Metrics.RequestThroughput, v.Runs[1].Metrics.RequestThroughput),
				pct(bm.OutputTokS, dm.OutputTokS), pct(bm.PrefixReuse, dm.PrefixReuse))
			if bg, dg := v.Runs[2].Metrics.Goodput, v.Runs[1].Metrics.Goodput; bg != nil && dg != nil {
				p(" %+.1f pt | %s |", 100*(bg.Attainment-dg.Attainment), pct(bg.RequestsPerS, dg.RequestsPerS))
			}
			p("\n\n")
		}
		if sla != "" {
			p("SLO: %s; SLO met is the share of requests within every bound, goodput the requests per second that were, as vLLM's benchmark_serving counts them.\n\n", sla)
		}
		writeRejections(w, "validation", v.Runs[len(v.Runs)-1].Metrics)
		if d := v.Paired; d != nil {
			p("Paired per-request e2e difference best − default_kv over the same %d requests: mean %s ms, "+
				"%.0f %% bootstrap interval [%s, %s] ms (%d resamples).\n\n", d.Requests, ff(d.MeanMS, 1), 100*d.Level, ff(d.LowMS, 1), ff(d.HighMS, 1), d.Resamples)
		}
		if len(v.Saturation) > 0 {
			p("## prefill_load_scale saturation\n\nSearch requests, other knobs at the winner's values.\n\n")
			p("| prefill_load_scale | mean e2e ms | mean TTFT ms | mean TPOT ms | prefix reuse | n | from |\n|---:|---:|---:|---:|---:|---:|---|\n")
			for _, row := range v.Saturation {
				from := "added"
				if row.Searched {
					from = "search"
				}
				m := row.Metrics
				p("| %s | %s | %s | %s | %s | %d | %s |\n", row.PrefillLoadScale, ff(m.E2EMS, 1), ff(m.TTFTMS, 1), ff(m.TPOTMS, 2), ff(m.PrefixReuse, 3), row.Runs, from)
			}
			p("\n")
		}
	}

	p("## Convergence\n\n```\n%s\n```\n\n", s.Chart(60))
}

// writeAll writes the table of every evaluation, best first.
func (r *Result) writeAll(w *strings.Builder) {
	s := r.Search
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## All evaluations, best first\n\nn: simulation runs averaged (seeds); variants: raw search-space points that are this configuration.\n\n")
	p("| rank | configuration | %s %s | mean e2e ms | mean TTFT ms | mean TPOT ms | output tok/s | prefix reuse | n | variants | round |\n", s.Objective.Target, s.Objective.Unit())
	p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for rank, i := range s.Ranked() {
		e := &s.Evaluations[i]
		c, _ := s.Space.Index(e.Key)
		m := e.Metrics
		p("| %d | %s | %s | %s | %s | %s | %s | %s | %d | %d | %d |\n", rank+1, e.Key, ff(e.Value, 2), ff(m.E2EMS, 1), ff(m.TTFTMS, 1),
			ff(m.TPOTMS, 2), ff(m.OutputTokS, 0), ff(m.PrefixReuse, 3), len(e.Runs), s.Space.Candidates[c].Variants, e.Round)
	}
}
