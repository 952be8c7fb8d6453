package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/routerlab/routerlab/router"
)

// aliases are the explorer's knob names (and short forms of them) for experiment-file keys,
// so that a command line can say what the explorer shows.
var aliases = map[string]string{
	"replay_concurrency":     "workload.replay_concurrency",
	"concurrency":            "workload.replay_concurrency",
	"max_num_batched_tokens": "search_space.agg_max_num_batched_tokens",
	"batched_tokens":         "search_space.agg_max_num_batched_tokens",
	"max_num_seqs":           "search_space.agg_max_num_seqs",
	"seqs":                   "search_space.agg_max_num_seqs",
	"replicas":               keyReplicas,
	"layout":                 keyLayout,
	"parallel_layout":        keyLayout,
}

// keyReplicas and keyLayout are the two halves of search_space.parallel_configs that the
// explorer turns separately: how many workers, and how each worker's GPUs are split.
const (
	keyReplicas = "search_space.parallel_configs.replicas"
	keyLayout   = "search_space.parallel_configs.layout"
)

// Set applies one --set override "key=value"; see Apply.
func (f *File) Set(assign string) error { return f.Apply([]string{assign}) }

// override is one --set: the key as typed, its full key and its YAML value.
type override struct {
	key, typed string
	node       ast.Node
}

// Apply applies --set overrides "key=value" and then checks the experiment once, so the
// order of the overrides never matters. A bare key names a search_space key
// (router_mode=round_robin) or one of the explorer's knob names (replicas=64,
// layout=tp4·ep4, batched_tokens=8192, max_num_seqs=256, replay_concurrency=8); other
// sections are dotted (workload.replay_concurrency=8). The value is YAML: a scalar or a flow
// list such as [0.5,1.0]. A key given twice is an error. replicas and layout set that half
// of every parallel_configs entry (lists give every combination). Unless gpu_budget is set
// too, replicas, layout and parallel_configs raise gpu_budget to what the fleet needs (the
// explorer's deployments rely on it). On error f is unchanged.
func (f *File) Apply(assigns []string) error {
	assigns = splitLayoutPrecision(assigns)
	var whole []override
	var replicas, layout *override
	given := map[string]string{}
	for _, a := range assigns {
		typed, val, ok := strings.Cut(a, "=")
		typed = strings.TrimSpace(typed)
		key := typed
		if !ok || key == "" {
			return &Error{File: "--set", Key: a, Msg: "want key=value"}
		}
		if full, ok := aliases[key]; ok {
			key = full
		} else if !strings.Contains(key, ".") {
			key = "search_space." + key
		}
		if prev, ok := given[key]; ok {
			return &Error{File: "--set", Key: key, Msg: fmt.Sprintf("set twice (%q and %q)", prev, a)}
		}
		given[key] = a
		if err := checkYAMLShape([]byte(val), "--set"); err != nil {
			e := err.(*Error)
			e.Line, e.Key = 0, key
			return e
		}
		doc, err := parser.ParseBytes([]byte("v: "+val), 0)
		if err != nil || len(doc.Docs) != 1 {
			return &Error{File: "--set", Key: key, Msg: fmt.Sprintf("cannot read value %q", val)}
		}
		m, ok := doc.Docs[0].Body.(*ast.MappingNode)
		if !ok || len(m.Values) != 1 {
			return &Error{File: "--set", Key: key, Msg: fmt.Sprintf("cannot read value %q", val)}
		}
		if err := (&File{Name: "--set"}).noAnchorsOrTags(m.Values[0].Value); err != nil {
			e := err.(*Error)
			e.Line, e.Key = 0, key
			return e
		}
		o := override{key: key, typed: typed, node: m.Values[0].Value}
		switch key {
		case keyReplicas:
			replicas = &o
		case keyLayout:
			layout = &o
		default:
			whole = append(whole, o)
		}
	}
	g := f.Clone()
	g.Name = "--set"
	err := func() error {
		for _, o := range whole {
			if err := g.setNode(o.key, o.node); err != nil {
				return suggest(err, o.typed)
			}
		}
		_, fleet := given["search_space.parallel_configs"]
		if replicas != nil || layout != nil {
			fleet = true
			if err := g.combineFleet(replicas, layout); err != nil {
				return err
			}
		}
		// The fleet named on the command line is what the user asked for: the budget follows
		// it unless it is given too (a file's budget is a bound).
		if _, budget := given["search_space.gpu_budget"]; fleet && !budget && g.GPUBudget > 0 {
			for _, pc := range g.list("parallel_configs").parallel {
				g.GPUBudget = max(g.GPUBudget, pc.GPUs())
			}
		}
		return g.check()
	}()
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Line = 0
		}
		return err
	}
	g.Name = f.Name
	*f = *g
	return nil
}

