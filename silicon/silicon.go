// Package silicon validates the timing model against measured serving runs: for each
// measured row it replays a closed-loop benchmark of the same shape through the simulator
// and compares the predicted mean TTFT and TPOT with the silicon's.
package silicon

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Row is one measured benchmark: one worker of a parallel layout serving fixed-length
// requests with Concurrency of them in flight.
type Row struct {
	Line           int     `json:"line"`
	ConfigID       string  `json:"config_id"`
	Concurrency    int     `json:"concurrency"`
	Measured       string  `json:"measured"`
	BackendVersion string  `json:"backend_version"`
	Precision      string  `json:"precision"`
	GEMMQuantMode  string  `json:"gemm_quant_mode"`
	MoEQuantMode   string  `json:"moe_quant_mode"`
	ISL            int     `json:"isl"`
	OSL            int     `json:"osl"`
	BatchSize      int     `json:"batch_size"`
	TP             int     `json:"tp_size"`
	AttentionDP    int     `json:"attention_dp_size"`
	MoETP          int     `json:"moe_tp_size"`
	MoEEP          int     `json:"moe_ep_size"`
	TTFTMS         float64 `json:"silicon_ttft_ms"`
	TPOTMS         float64 `json:"silicon_tpot_ms"`

	// Rows of AIConfigurator's published sample name what they measured; empty in the
	// shared format, whose rows are all the seed's checkpoint on B200 under vLLM.
	Model   string `json:"model_path,omitempty"`
	System  string `json:"system,omitempty"`
	Backend string `json:"backend,omitempty"`
	// Unsupported is why a row of the sample cannot be replayed at all (a disaggregated or
	// pipeline-parallel run); such a row carries only its shape and latencies.
	Unsupported string `json:"unsupported,omitempty"`
	// Mode is "disagg" for a disaggregated run of the sample (empty otherwise), and Disagg
	// its two pools when they could be read (disagg.go).
	Mode   string       `json:"mode,omitempty"`
	Disagg *DisaggShape `json:"disagg,omitempty"`
	// ConcurrencyDerived: the row does not record its concurrency, which is read from its
	// decode pool's batch (disaggConcurrency).
	ConcurrencyDerived bool `json:"concurrency_derived,omitempty"`
}

// Layout names the row's parallel layout the way the serving literature does.
func (r Row) Layout() string {
	switch {
	case r.TP == 0:
		return "-"
	case r.AttentionDP > 1 && r.MoEEP <= 1:
		return "DP" // data-parallel attention, every expert split over the worker's GPUs
	case r.AttentionDP > 1:
		return "DEP"
	case r.MoEEP > 1:
		return "TEP"
	default:
		return "TP"
	}
}

var columns = []string{"config_id", "concurrency", "measured", "backend_version", "precision", "gemm_quant_mode",
	"moe_quant_mode", "isl", "osl", "batch_size", "tp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size",
	"silicon_ttft_ms", "silicon_tpot_ms"}

// sampleColumns are those of AIConfigurator's published silicon sample
// (aic-core/src/aiconfigurator_core/systems/silicon_sample.csv), which keeps the run's id,
// concurrency and date in silicon_data_source ("…; config_id=691; silicon_concurrency=256;
// measured=2026-04-22T00:00:00.000Z; …") and covers many models, systems and backends.
var sampleColumns = []string{"silicon_data_source", "backend", "backend_version", "model_path", "system", "precision",
	"mode", "isl", "osl", "gemm_quant_mode", "moe_quant_mode", "batch_size", "tp_size", "pp_size", "attention_dp_size",
	"moe_tp_size", "moe_ep_size", "silicon_ttft_ms", "silicon_tpot_ms"}

// MaxFileBytes bounds a silicon CSV (16 MiB, thousands of times a real one), so that a path
// such as /dev/zero ends in an error instead of exhausting memory.
const MaxFileBytes = 16 << 20

// Bounds on a row's shape, beyond any serving benchmark (InferenceX goes to c 512 and ISL 8 k):
// they keep a hostile row from sizing a replay's memory.
const (
	MaxConcurrency = 1 << 16
	MaxTokens      = 1 << 22 // isl and osl
)

