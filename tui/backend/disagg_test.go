package backend

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/sweep"
	"github.com/routerlab/routerlab/tui"
)

// A split of the seed's eight workers runs as the replay of its `y` command does (the same
// figures, pool by pool), and the explorer's result carries both pools: the fleet's rows
// (prefill first), each pool's prefix hits, and TTFT's parts with the KV transfer.
func TestSplitRunsAsItsReplay(t *testing.T) {
	exp, s := smallExperiment(t, 300)
	k := s.Initial()
	k.Deployment.Prefill = 3
	res, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Metrics.Disagg
	switch {
	case d == nil:
		t.Fatal("a split's result has no disaggregated figures")
	case d.Prefill.Workers != 3 || d.Decode.Workers != 5 || res.Fleet.Prefill != 3 || res.Fleet.Workers() != 8:
		t.Fatalf("pools %d + %d, fleet rows %d (prefill %d); want 3 + 5 of 8", d.Prefill.Workers, d.Decode.Workers, res.Fleet.Workers(), res.Fleet.Prefill)
	case d.TransferMS <= 0 || d.TransferP95MS < d.TransferMS || d.TransferGB <= 0:
		t.Fatalf("transfer mean %v ms, p95 %v ms, %v GB: want a positive transfer at 64 GB/s", d.TransferMS, d.TransferP95MS, d.TransferGB)
	case d.Prefill.PrefixHit <= 0 || d.Decode.PrefixHit != 0:
		t.Fatalf("prefix hits prefill %v, decode %v: want the prefill pool's reuse, none on the decode pool (its prefix caching is off)", d.Prefill.PrefixHit, d.Decode.PrefixHit)
	}
	sum := d.PrefillMS + d.DecodeWaitMS + d.TransferMS + d.FirstDecodeMS
	if math.Abs(sum-res.Metrics.TTFT.Mean) > 0.01 {
		t.Fatalf("TTFT's parts add to %v ms, mean TTFT %v ms", sum, res.Metrics.TTFT.Mean)
	}
	hit := func(rows [][]float64) (n int) {
		for _, row := range rows {
			for _, v := range row {
				if !math.IsNaN(v) && v > 0 {
					n++
				}
			}
		}
		return n
	}
	if hit(res.Fleet.HitRatio[:3]) == 0 || hit(res.Fleet.HitRatio[3:]) != 0 {
		t.Fatalf("hit heatmap: %d prefill cells with hits, %d decode cells; want some, none", hit(res.Fleet.HitRatio[:3]), hit(res.Fleet.HitRatio[3:]))
	}

	sets, err := s.ReplaySets(k)
	if err != nil {
		t.Fatal(err)
	}
	if want := "parallel_configs=[{prefill: {tp: 4, attention_dp: 1, moe_tp: 1, moe_ep: 4, replicas: 3}, decode: {tp: 4, attention_dp: 1, moe_tp: 1, moe_ep: 4, replicas: 5}}]"; !strings.Contains(strings.Join(sets, " "), want) {
		t.Fatalf("replay sets %q lack %s", sets, want)
	}
	rep := replayWith(t, exp.File, sets, 300)
	got := disaggMetrics(rep.Summary.Disagg, rep.Summary.MeanTPOTMS)
	// The explorer's sweep (s, and serve's sweeps) searches the router knobs at this split.
	sf, err := NewSweeper(s).File(k)
	if err != nil {
		t.Fatalf("the sweep's file at the split: %v", err)
	}
	if pc := sf.Values("parallel_configs"); len(pc) != 1 || sf.ModeOf(pc[0].Text) != config.ModeDisagg {
		t.Fatalf("the sweep at the split searches parallel_configs %v", pc)
	}
	if *got != *d || rep.Summary.MeanTTFTMS != res.Metrics.TTFT.Mean || rep.Summary.MeanTPOTMS != res.Metrics.TPOT.Mean {
		t.Fatalf("replay of %q: %+v TTFT %v TPOT %v; explorer %+v TTFT %v TPOT %v", sets, *got, rep.Summary.MeanTTFTMS, rep.Summary.MeanTPOTMS,
			*d, res.Metrics.TTFT.Mean, res.Metrics.TPOT.Mean)
	}
}

