package backend

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/tui"
)

// The explorer's load-and-admission knobs (tui/knobgroups.go): the values each steps through
// and the engine configuration they make.

// loadLadders are the values a load knob steps through beside the experiment's own.
var loadLadders = map[string][]string{
	config.KeyTrackActiveBlocks:       {"true", "false"},
	config.KeyAssumeKVReuse:           {"true", "false"},
	config.KeyTrackPrefillTokens:      {"true", "false"},
	config.KeyTrackOutputBlocks:       {"false", "true"},
	config.KeyActiveSequenceStride:    {"1", "2", "4", "8", "16"},
	config.KeyPrefillLoadModel:        {"none", "aic"},
	config.KeyQueueThreshold:          {"none", "0", "0.5", "1", "2", "4", "16"},
	config.KeyQueuePolicy:             {"fcfs", "wspt", "lcfs"},
	config.KeyDecodeBlocksThreshold:   {"none", "0.5", "0.8", "0.9", "0.95", "1"},
	config.KeyPrefillTokensThreshold:  {"none", "4096", "16384", "65536", "262144"},
	config.KeyPrefillTokensThreshFrac: {"none", "0.5", "1", "2", "4", "8"},
}

// loadSpace is each load knob's values: its ladder with the experiment's values, numbers in
// ascending order after "none".
func (s *Sim) loadSpace() []tui.LoadKnob {
	var out []tui.LoadKnob
	for _, key := range tui.LoadKeys() {
		vals := slices.Clone(loadLadders[key])
		for _, v := range s.exp.File.Values(key) {
			if t := canonicalText(v); !slices.Contains(vals, t) {
				vals = append(vals, t)
			}
		}
		slices.SortStableFunc(vals, func(a, b string) int {
			x, errA := strconv.ParseFloat(a, 64)
			y, errB := strconv.ParseFloat(b, 64)
			switch {
			case errA != nil || errB != nil:
				return 0 // words keep their order ("none" first, choices as listed)
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		})
		out = append(out, tui.LoadKnob{Values: vals})
	}
	return out
}

// canonicalText writes a value as the knobs show it (1.0 as 1).
func canonicalText(v config.Value) string {
	if v.IsNum {
		return strconv.FormatFloat(v.Num, 'g', -1, 64)
	}
	return v.Text
}

// initialLoad is the experiment's value of each load knob at its default point.
func (s *Sim) initialLoad() tui.LoadKnobs {
	f := s.exp.File
	p := f.DefaultPoint()
	var l tui.LoadKnobs
	for i, key := range tui.LoadKeys() {
		v, err := f.At(p, key)
		if err == nil {
			l[i] = canonicalText(v)
		}
	}
	return l
}

// loadSets are the --set overrides of the load knobs, one-value lists, for those a replay of
// the experiment would not take as they are: a value other than Dynamo's default, or a key the
// experiment lists otherwise.
func (s *Sim) loadSets(l tui.LoadKnobs) []string {
	var sets []string
	for _, d := range config.LoadKeys() {
		i := slices.Index(tui.LoadKeys(), d.Key)
		v := l[i]
		if v == "" {
			continue
		}
		vals := s.exp.File.Values(d.Key)
		if v != d.Value || len(vals) != 1 || canonicalText(vals[0]) != d.Value {
			sets = append(sets, fmt.Sprintf("%s=[%s]", d.Key, v))
		}
	}
	return sets
}

// loadConfig is the router's load config of the knobs (the experiment's value where "").
func (s *Sim) loadConfig(l tui.LoadKnobs) router.LoadConfig {
	init := s.initialLoad()
	keys := tui.LoadKeys()
	return config.LoadConfigOf(func(key string) string {
		i := slices.Index(keys, key)
		if l[i] != "" {
			return l[i]
		}
		return init[i]
	})
}

// loadFromConfig sets the load knobs a sweep configuration names (search-dimension values by
// key), written as the knobs show them.
func loadFromConfig(cfg map[string]string, l *tui.LoadKnobs) {
	for i, key := range tui.LoadKeys() {
		if v, ok := cfg[key]; ok {
			l[i] = canonicalText(config.ScalarValue(v))
		}
	}
}