// Parse reads a silicon CSV: the shared format (a header row naming at least the columns
// above, any order) or AIConfigurator's published sample (recognised by its
// silicon_data_source column). Errors name the file, line and field: "name:line: field: problem".
func Parse(r io.Reader, name string) ([]Row, error) {
	lr := &io.LimitedReader{R: r, N: MaxFileBytes + 1}
	cr := csv.NewReader(lr)
	cr.FieldsPerRecord = -1
	tooLarge := func() error {
		return fmt.Errorf("%s: larger than the %d MiB limit of a silicon CSV", name, MaxFileBytes>>20)
	}
	header, err := cr.Read()
	if lr.N <= 0 {
		return nil, tooLarge()
	}
	if err == io.EOF {
		return nil, fmt.Errorf("%s:1: empty file, want a header row", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("%s:1: %s: duplicate column (columns %d and %d)", name, h, col[h]+1, i+1)
		}
		col[h] = i
	}
	_, hasSource := col["silicon_data_source"]
	_, hasID := col["config_id"]
	sample := hasSource && !hasID
	want := columns
	if sample {
		want = sampleColumns
	}
	for _, c := range want {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s:1: %s: missing column", name, c)
		}
	}
	var rows []Row
	for {
		rec, err := cr.Read()
		if lr.N <= 0 {
			return nil, tooLarge()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			return nil, fmt.Errorf("%s:%d: row has %d fields, header %d", name, line, len(rec), len(header))
		}
		p := rowParser{rec: rec, col: col, name: name, line: line}
		var row Row
		if sample {
			// The published sample mixes many collections; a row it cannot describe is
			// skipped with the problem (file:line: field), not the whole file rejected.
			if row = p.sampleRow(); p.err != nil {
				row = Row{Line: line, ConfigID: row.ConfigID, Concurrency: row.Concurrency, BackendVersion: row.BackendVersion,
					Model: row.Model, System: row.System, Backend: row.Backend, Unsupported: p.err.Error()}
			}
			if row.BackendVersion == "" {
				row.BackendVersion = "unrecorded" // part of the sample predates version tracking
			}
		} else if row = p.sharedRow(); p.err != nil {
			return nil, p.err
		}
		if row.BackendVersion == "" {
			return nil, fmt.Errorf("%s:%d: backend_version: empty", name, line)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows", name)
	}
	return rows, nil
}

func (p *rowParser) sharedRow() Row {
	return Row{
		Line:           p.line,
		ConfigID:       p.str("config_id"),
		Measured:       p.date("measured"),
		BackendVersion: p.str("backend_version"),
		Precision:      p.str("precision"),
		GEMMQuantMode:  p.str("gemm_quant_mode"),
		MoEQuantMode:   p.str("moe_quant_mode"),
		Concurrency:    p.bounded("concurrency", MaxConcurrency),
		ISL:            p.bounded("isl", MaxTokens),
		OSL:            p.bounded("osl", MaxTokens),
		BatchSize:      p.positive("batch_size"),
		TP:             p.positive("tp_size"),
		AttentionDP:    p.positive("attention_dp_size"),
		MoETP:          p.positive("moe_tp_size"),
		MoEEP:          p.positive("moe_ep_size"),
		TTFTMS:         p.latency("silicon_ttft_ms"),
		TPOTMS:         p.latency("silicon_tpot_ms"),
	}
}

