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
