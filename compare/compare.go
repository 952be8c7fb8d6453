// Package compare puts finished runs side by side: every summary metric with its absolute
// and relative difference, paired bootstrap intervals where both runs kept per-request
// records of the same requests, and the settings that differ between their experiments.
// It reads run directories and replay JSON; it never simulates.
package compare

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/routerlab/routerlab/internal/readlimit"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/sweep"
)

// Run is one side of a comparison.
type Run struct {
	Path       string
	Kind       string // "replay" or "sweep (validated best)"
	Experiment config.Fingerprint
	Summary    engine.Summary
	Requests   []engine.RequestRecord // nil when the run kept none
	// DefaultSLO: the summary's goodput is counted here, from Requests, under
	// config.DefaultSLO (the run had no goal.sla, so its replay.json has none).
	DefaultSLO bool
}

// Files of a replay's run directory (routerlab replay --out).
const (
	ReplayJSON     = "replay.json"
	ReplayRequests = "requests.jsonl"
)

// replayFile is replay's JSON: the fingerprint, then the summary's keys.
type replayFile struct {
	Experiment config.Fingerprint `json:"experiment"`
	engine.Summary
}

// Load reads a run: a replay directory (replay.json, and requests.jsonl when present), a
// sweep directory (summary.json: the validated best run, else the search's best), or a
// replay JSON file (routerlab replay --format json).
func Load(path string) (*Run, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return loadReplay(path, "")
	}
	if _, err := os.Stat(filepath.Join(path, ReplayJSON)); err == nil {
		return loadReplay(filepath.Join(path, ReplayJSON), filepath.Join(path, ReplayRequests))
	}
	sum, err := sweep.ReadSummary(path)
	if err != nil {
		return nil, err
	}
	if sum == nil {
		return nil, fmt.Errorf("%s: neither a replay directory (%s) nor a finished sweep (summary.json)", path, ReplayJSON)
	}
	r := &Run{Path: path, Kind: "sweep, search best", Experiment: sum.Experiment, Summary: sum.Best.Metrics}
	for _, v := range sum.Validation {
		if v.Name == sweep.Best {
			r.Kind, r.Summary = "sweep, validated best", v.Metrics
		}
	}
	if err := checkSummary(filepath.Join(path, sweep.OutputNames[0]), r.Summary); err != nil {
		return nil, err
	}
	return r, nil
}

func loadReplay(path, requests string) (*Run, error) {
	data, err := readlimit.ReadFile(path, MaxReplayBytes, "a replay report")
	if err != nil {
		return nil, err
	}
	var rf replayFile
	if err := json.Unmarshal(data, &rf); err != nil {
		return nil, fmt.Errorf("%s: not a routerlab replay JSON: %w", path, err)
	}
	if len(rf.Experiment) == 0 {
		return nil, fmt.Errorf("%s: not a routerlab replay JSON: no experiment fingerprint", path)
	}
	if err := checkSummary(path, rf.Summary); err != nil {
		return nil, err
	}
	r := &Run{Path: strings.TrimSuffix(path, string(filepath.Separator)+ReplayJSON), Kind: "replay", Experiment: rf.Experiment, Summary: rf.Summary}
	if requests == "" {
		return r, nil
	}
	fh, err := readlimit.Open(requests, MaxRequestsBytes, "a replay's per-request records")
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	sc := fh.Lines(1 << 20)
	seen := map[int]int{} // id → line
	line := 1
	for ; sc.Scan(); line++ {
		if line > MaxRequestRecords {
			return nil, fmt.Errorf("%s:%d: more than %d records, the limit of a paired comparison", requests, line, MaxRequestRecords)
		}
		var rec engine.RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", requests, line, err)
		}
		if first, dup := seen[rec.ID]; dup {
			return nil, fmt.Errorf("%s:%d: id: %d is also the id of line %d (requests pair by id)", requests, line, rec.ID, first)
		}
		seen[rec.ID] = line
		r.Requests = append(r.Requests, rec)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s:%d: a line longer than the 1 MiB limit of a request record", requests, line)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", requests, err)
	}
	if r.Summary.Goodput == nil && len(r.Requests) > 0 {
		r.Summary.Goodput = engine.GoodputOf(r.Requests, config.DefaultSLO, r.Summary.DurationMS)
		r.DefaultSLO = true
	}
	return r, nil
}

// Limits of what compare reads: a replay report is a few KB (its workers list grows by
// about 100 B a worker); a per-request record is about 200 B of JSON and 72 B in memory, so
// 2²¹ records are about 400 MB of file and, with the pairing's index, about 400 MB of memory
// for both runs.
const (
	MaxReplayBytes    = 16 << 20
	MaxRequestsBytes  = 1 << 30
	MaxRequestRecords = 1 << 21
)

// checkSummary refuses numbers no replay writes: a negative count, time or rate.
func checkSummary(path string, s engine.Summary) error {
	keys, vals := Metrics(s)
	for i, v := range vals {
		if v < 0 || math.IsNaN(v) {
			return fmt.Errorf("%s: %s: %v is negative (not a routerlab replay JSON)", path, keys[i], v)
		}
	}
	return nil
}

