package sweep

import "testing"

// A point that turns requests away because every worker is busy ranks after one that serves
// them all, however fast the requests it did serve.
func TestBusyRejectionsRankLast(t *testing.T) {
	o := Objective{Target: "ttft"}
	fast := Metrics{TTFTMS: 100, BusyRejected: 0.05}
	slow := Metrics{TTFTMS: 900}
	if o.Better(fast, slow) || !o.Better(slow, fast) {
		t.Fatal("a point rejecting 5 % of requests ranked before one serving all")
	}
	if o.Score(fast) <= o.Value(fast) {
		t.Fatalf("score %.0f: the rejections cost the search model nothing", o.Score(fast))
	}
}