// On the real simulator, `a` splits the fleet and the screen shows both pools — their rows
// labelled p and d, each pool's figures, TTFT with the KV transfer — `]` and `[` move the
// split, refusing to empty a pool, and `a` again joins the pools into the run it started from.
func TestDisaggKeysOnScreen(t *testing.T) {
	_, s := smallExperiment(t, 300)
	se := newSession(t, s, 4)
	screen := func() string { return ansi.Strip(se.model.View().Content) }
	agg := screen()
	for _, not := range []string{"p0", "prefill pool", "transfer"} {
		if strings.Contains(agg, not) {
			t.Fatalf("the aggregated screen shows %q:\n%s", not, agg)
		}
	}
	se.keys("[")
	if got := screen(); !strings.Contains(got, "[: moves the prefill/decode split of a disaggregated fleet; a disaggregates first") {
		t.Fatalf("[ in an aggregated fleet does not say why it does nothing:\n%s", got)
	}

	se.keys("a")
	got := screen()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Fleet · kv_router · 2 prefill \+ 2 decode`),
		regexp.MustCompile(`\n *p0 `), regexp.MustCompile(`\n *p1 `), regexp.MustCompile(`\n *d0 `), regexp.MustCompile(`\n *d1 `),
		regexp.MustCompile(`p: prefill pool \(2\) · d: decode pool \(2\)|p prefill · d decode`),
		regexp.MustCompile(`TTFT = prefill \+ wait \+ transfer \+ 1st.*\n.*\d+\.\d+ \+ \d+\.\d+ \+ \d+\.\d+ \+ \d+\.\d+`),
		regexp.MustCompile(`KV transfer p95 \d+\.\d+ ms · \d+\.\d+ GB`),
		regexp.MustCompile(`prefill pool  2w hit +\d+% TTFT +\d+%`),
		regexp.MustCompile(`decode pool   2w TPOT \d+\.\d+ ms imb \d\.\d\d`),
	} {
		if !want.MatchString(got) {
			t.Errorf("after a: the screen lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "w0 ") {
		t.Errorf("after a: a row is still labelled w0:\n%s", got)
	}

	se.keys("]")
	if got := screen(); !strings.Contains(got, "3 prefill + 1 decode") || !strings.Contains(got, "\n p2 ") && !regexp.MustCompile(`\n *p2 `).MatchString(got) {
		t.Fatalf("after ]: not 3 prefill + 1 decode:\n%s", got)
	}
	se.keys("]")
	if got := screen(); !strings.Contains(got, "]: 3 prefill + 1 decode: the decode pool keeps one worker at least") {
		t.Fatalf("] at 3 + 1 does not refuse:\n%s", got)
	}
	se.keys("[", "[")
	if got := screen(); !strings.Contains(got, "1 prefill + 3 decode") {
		t.Fatalf("after [ [: not 1 prefill + 3 decode:\n%s", got)
	}
	se.keys("[")
	if got := screen(); !strings.Contains(got, "[: 1 prefill + 3 decode: the prefill pool keeps one worker at least") {
		t.Fatalf("[ at 1 + 3 does not refuse:\n%s", got)
	}

	se.keys("a")
	// The same point as the first run, drawn the same but for the header (the run count)
	// and the status line (what a did).
	lines := func(s string) []string { l := strings.Split(s, "\n"); return l[1 : len(l)-1] }
	if got, want := lines(screen()), lines(agg); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after a again:\n%s\nwant the first run's screen:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// `routerlab watch` of a sweep over both deployment modes: each split is a row of its own
// (the router knobs are the same), and the selected disaggregated row shows its pools —
// the figures of the ledger's runs, as report.md gives them.
func TestWatchShowsASplitsPools(t *testing.T) {
	f := config.Default()
	if err := f.Apply([]string{"deployment_mode=[agg, disagg]",
		"parallel_configs=[{tp: 4, moe_ep: 4, replicas: 8}, {prefill: {tp: 4, moe_ep: 4, replicas: 3}, decode: {tp: 4, moe_ep: 4, replicas: 5}}]",
		"router_mode=kv_router", "overlap_score_credit=1.0", "prefill_load_scale=1.0", "router_temperature=0.0",
		"prefill_max_num_seqs=512", "decode_max_num_batched_tokens=16384", "decode_max_num_seqs=512",
		"validate.enabled=false", "sweep.algorithm=grid", "workload.search_requests=300"}); err != nil {
		t.Fatal(err)
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	res, err := sweep.Run(context.Background(), exp.File, exp, sweep.Options{Out: dir, Experiment: exp.Fingerprint()})
	if err != nil {
		t.Fatal(err)
	}
	var split *sweep.Evaluation
	for i := range res.Search.Evaluations {
		if e := &res.Search.Evaluations[i]; e.Runs[0].Disagg != nil {
			split = e
		}
	}
	if split == nil {
		t.Fatal("no disaggregated evaluation")
	}
	w := tui.NewWatch(tui.WatchOptions{Title: dir, Sweep: NewDirWatcher(dir, time.Millisecond)})
	w.Update(tea.WindowSizeMsg{Width: 140, Height: 20})
	drive(t, w, w.Init())
	screen := ansi.Strip(w.View().Content)
	d := split.Runs[0].Disagg
	want := fmt.Sprintf("p3+d5: prefill %.1f ms (%.0f%% of TTFT, hit %.0f%%) · KV %.2f ms, p95 %.2f · decode TPOT %.2f ms",
		d.MeanPrefillMS, 100*d.PrefillTTFTShare, 100*d.Prefill.PrefixHitRatio, d.MeanTransferMS, d.P95TransferMS, split.Runs[0].MeanTPOTMS)
	if !strings.Contains(screen, want) {
		t.Fatalf("the watch lacks the split's pools %q:\n%s", want, screen)
	}
	// The router knobs are not searched (one value each): two rows only if the fleets are kept apart.
	if rows := regexp.MustCompile(`(?m)^[▸ ] +– +– +– +\d+\.\d +1 `).FindAllString(screen, -1); len(rows) != 2 {
		t.Fatalf("%d rows, want the aggregated fleet's and the split's apart:\n%s", len(rows), screen)
	}
}

// An experiment file that is already disaggregated opens on its own split — the decode
// pool's tp1 beside the prefill pool's tp4 (DynoSim's example, on the built-in trace) — so
// a bare replay of the file is the explorer's first run, and `[` trades one tp4 prefill
// worker for four tp1 decode workers, the 16 GPUs kept, a point its `y` command replays.
func TestFileSplitOpensAsTheFileRuns(t *testing.T) {
	f, err := config.Load("../../examples/dynosim-disagg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// context_length pinned at the model's limit, where the explorer caps an unpinned one.
	if err := f.Apply([]string{"workload.trace_path=builtin:toolagent", "context_length=40960"}); err != nil {
		t.Fatal(err)
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSim(exp, 200)
	if err != nil {
		t.Fatal(err)
	}
	k := s.Initial()
	if got := k.Deployment.String(); got != "3 prefill × tp4 + 4 decode × tp1 · 8192 tok · 256 seqs · KV bf16 · sync" {
		t.Fatalf("initial deployment %q", got)
	}
	same := func(k tui.Knobs, wantSets string) {
		t.Helper()
		res, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sets, err := s.ReplaySets(k)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(sets, " "); got != wantSets {
			t.Fatalf("replay sets %q, want %q", got, wantSets)
		}
		rep := replayWith(t, f, sets, 200)
		if got := disaggMetrics(rep.Summary.Disagg, rep.Summary.MeanTPOTMS); *got != *res.Metrics.Disagg || rep.Summary.MeanE2EMS != res.Metrics.E2E.Mean {
			t.Fatalf("replay %+v e2e %v; explorer %+v e2e %v", *got, rep.Summary.MeanE2EMS, *res.Metrics.Disagg, res.Metrics.E2E.Mean)
		}
	}
	same(k, "")

	m := tui.New(tui.Options{Space: s.Space(), Initial: k, Sim: s})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	drive(t, m, m.Init())
	press := func(key string) string {
		var cmd tea.Cmd
		_, cmd = m.Update(tea.KeyPressMsg{Code: []rune(key)[0], Text: key})
		drive(t, m, cmd)
		return ansi.Strip(m.View().Content)
	}
	if got := press("["); !strings.Contains(got, "2 prefill + 8 decode workers (1 tp4 for 4 tp1: the same GPUs)") {
		t.Fatalf("[ from 3 × tp4 + 4 × tp1:\n%s", got)
	}
	if got := press("]"); !strings.Contains(got, "3 prefill + 4 decode workers (1 tp4 for 4 tp1: the same GPUs)") {
		t.Fatalf("] back:\n%s", got)
	}
	if got := press("]"); !strings.Contains(got, "]: 3 prefill + 4 decode: the decode pool keeps one worker at least") {
		t.Fatalf("] at 3 × tp4 + 4 × tp1 (4 decode workers are one prefill worker's GPUs):\n%s", got)
	}
	k.Deployment.Prefill, k.Deployment.Replicas = 2, 10
	same(k, "parallel_configs=[{prefill: {tp: 4, attention_dp: 1, moe_tp: 4, moe_ep: 1, replicas: 2}, decode: {tp: 1, attention_dp: 1, moe_tp: 1, moe_ep: 1, replicas: 8}}]")
}

// replayWith is the report of `routerlab replay --requests requests` on file f with the
// --set overrides sets: what a `y` command gives.
func replayWith(t *testing.T, f *config.File, sets []string, requests int) *engine.Report {
	t.Helper()
	rf := f.Clone()
	if err := rf.Apply(sets); err != nil {
		t.Fatalf("%q: %v", sets, err)
	}
	rexp, err := config.NewExperiment(rf)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rexp.EngineConfig(rf.DefaultPoint()) // as routerlab replay runs it
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rexp.Run(context.Background(), cfg, requests)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