// splitLayoutPrecision reads a layout as the explorer names it with a serving precision
// after it (layout=tp4·ep4 nvfp4) as the layout and quantization=nvfp4.
func splitLayoutPrecision(assigns []string) []string {
	var out []string
	for _, a := range assigns {
		key, val, _ := strings.Cut(a, "=")
		fields := strings.Fields(val)
		if k := aliases[strings.TrimSpace(key)]; k != keyLayout || len(fields) != 2 || strings.ContainsAny(val, "[]{},") {
			out = append(out, a)
			continue
		}
		if q := fields[1]; !slices.ContainsFunc([]string{"tp", "dp", "ep", "moe_"}, func(p string) bool { return strings.HasPrefix(q, p) }) {
			out = append(out, key+"="+fields[0], "quantization="+q)
			continue
		}
		out = append(out, a)
	}
	return out
}

// replicaList reads replicas=N or replicas=[N, M].
func (f *File) replicaList(n ast.Node) ([]int, error) {
	vals, err := f.scalars("replicas", n)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(vals))
	for i, v := range vals {
		if err := f.integer("replicas", &ast.StringNode{Value: v.Text}, &out[i], 1, router.MaxWorkers); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// layoutList reads layout=tp4·ep4 (or a list of layouts), as the explorer names them: parts
// tpN, dpN, moe_tpN, epN joined by "·", "-" or "+", each absent part 1 — but for a layout
// without an expert part (tp4, a dense model's), moe_tp is tp × dp.
func (f *File) layoutList(n ast.Node) ([]ParallelConfig, error) {
	vals, err := f.scalars("layout", n)
	if err != nil {
		return nil, err
	}
	var out []ParallelConfig
	for _, v := range vals {
		pc, err := parseLayout(v.Text)
		if err != nil {
			return nil, &Error{File: f.Name, Key: "layout", Msg: err.Error()}
		}
		out = append(out, pc)
	}
	return out, nil
}

func parseLayout(s string) (ParallelConfig, error) {
	pc := ParallelConfig{TP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 1, Replicas: 1}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '·' || r == '-' || r == '+' || r == ' ' })
	if len(parts) == 0 {
		return pc, fmt.Errorf("empty layout (want e.g. tp4·ep4 or tp4·moe_tp4)")
	}
	for _, p := range parts {
		var dst *int
		var digits string
		switch {
		case strings.HasPrefix(p, "moe_tp"):
			dst, digits = &pc.MoETP, p[len("moe_tp"):]
		case strings.HasPrefix(p, "moe_ep"):
			dst, digits = &pc.MoEEP, p[len("moe_ep"):]
		case strings.HasPrefix(p, "tp"):
			dst, digits = &pc.TP, p[2:]
		case strings.HasPrefix(p, "ep"):
			dst, digits = &pc.MoEEP, p[2:]
		case strings.HasPrefix(p, "dp"):
			dst, digits = &pc.AttentionDP, p[2:]
		default:
			return pc, fmt.Errorf("layout %q: unknown part %q (want tpN, dpN, moe_tpN, epN, e.g. tp4·ep4)", s, p)
		}
		x, err := strconv.Atoi(digits)
		if err != nil || x < 1 || x > 4096 {
			return pc, fmt.Errorf("layout %q: part %q wants an integer in [1, 4096]", s, p)
		}
		*dst = x
	}
	if !strings.Contains(s, "moe_tp") && !strings.Contains(s, "ep") {
		// No expert split named (a dense model's layout, as the explorer shows it: tp4):
		// the MoE ranks, if any, follow attention's, as vLLM's default does.
		pc.MoETP = pc.TP * pc.AttentionDP
	}
	if pc.MoETP*pc.MoEEP != pc.TP*pc.AttentionDP {
		return pc, fmt.Errorf("layout %q: moe_tp × moe_ep (%d) must equal tp × dp (%d)", s, pc.MoETP*pc.MoEEP, pc.TP*pc.AttentionDP)
	}
	return pc, nil
}

