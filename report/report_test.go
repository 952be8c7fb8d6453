package report

import (
	"bytes"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/engine"
)

// A page escapes its text, inlines each chart as an <svg> element without an XML prolog, and
// loads nothing.
func TestPage(t *testing.T) {
	p, err := Lines("a <b> chart", "x", "y", []Series{{Name: "s", X: []float64{1, 2, 3}, Y: []float64{3, 1, 2}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	pg := &Page{Title: "t & u"}
	pg.Para("<script>alert(1)</script>")
	pg.Table([]string{"k"}, [][]string{{"<v>"}})
	pg.Figure(Figure{Name: "f", Plot: p, Caption: "c"})
	html, err := pg.HTML()
	if err != nil {
		t.Fatal(err)
	}
	s := string(html)
	if strings.Contains(s, "<script") || strings.Contains(s, "<?xml") || !strings.Contains(s, "&lt;script&gt;") ||
		!strings.Contains(s, "t &amp; u") || strings.Count(s, "<svg") != 1 || !strings.Contains(s, ">a &lt;b&gt; chart<") {
		t.Fatalf("page:\n%s", s)
	}
	again, _ := pg.HTML()
	if !bytes.Equal(html, again) {
		t.Error("the same page renders differently twice")
	}
}

// A page draws its charts at once on every core, in page order whatever finishes first, and a
// chart that fails fails the page with the first failing chart's name.
func TestPageDrawsChartsConcurrently(t *testing.T) {
	page := func(broken bool) *Page {
		pg := &Page{Title: "charts"}
		for i := range 6 {
			p, err := Lines("chart "+strconv.Itoa(i), "x", "y", []Series{{Name: "s", X: []float64{1, 2, 3}, Y: []float64{3, float64(i), 2}}}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if broken && i >= 3 {
				p = nil // Render recovers gonum/plot's panic on it as an error
			}
			pg.Para("before chart %d", i)
			pg.Figure(Figure{Name: "f" + strconv.Itoa(i), Plot: p})
		}
		return pg
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, err := page(false).HTML()
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(4)
	four, err := page(false).HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one, four) || strings.Count(string(four), "<svg") != 6 {
		t.Errorf("the page drawn on 1 and 4 cores differs (%d and %d bytes) or lacks charts", len(one), len(four))
	}
	if i, j := strings.Index(string(four), "chart 1<"), strings.Index(string(four), "chart 2<"); i < 0 || j < i {
		t.Error("charts out of page order")
	}
	if _, err := page(true).HTML(); err == nil || !strings.Contains(err.Error(), "f3") {
		t.Errorf("page with broken charts f3–f5: error %v, want f3's", err)
	}
}

// Degenerate data gives an error or no chart, never a panic.
func TestDegenerateCharts(t *testing.T) {
	if p, err := CDF("x", "x", []string{"a"}, [][]float64{{0, 0}}); p != nil || err != nil {
		t.Errorf("CDF of no positive value: %v, %v", p, err)
	}
	if _, _, err := Heatmap("h", "t", Grid{}, 0, 1, 0, "z"); err == nil {
		t.Error("empty heatmap drew")
	}
	p, _ := Lines("l", "x", "y", []Series{{X: []float64{-1, 0}, Y: []float64{1, 2}}}, true, nil)
	if _, err := (Figure{Name: "neg", Plot: p}).Render("svg"); err == nil || !strings.Contains(err.Error(), "neg") {
		t.Errorf("log axis over non-positive x: %v", err)
	}
	if err := WriteFigures(t.TempDir(), "gif", nil); err == nil {
		t.Error("--plots gif accepted")
	}
}

// Heatmaps group fleets over 64 workers into rows and say so.
func TestFleetHeatmapsGroupWorkers(t *testing.T) {
	var sn []engine.Snapshot
	for i := range 500 {
		ws := make([]engine.WorkerSnapshot, 200)
		for w := range ws {
			ws[w] = engine.WorkerSnapshot{ActiveBlocks: w + i, PrefixHitRatio: 0.5, Running: 1}
		}
		sn = append(sn, engine.Snapshot{TimeUS: int64(i) * 1_000_000, Workers: ws})
	}
	figs, err := FleetHeatmaps("r", &engine.Report{Snapshots: sn}, FleetScale{})
	if err != nil || len(figs) != 2 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
	if !strings.Contains(figs[0].Caption, "(4 workers a row") || !strings.Contains(figs[0].Caption, "0 to 698 blocks") {
		t.Errorf("caption %q", figs[0].Caption)
	}
	if _, err := figs[0].Render("png"); err != nil {
		t.Fatal(err)
	}
}

func TestCountTicks(t *testing.T) {
	for n, want := range map[int]string{1: "1", 7: "1 2 3 4 5 6 7", 30: "1 5 10 15 20 25 30", 109: "1 10 20 30 40 50 60 70 80 90 100"} {
		var got []string
		for _, tk := range countTicks(n) {
			got = append(got, tk.Label)
		}
		if s := strings.Join(got, " "); s != want {
			t.Errorf("countTicks(%d) = %s, want %s", n, s, want)
		}
	}
}

// A changing disaggregated fleet's replicas timeline draws each pool's serving workers beside
// the fleet's counts (step lines holding each point's count to the next), and its section
// names each pool's GPU-hours; an aggregated one draws the three counts only.
func TestFleetFiguresPools(t *testing.T) {
	tl := []engine.FleetPoint{{TimeMS: 0, Serving: 2}, {TimeMS: 60_000, Serving: 2, Starting: 1}}
	f := &engine.FleetSummary{Timeline: tl, GPUHours: 1.5}
	rep := &engine.Report{Summary: engine.Summary{DurationMS: 120_000, Fleet: f}}
	svg := func() string {
		figs, err := FleetFigures(rep)
		if err != nil || len(figs) != 1 {
			t.Fatalf("%d figures, %v", len(figs), err)
		}
		b, err := figs[0].Render("svg")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if s := svg(); !strings.Contains(s, ">draining<") || strings.Contains(s, "prefill serving") {
		t.Fatal("aggregated replicas timeline: want serving, starting, draining and no pools")
	}
	f.Prefill = &engine.PoolFleet{GPUHours: 1, PeakWorkers: 2, Timeline: []engine.FleetPoint{{TimeMS: 0, Serving: 1}}}
	f.Decode = &engine.PoolFleet{GPUHours: 0.5, PeakWorkers: 1, Timeline: []engine.FleetPoint{{TimeMS: 0, Serving: 1}}}
	if s := svg(); !strings.Contains(s, ">prefill serving<") || !strings.Contains(s, ">decode serving<") {
		t.Fatal("disaggregated replicas timeline: no line per pool")
	}
	s := steps("x", tl, 120_000, func(p engine.FleetPoint) int { return p.Starting })
	if !slices.Equal(s.X, []float64{0, 1, 1, 2}) || !slices.Equal(s.Y, []float64{0, 0, 1, 1}) {
		t.Fatalf("steps %v %v", s.X, s.Y)
	}
	pg := &Page{}
	FleetSection(pg, rep.Summary)
	html, err := pg.HTML()
	if err != nil || !strings.Contains(string(html), "Prefill pool: 1.000 GPU-hours, peak 2 workers") {
		t.Fatalf("fleet section lacks the pools (%v)", err)
	}
}
