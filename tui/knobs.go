package tui

import (
	"fmt"
	"math"
	"strconv"
)

// Knobs is one point of the explorer: the router knobs and the replay concurrency.
type Knobs struct {
	Mode        string  // router_mode
	Credit      float64 // overlap_score_credit
	Scale       float64 // prefill_load_scale
	Temperature float64 // router_temperature
	Concurrency int     // workload.replay_concurrency (0 = open loop on trace timestamps)
}

// KVKnobsApply reports whether the three KV knobs change routing under this mode: the other
// policies ignore them.
func (k Knobs) KVKnobsApply() bool { return k.Mode == "kv_router" }

func (k Knobs) String() string {
	if !k.KVKnobsApply() {
		return fmt.Sprintf("%s c=%d", k.Mode, k.Concurrency)
	}
	return fmt.Sprintf("%s credit=%s scale=%s T=%s c=%d", k.Mode,
		formatNum(k.Credit), formatNum(k.Scale), formatNum(k.Temperature), k.Concurrency)
}

// Space is the set of values each knob steps through: the experiment's search_space lists
// (widened by the caller where a list has one value), all router modes, a ladder of
// concurrencies.
type Space struct {
	Modes         []string // in the order `m` cycles them
	Credits       []float64
	Scales        []float64
	Temperatures  []float64
	Concurrencies []int
}

// knob identifies a row of the Knobs pane.
type knob int

const (
	knobMode knob = iota
	knobCredit
	knobScale
	knobTemperature
	knobConcurrency
	numKnobs
)

func (k knob) key() string {
	return [...]string{"router_mode", "overlap_score_credit", "prefill_load_scale",
		"router_temperature", "replay_concurrency"}[k]
}

// value formats knob k of ks.
func (k knob) value(ks Knobs) string {
	switch k {
	case knobMode:
		return ks.Mode
	case knobCredit:
		return formatNum(ks.Credit)
	case knobScale:
		return formatNum(ks.Scale)
	case knobTemperature:
		return formatNum(ks.Temperature)
	default:
		if ks.Concurrency == 0 {
			return "open loop"
		}
		return strconv.Itoa(ks.Concurrency)
	}
}

// step moves knob k of ks dir (±1) places through the space. Modes wrap around (they have no
// order); numbers stop at the ends of their list. A current value that is not in the list
// moves to the nearest listed value in the step's direction.
func (s Space) step(ks Knobs, k knob, dir int) Knobs {
	switch k {
	case knobMode:
		ks.Mode = cycle(s.Modes, ks.Mode, dir)
	case knobCredit:
		ks.Credit = stepFloat(s.Credits, ks.Credit, dir)
	case knobScale:
		ks.Scale = stepFloat(s.Scales, ks.Scale, dir)
	case knobTemperature:
		ks.Temperature = stepFloat(s.Temperatures, ks.Temperature, dir)
	case knobConcurrency:
		fs := make([]float64, len(s.Concurrencies))
		for i, c := range s.Concurrencies {
			fs[i] = float64(c)
		}
		ks.Concurrency = int(stepFloat(fs, float64(ks.Concurrency), dir))
	}
	return ks
}

func cycle(list []string, cur string, dir int) string {
	if len(list) == 0 {
		return cur
	}
	for i, v := range list {
		if v == cur {
			return list[((i+dir)%len(list)+len(list))%len(list)]
		}
	}
	return list[0]
}

// stepFloat assumes list ascending (the caller sorts it).
func stepFloat(list []float64, cur float64, dir int) float64 {
	if len(list) == 0 {
		return cur
	}
	if dir > 0 {
		for _, v := range list {
			if v > cur+1e-12 {
				return v
			}
		}
		return math.Max(cur, list[len(list)-1])
	}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] < cur-1e-12 {
			return list[i]
		}
	}
	return math.Min(cur, list[0])
}

func formatNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