// suggest adds "did you mean" to an unknown-key error: the closest key of the experiment
// file or the explorer, when one is close.
func suggest(err error, key string) error {
	e, ok := err.(*Error)
	if !ok || e.Msg != "unknown key" {
		return err
	}
	known := knownKeys()
	if s := cmp.Or(synonyms[key], closest(key, known), byWords(key, known)); s != "" {
		e.Msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return e
}

// synonyms are the words people say for a knob that neither spelling nor its words reach:
// the GPU is hardware_sku (not gpu_budget), workers are replicas, tp is part of a layout.
var synonyms = map[string]string{"gpu": "hardware_sku", "workers": "replicas", "tp": "layout"}

// byWords returns the shortest candidate whose words (split at "_" and ".") include every
// word of s — temperature → router_temperature, credit → overlap_score_credit: a knob named
// by its last word is too far from its full name for an edit distance — else "".
func byWords(s string, candidates []string) string {
	split := func(x string) []string {
		return strings.FieldsFunc(x, func(r rune) bool { return r == '_' || r == '.' })
	}
	want := split(strings.ToLower(s))
	best := ""
	for _, c := range candidates {
		words := split(c)
		if len(want) == 0 || slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(words, w) }) {
			continue
		}
		if best == "" || len(c) < len(best) || (len(c) == len(best) && c < best) {
			best = c
		}
	}
	return best
}

// closest returns the candidate nearest to s by edit distance when it is near enough to be
// a likely typo (at most a third of s's length, at least 1), else "".
func closest(s string, candidates []string) string {
	best, bestD := "", max(1, len(s)/3)+1
	for _, c := range candidates {
		if d := levenshtein.ComputeDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// knownKeys are the keys --set accepts, full (search_space.router_mode) and short
// (router_mode, replicas): the fingerprint's keys, the settings outside it, and the aliases.
func knownKeys() []string {
	keys := []string{"search_space.gpu_budget", "workload.trace_format", "sweep.parallel_evals",
		"goal.sla.ttft_ms", "goal.sla.tpot_ms", "goal.sla.e2e_latency_ms", "goal.sla.percentile"}
	f := Default()
	for _, s := range f.settings(nil, "", f.listText, -1) {
		if strings.Contains(s.Key, ".") {
			keys = append(keys, s.Key)
		}
	}
	for _, k := range loadBlock.names() { // at their defaults, absent from the fingerprint
		keys = append(keys, "search_space."+k)
	}
	for _, k := range slices.Clone(keys) {
		if short, ok := strings.CutPrefix(k, "search_space."); ok {
			keys = append(keys, short)
		}
	}
	for a := range aliases {
		keys = append(keys, a)
	}
	slices.Sort(keys)
	return keys
}

// combineFleet sets parallel_configs from replicas=… and/or layout=… (either nil): every
// layout with every replica count, the side not given kept from the current entries.
func (f *File) combineFleet(replicas, layout *override) error {
	if f.disaggregated() {
		return &Error{File: f.Name, Key: keyReplicas, Msg: "replicas and layout set an aggregated fleet; this file's fleet is disaggregated: set parallel_configs=[{prefill: {…}, decode: {…}}]"}
	}
	pcs := f.list("parallel_configs").parallel
	var reps []int
	var lays []ParallelConfig
	for _, pc := range pcs {
		reps = append(reps, pc.Replicas)
		pc.Replicas = 1
		lays = append(lays, pc)
	}
	if replicas != nil {
		var err error
		if reps, err = f.replicaList(replicas.node); err != nil {
			return err
		}
	}
	if layout != nil {
		var err error
		if lays, err = f.layoutList(layout.node); err != nil {
			return err
		}
	}
	pcs = pcs[:0:0]
	for _, l := range lays {
		for _, r := range reps {
			l.Replicas = r
			if !slices.Contains(pcs, l) {
				pcs = append(pcs, l)
			}
		}
	}
	f.setParallelConfigs(pcs)
	return nil
}
