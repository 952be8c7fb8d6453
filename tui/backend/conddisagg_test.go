package backend

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/tui"
)

// A split with conditional disaggregation on (`c`) runs as the replay of its `y` command
// does — the frontend's flag, kv_router alone and the decode pool's prefix caching named —
// some requests skip the prefill pool, and the explorer's sweep at the split keeps
// router_mode to kv_router, the only mode Dynamo runs the flag under. Off, the split runs as
// it did before the key existed; under round_robin the run fails naming the key.
func TestConditionalSplitRunsAsItsReplay(t *testing.T) {
	exp, s := smallExperiment(t, 300)
	k := s.Initial()
	k.Deployment.Prefill = 4
	plain, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	k.Deployment.Conditional = true
	res, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Metrics.Disagg
	if d.Bypassed == 0 || d.Bypassed >= res.Metrics.Completed || plain.Metrics.Disagg.Bypassed != 0 {
		t.Fatalf("bypassed %d of %d with conditional disaggregation, %d without: want some, not all, and none",
			d.Bypassed, res.Metrics.Completed, plain.Metrics.Disagg.Bypassed)
	}
	if d.Prefill.Workers+d.Decode.Workers != 8 || d.Decode.PrefixHit <= 0 {
		t.Fatalf("pools %d + %d, decode prefix hits %v: want 8 workers and hits on the decode pool", d.Prefill.Workers, d.Decode.Workers, d.Decode.PrefixHit)
	}

	sets, err := s.ReplaySets(k)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(sets, " ")
	if want := "router_conditional_disagg=true router_mode=kv_router decode_enable_prefix_caching=true"; !strings.Contains(joined, want) || strings.Count(joined, "router_mode=") != 1 {
		t.Fatalf("replay sets %q: want %q once", joined, want)
	}
	rep := replayWith(t, exp.File, sets, 300)
	if got := disaggMetrics(rep.Summary.Disagg, rep.Summary.MeanTPOTMS); *got != *d || rep.Summary.MeanTTFTMS != res.Metrics.TTFT.Mean {
		t.Fatalf("replay of %q: %+v TTFT %v; explorer %+v TTFT %v", joined, *got, rep.Summary.MeanTTFTMS, *d, res.Metrics.TTFT.Mean)
	}

	sf, err := NewSweeper(s).File(k)
	if err != nil {
		t.Fatalf("the sweep's file at the conditional split: %v", err)
	}
	if modes := sf.Values(config.KeyRouterMode); len(modes) != 1 || modes[0].Text != "kv_router" {
		t.Fatalf("the sweep at the conditional split searches router_mode %v", modes)
	}

	k.Mode = "round_robin"
	if _, err := s.Simulate(context.Background(), tui.Run{Knobs: k}, nil); err == nil || !strings.HasPrefix(err.Error(), "router_conditional_disagg: needs router_mode kv_router") {
		t.Fatalf("conditional split under round_robin: %v", err)
	}
}

// On the real simulator `a` then `c` puts the count of requests prefilled on their decode
// worker on the Metrics pane, and `c` again takes it off.
func TestConditionalKeyOnScreen(t *testing.T) {
	_, s := smallExperiment(t, 300)
	se := newSession(t, s, 8)
	screen := func() string { return ansi.Strip(se.model.View().Content) }
	se.keys("a", "c")
	line := regexp.MustCompile(`prefilled on decode: (\d+) of 300`).FindStringSubmatch(screen())
	if line == nil {
		t.Fatalf("after a c: no conditional line:\n%s", screen())
	}
	if n, _ := strconv.Atoi(line[1]); n == 0 {
		t.Fatalf("after a c: %s", line[0])
	}
	if !strings.Contains(screen(), "4 prefill + 4 decode") {
		t.Fatalf("after a c: not 4 prefill + 4 decode:\n%s", screen())
	}
	se.keys("c")
	if got := screen(); strings.Contains(got, "prefilled on decode:") || !strings.Contains(got, "conditional disaggregation off") {
		t.Fatalf("after c again:\n%s", got)
	}
}
