package compare

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Condition is a --fail-if test on one metric's change other − base, e.g.
// "mean_e2e_latency_ms>+2%" (relative) or "p99_ttft_ms>50" (absolute, in the metric's unit).
type Condition struct {
	Text    string
	Metric  string
	Op      string // ">", ">=", "<", "<="
	Value   float64
	Percent bool
}

var conditionRE = regexp.MustCompile(`^\s*([a-z0-9_.]+)\s*(>=|<=|>|<)\s*([+-]?[0-9]*\.?[0-9]+)\s*(%?)\s*$`)

// ParseCondition reads "METRIC OP [+-]NUMBER[%]".
func ParseCondition(s string) (Condition, error) {
	m := conditionRE.FindStringSubmatch(s)
	if m == nil {
		return Condition{}, fmt.Errorf("--fail-if %q: want METRIC>+2%% or METRIC<-5 (a summary key, > >= < <=, a change absolute or in %%)", s)
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return Condition{}, fmt.Errorf("--fail-if %q: %w", s, err)
	}
	return Condition{Text: strings.TrimSpace(s), Metric: m[1], Op: m[2], Value: v, Percent: m[4] == "%"}, nil
}

// Check reports whether the condition holds for c (the change is a failure); an unknown
// metric is an error naming the metrics there are.
func (cond Condition) Check(c *Comparison) (bool, string, error) {
	i := slices.IndexFunc(c.Metrics, func(m Metric) bool { return m.Key == cond.Metric })
	if i < 0 {
		keys := make([]string, len(c.Metrics))
		for j, m := range c.Metrics {
			keys[j] = m.Key
		}
		return false, "", fmt.Errorf("--fail-if %q: no metric %q (metrics: %s)", cond.Text, cond.Metric, strings.Join(keys, ", "))
	}
	m := c.Metrics[i]
	d, what := m.Abs, fmt.Sprintf("%+.4g", m.Abs)
	if cond.Percent {
		if math.IsNaN(m.Rel) {
			return false, "", fmt.Errorf("--fail-if %q: %s is 0 in the baseline, so it has no relative change", cond.Text, m.Key)
		}
		d, what = 100*m.Rel, fmt.Sprintf("%+.2f %%", 100*m.Rel)
	}
	var holds bool
	switch cond.Op {
	case ">":
		holds = d > cond.Value
	case ">=":
		holds = d >= cond.Value
	case "<":
		holds = d < cond.Value
	default:
		holds = d <= cond.Value
	}
	return holds, fmt.Sprintf("%s changed %s (%s → %s)", m.Key, what, num(m.Base), num(m.Other)), nil
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