// sampleRow reads a row of AIConfigurator's sample. Aggregated single-stage runs become
// ordinary rows; a disaggregated or pipeline-parallel one keeps only its shape and latencies
// and says why it cannot be replayed.
func (p *rowParser) sampleRow() Row {
	src := map[string]string{}
	for _, kv := range strings.Split(p.str("silicon_data_source"), ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
			src[k] = strings.TrimSpace(v)
		}
	}
	cs, hasConc := src["silicon_concurrency"]
	conc, err := strconv.Atoi(cs)
	if hasConc && (err != nil || conc < 1 || conc > MaxConcurrency) {
		p.fail("silicon_data_source", "silicon_concurrency=%q is not an integer from 1 to %d", cs, MaxConcurrency)
	}
	measured := src["measured"]
	if len(measured) > 10 {
		measured = measured[:10] // the date of an ISO timestamp
	}
	if measured != "" && !isDate(measured) {
		p.fail("silicon_data_source", "measured=%q is not a date (YYYY-MM-DD)", measured)
	}
	r := Row{
		Line: p.line, ConfigID: src["config_id"], Concurrency: conc, Measured: measured,
		BackendVersion: p.str("backend_version"), Precision: p.str("precision"),
		GEMMQuantMode: p.str("gemm_quant_mode"), MoEQuantMode: p.str("moe_quant_mode"),
		Model: p.str("model_path"), System: p.str("system"), Backend: p.str("backend"),
		ISL: p.bounded("isl", MaxTokens), OSL: p.bounded("osl", MaxTokens),
		TTFTMS: p.latency("silicon_ttft_ms"), TPOTMS: p.latency("silicon_tpot_ms"),
	}
	mode := p.str("mode")
	if mode == "disagg" {
		r.Mode = mode
		p.disaggRow(&r)
	}
	if !hasConc && r.Disagg != nil && r.Unsupported == "" {
		if r.Concurrency = p.disaggConcurrency(r.Disagg); r.Concurrency > 0 {
			r.ConcurrencyDerived = true
			hasConc = true
		}
	}
	if !hasConc {
		if r.Unsupported == "" { // a disaggregated row may have its own reason already
			r.Unsupported = "silicon_concurrency not recorded in silicon_data_source: the load is unknown"
		}
		return r
	}
	if mode == "disagg" {
		return r
	} else if mode != "agg" {
		r.Unsupported = fmt.Sprintf("mode %s: only aggregated serving is replayed", mode)
		return r
	}
	for _, c := range []string{"batch_size", "tp_size", "pp_size"} {
		if p.str(c) == "" {
			r.Unsupported = c + " not recorded: the layout is unknown"
			return r
		}
	}
	if pp := p.positive("pp_size"); pp > 1 {
		r.Unsupported = fmt.Sprintf("pp_size %d: pipeline parallelism is not modelled", pp)
		return r
	}
	r.BatchSize, r.TP = p.positive("batch_size"), p.positive("tp_size")
	// Collections without attention data parallelism leave attention_dp_size empty, and a
	// dense model's run labels its MoE sizes 0 or 1: both are read as "not used".
	r.AttentionDP, r.MoETP, r.MoEEP = p.optional("attention_dp_size", 1, 1), p.optional("moe_tp_size", 0, 0), p.optional("moe_ep_size", 0, 0)
	return r
}

// rowParser converts the fields of one record, keeping the first error.
type rowParser struct {
	rec  []string
	col  map[string]int
	name string
	line int
	err  error
}

func (p *rowParser) str(c string) string { return strings.TrimSpace(p.rec[p.col[c]]) }

func (p *rowParser) fail(c, format string, a ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%s:%d: %s: %s", p.name, p.line, c, fmt.Sprintf(format, a...))
	}
}

func (p *rowParser) positive(c string) int {
	s := p.str(c)
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		p.fail(c, "%q is not a positive integer", s)
	}
	return v
}

// bounded reads a positive integer of at most hi.
func (p *rowParser) bounded(c string, hi int) int {
	v := p.positive(c)
	if v > hi {
		p.fail(c, "%d exceeds %d, the limit of a replayed row", v, hi)
	}
	return v
}

// optional is an integer field of at least lo that may be empty (def).
func (p *rowParser) optional(c string, def, lo int) int {
	s := p.str(c)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo {
		kind := "a non-negative"
		if lo > 0 {
			kind = "a positive"
		}
		p.fail(c, "%q is not %s integer", s, kind)
	}
	return v
}

// date reads a measurement date, YYYY-MM-DD (an ISO timestamp's date part), or "" when
// unrecorded: which benchmark settings replay a row can depend on it.
func (p *rowParser) date(c string) string {
	s := p.str(c)
	if len(s) > 10 && s[10] == 'T' {
		s = s[:10]
	}
	if s != "" && !isDate(s) {
		p.fail(c, "%q is not a date (YYYY-MM-DD)", p.str(c))
	}
	return s
}

func (p *rowParser) latency(c string) float64 {
	s := p.str(c)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		p.fail(c, "%q is not a positive number of milliseconds", s)
	}
	return v
}
