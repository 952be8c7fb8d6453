package config

import (
	"strings"
	"testing"
)

// goal.sla reads as a mapping in the file and as dotted keys from --set, reaches the engine
// configuration, and enters the fingerprint only when given.
func TestGoalSLA(t *testing.T) {
	text := strings.Replace(string(seedYAML), "  target: e2e_latency", "  target: e2e_latency\n  sla: {ttft_ms: 200, tpot_ms: 12, percentile: 95}", 1)
	f, err := Parse([]byte(text), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := Default()
	if _, ok := g.Fingerprint().Get("goal.sla.ttft_ms"); ok {
		t.Fatal("an experiment without goal.sla lists it in its fingerprint")
	}
	// Without goal.sla, reports count goodput under the default SLO and say it is one; the
	// simulation itself counts none (replay's JSON is what it was).
	if s := g.Goal.SLAText(); s != "TTFT ≤ 2000 ms, TPOT ≤ 30 ms for 90 % of requests (the default SLO; goal.sla sets another)" {
		t.Fatalf("default SLAText = %q", s)
	}
	if slo := g.Goal.ReportSLO(); slo != DefaultSLO {
		t.Fatalf("default ReportSLO %+v", slo)
	}
	if err := g.Apply([]string{"goal.sla.ttft_ms=200", "goal.sla.tpot_ms=12", "goal.sla.percentile=95"}); err != nil {
		t.Fatal(err)
	}
	if d := Diff(f.Fingerprint(), g.Fingerprint()); len(d) > 0 {
		t.Fatalf("file and --set spellings differ: %v", d)
	}
	if v, _ := g.Fingerprint().Get("goal.sla.tpot_ms"); v != "12" {
		t.Fatalf("fingerprint goal.sla.tpot_ms = %q", v)
	}
	if s := f.Goal.SLAText(); s != "TTFT ≤ 200 ms, TPOT ≤ 12 ms for 95 % of requests" {
		t.Fatalf("SLAText = %q", s)
	}
	exp, err := NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := exp.EngineConfig(f.DefaultPoint())
	if err != nil || cfg.SLO.TTFTMS != 200 || cfg.SLO.TPOTMS != 12 || cfg.SLO.E2EMS != 0 {
		t.Fatalf("engine SLO %+v, %v", cfg.SLO, err)
	}
	for _, c := range []struct{ set, want string }{
		{"goal.sla.percentile=0", "goal.sla.percentile: want a number in [1, 100]"},
		{"goal.sla.ttft=5", "unknown key (did you mean goal.sla.ttft_ms?)"},
		{"goal.sla=5", "goal.sla: want a mapping"},
	} {
		if err := Default().Set(c.set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Set(%q) = %v, want %q", c.set, err, c.want)
		}
	}
}
