package compare

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/routerlab/routerlab/sweep"
)

// comparisonJSON is one comparison as compare --format json writes it. A relative change
// with no meaning (the base is 0) is null.
type comparisonJSON struct {
	Base      runJSON      `json:"base"`
	Other     runJSON      `json:"other"`
	Metrics   []metricJSON `json:"metrics"`
	Paired    []pairedJSON `json:"paired,omitempty"`
	NoPairing string       `json:"no_pairing,omitempty"`
	Changes   []changeJSON `json:"changes"`
}

type runJSON struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	Requests int    `json:"requests_completed"`
}

type metricJSON struct {
	Key   string   `json:"metric"`
	Base  float64  `json:"base"`
	Other float64  `json:"other"`
	Abs   float64  `json:"change"`
	Rel   *float64 `json:"relative_change"`
}

type pairedJSON struct {
	Metric string `json:"metric"`
	sweep.PairedDiff
}

type changeJSON struct {
	Key string `json:"setting"`
	Old string `json:"base"`
	New string `json:"other"`
}

func (c *Comparison) json() comparisonJSON {
	run := func(r *Run) runJSON { return runJSON{r.Path, r.Kind, r.Summary.RequestsCompleted} }
	out := comparisonJSON{Base: run(c.Base), Other: run(c.Other), NoPairing: c.NoPairing, Changes: []changeJSON{}}
	for _, m := range c.Metrics {
		mj := metricJSON{Key: m.Key, Base: m.Base, Other: m.Other, Abs: m.Abs}
		if !math.IsNaN(m.Rel) && !math.IsInf(m.Rel, 0) {
			mj.Rel = &m.Rel
		}
		out.Metrics = append(out.Metrics, mj)
	}
	for _, p := range c.Paired {
		out.Paired = append(out.Paired, pairedJSON(p))
	}
	for _, ch := range c.Changes {
		out.Changes = append(out.Changes, changeJSON{ch.Key, ch.Old, ch.New})
	}
	return out
}

// WriteJSON writes the comparisons as one JSON array, one object per run after the first:
// the runs, every metric with its change, the paired intervals and the settings that differ.
func WriteJSON(w io.Writer, cs []*Comparison) error {
	all := make([]comparisonJSON, len(cs))
	for i, c := range cs {
		all[i] = c.json()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(all)
}

// WriteCSV writes the metric tables of the comparisons as CSV, one row per run and metric:
// base, other, metric, base value, other value, change, relative change (empty when it has
// no meaning). The paired intervals and settings are in --format json.
func WriteCSV(w io.Writer, cs []*Comparison) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"base", "other", "metric", "base_value", "other_value", "change", "relative_change"})
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, c := range cs {
		for _, m := range c.Metrics {
			rel := ""
			if !math.IsNaN(m.Rel) && !math.IsInf(m.Rel, 0) {
				rel = num(m.Rel)
			}
			_ = cw.Write([]string{c.Base.Path, c.Other.Path, m.Key, num(m.Base), num(m.Other), num(m.Abs), rel})
		}
	}
	cw.Flush()
	return cw.Error()
}
