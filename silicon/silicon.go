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
}

// Layout names the row's parallel layout the way the serving literature does.
func (r Row) Layout() string {
	switch {
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

// MaxFileBytes bounds a silicon CSV (16 MiB, thousands of times a real one), so that a path
// such as /dev/zero ends in an error instead of exhausting memory.
const MaxFileBytes = 16 << 20

// Parse reads a silicon CSV (header row naming at least the columns above, any order).
// Errors name the file, line and field: "name:line: field: problem".
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
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range columns {
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
		row := Row{
			Line:           line,
			ConfigID:       p.str("config_id"),
			Measured:       p.str("measured"),
			BackendVersion: p.str("backend_version"),
			Precision:      p.str("precision"),
			GEMMQuantMode:  p.str("gemm_quant_mode"),
			MoEQuantMode:   p.str("moe_quant_mode"),
			Concurrency:    p.positive("concurrency"),
			ISL:            p.positive("isl"),
			OSL:            p.positive("osl"),
			BatchSize:      p.positive("batch_size"),
			TP:             p.positive("tp_size"),
			AttentionDP:    p.positive("attention_dp_size"),
			MoETP:          p.positive("moe_tp_size"),
			MoEEP:          p.positive("moe_ep_size"),
			TTFTMS:         p.latency("silicon_ttft_ms"),
			TPOTMS:         p.latency("silicon_tpot_ms"),
		}
		if p.err != nil {
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

func (p *rowParser) latency(c string) float64 {
	s := p.str(c)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		p.fail(c, "%q is not a positive number of milliseconds", s)
	}
	return v
}