// Metric is one summary number of both runs: Abs = other − base, Rel = Abs ÷ base (NaN when
// base is 0).
type Metric struct {
	Key         string
	Base, Other float64
	Abs, Rel    float64
}

// Comparison is other against base.
type Comparison struct {
	Base, Other *Run
	Metrics     []Metric
	// Paired holds per-request differences other − base of e2e latency, TTFT and TPOT with
	// their bootstrap intervals, when both runs recorded the same requests.
	Paired []Paired
	// NoPairing says why Paired is empty.
	NoPairing string
	Changes   []config.Change
}

// Paired is one paired per-request difference.
type Paired struct {
	Metric string // e2e_latency_ms, ttft_ms, tpot_ms
	sweep.PairedDiff
}

// Metrics lists the summary's numbers by their JSON keys, in the summary's order, and the
// goodput's as goodput.KEY; wall time, which differs between identical runs, is left out.
func Metrics(s engine.Summary) ([]string, []float64) {
	var keys []string
	var vals []float64
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			fv := v.Field(i)
			switch fv.Kind() {
			case reflect.Float64:
				keys, vals = append(keys, prefix+name), append(vals, fv.Float())
			case reflect.Int, reflect.Int64:
				keys, vals = append(keys, prefix+name), append(vals, float64(fv.Int()))
			case reflect.Pointer:
				if !fv.IsNil() && fv.Elem().Kind() == reflect.Struct {
					walk(prefix+name+".", fv.Elem())
				}
			case reflect.Struct:
				if fv.Type() != reflect.TypeFor[engine.SLO]() { // the goodput's SLO: targets, not results
					walk(prefix+name+".", fv) // a disaggregated replay's pools
				}
			}
		}
	}
	walk("", reflect.ValueOf(s))
	i := 0
	for j, k := range keys {
		if k != "wall_time_ms" {
			keys[i], vals[i] = k, vals[j]
			i++
		}
	}
	return keys[:i], vals[:i]
}

// withoutTiers is s with, when s had no KV tiers and other has, what no tiers means: every
// prompt token from G1 (its prefix reuse) or computed, nothing moved — so that a run with
// tiers compares its kv_tiers figures against one without.
func withoutTiers(s, other engine.Summary) engine.Summary {
	if s.KVTiers == nil && other.KVTiers != nil {
		s.KVTiers = &engine.TierSummary{G1HitRatio: s.PrefixCacheReusedRatio}
	}
	return s
}

// Compare puts other against base; seed makes the bootstrap reproducible.
func Compare(base, other *Run, seed uint64) (*Comparison, error) {
	c := &Comparison{Base: base, Other: other, Changes: config.Diff(base.Experiment, other.Experiment)}
	bs, os := withoutTiers(base.Summary, other.Summary), withoutTiers(other.Summary, base.Summary)
	bk, bv := Metrics(bs)
	ok, ov := Metrics(os)
	theirs := map[string]float64{}
	for i, k := range ok {
		theirs[k] = ov[i]
	}
	for i, k := range bk {
		o, found := theirs[k]
		if !found {
			continue
		}
		m := Metric{Key: k, Base: bv[i], Other: o, Abs: o - bv[i], Rel: math.NaN()}
		if bv[i] != 0 {
			m.Rel = m.Abs / bv[i]
		}
		c.Metrics = append(c.Metrics, m)
	}
	var err error
	c.Paired, c.NoPairing, err = paired(base.Requests, other.Requests, seed)
	return c, err
}

func paired(base, other []engine.RequestRecord, seed uint64) ([]Paired, string, error) {
	if len(base) == 0 || len(other) == 0 {
		return nil, "no paired interval: a run has no per-request records (replay --out DIR keeps them)", nil
	}
	byID := map[int]engine.RequestRecord{}
	for _, r := range other {
		byID[r.ID] = r
	}
	var a, b [3][]float64
	for _, r := range base {
		o, ok := byID[r.ID]
		if !ok || o.OutputLength != r.OutputLength {
			continue
		}
		a[0], b[0] = append(a[0], o.E2EMS), append(b[0], r.E2EMS)
		a[1], b[1] = append(a[1], o.TTFTMS), append(b[1], r.TTFTMS)
		if r.OutputLength > 1 {
			n := float64(r.OutputLength - 1)
			a[2], b[2] = append(a[2], (o.E2EMS-o.TTFTMS)/n), append(b[2], (r.E2EMS-r.TTFTMS)/n)
		}
	}
	if len(a[0]) < len(base)/2 {
		return nil, fmt.Sprintf("no paired interval: only %d of %d requests are in both runs", len(a[0]), len(base)), nil
	}
	var out []Paired
	for i, name := range []string{"e2e_latency_ms", "ttft_ms", "tpot_ms"} {
		if len(a[i]) == 0 {
			continue
		}
		d, err := sweep.PairedBootstrap(a[i], b[i], seed+uint64(i))
		if err != nil {
			return nil, "", err
		}
		out = append(out, Paired{Metric: name, PairedDiff: *d})
	}
	return out, "", nil
}
