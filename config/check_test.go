package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerlab/routerlab/engine"
)

// Checking the requests of a space of 3,400 batch sizes costs about what checking one
// deployment does: the trace's smallest and largest request decide admission, so the
// whole trace is not walked once per deployment (that took 1.6–8.6 s, deaf to ctrl+c).
func TestCheckRequestsWalksTheTraceOncePerAdmission(t *testing.T) {
	timed := func(sets ...string) time.Duration {
		t.Helper()
		f := Default()
		if err := f.Apply(sets); err != nil {
			t.Fatal(err)
		}
		exp, err := NewExperiment(f)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := exp.CheckRequests(f.Workload.SearchRequests, f.Validate.Requests); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	vals := make([]string, 3400)
	for i := range vals {
		vals[i] = fmt.Sprint(1024 + i)
	}
	one := timed("agg_max_num_batched_tokens=16384")
	many := timed("agg_max_num_batched_tokens=[" + strings.Join(vals, ",") + "]")
	t.Logf("one deployment %v, 3,400 deployments %v", one, many)
	if many > 20*one+100*time.Millisecond {
		t.Errorf("3,400 deployments took %v to check, one took %v: the trace is walked per deployment", many, one)
	}
}

// The shortcut decides as Admit does on every deployment: for context lengths around the
// trace's request sizes, strict or not, CheckRequests fails exactly when some deployment's
// Admit does, with Admit's message.
func TestCheckRequestsDecidesAsAdmit(t *testing.T) {
	for _, strict := range []bool{false, true} {
		for _, cl := range []int{1, 600, 2000, 8000, 40000, 131072} {
			f := Default()
			sets := []string{fmt.Sprintf("context_length=%d", cl), "agg_max_num_batched_tokens=[8192, 16384]"}
			if strict {
				sets = append(sets, "workload.strict=true")
			}
			if err := f.Apply(sets); err != nil {
				t.Fatal(err)
			}
			exp, err := NewExperiment(f)
			if err != nil {
				t.Fatal(err)
			}
			var want error
			for _, d := range exp.deployments {
				d.NumGPUBlocks = exp.workers[d].Capacity().NumGPUBlocks
				cfg := engine.Config{Worker: d, Strict: strict}
				if _, _, err := cfg.Admit(exp.Trace.First(200)); err != nil && want == nil {
					want = err
				}
			}
			got := exp.CheckRequests(200)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("strict %v, context_length %d: CheckRequests %v, Admit %v", strict, cl, got, want)
			}
		}
	}
}

// vLLM refuses fewer batched tokens than sequences, and so does an experiment, before its
// trace is replayed (a budget of one token a step once ran for hundreds of millions of
// steps); equal is allowed.
func TestBatchedTokensBelowSeqsRefused(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"agg_max_num_batched_tokens=[1]"}, "embedded defaults: search_space: agg_max_num_batched_tokens 1 is below agg_max_num_seqs 512: vLLM refuses max_num_batched_tokens below max_num_seqs"},
		{[]string{"agg_max_num_seqs=[64, 65536]"}, "agg_max_num_batched_tokens 16384 is below agg_max_num_seqs 65536"},
		{[]string{"agg_max_num_batched_tokens=[512, 16384]"}, ""},
		{[]string{"agg_max_num_batched_tokens=[64]", "agg_max_num_seqs=[64]"}, ""},
	} {
		f := Default()
		if err := f.Apply(c.sets); err != nil {
			t.Fatal(err)
		}
		f.Workload.TracePath = "builtin:conversation"
		_, err := NewExperiment(f)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.sets, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want one containing %q", c.sets, err, c.want)
		}
	}
}
