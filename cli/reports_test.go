package cli

import (
	"encoding/csv"
	"encoding/json"
	"html"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerlab/routerlab/internal/chartcheck"
	"github.com/routerlab/routerlab/report"
)

// replay's table and its report.html say the same sentence on the SLO, word for word, under
// goal.sla and under the default SLO; the JSON carries goodput only under goal.sla (a default
// run's JSON bytes are what they were).
func TestReplaySLOSameInTableAndHTML(t *testing.T) {
	for _, c := range []struct {
		name string
		sets []string
		want string
	}{
		{"goal.sla", []string{"--set", "goal.sla.ttft_ms=100", "--set", "goal.sla.tpot_ms=10"}, "SLO TTFT ≤ 100 ms, TPOT ≤ 10 ms for 90 % of requests: "},
		{"default", nil, "SLO TTFT ≤ 2000 ms, TPOT ≤ 30 ms for 90 % of requests (the default SLO; goal.sla sets another): "},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			table, _, err := runCmd(t, newReplayCmd(), append([]string{"--requests", "300", "--out", dir}, c.sets...)...)
			if err != nil {
				t.Fatal(err)
			}
			var line string
			for _, l := range strings.Split(table, "\n") {
				if strings.HasPrefix(l, "SLO ") {
					line = l
				}
			}
			if !strings.HasPrefix(line, c.want) || !strings.Contains(line, "goodput ") {
				t.Fatalf("table's SLO line %q, want it to start %q and give the goodput", line, c.want)
			}
			page, err := os.ReadFile(filepath.Join(dir, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(html.UnescapeString(string(page)), line) {
				t.Errorf("report.html does not say the table's SLO line %q", line)
			}
			js, _, err := runCmd(t, newReplayCmd(), append([]string{"--requests", "300", "--format", "json"}, c.sets...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.Contains(js, `"goodput"`), c.sets != nil; got != want {
				t.Errorf("JSON has goodput: %v, want %v", got, want)
			}
		})
	}
	// The verdict follows the percentile: 100 ms TTFT is missed by more than 10 % of requests.
	table, _, err := runCmd(t, newReplayCmd(), "--requests", "300", "--set", "goal.sla.ttft_ms=1", "--set", "goal.sla.percentile=50")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, ", missed: 50 % must), goodput ") {
		t.Errorf("a 1 ms TTFT SLO is not missed:\n%s", table)
	}
}

// --plots writes every chart the page draws: as many files under plots/ as <svg> elements in
// the page, for replay, curve and compare (sweep: TestSweepReportHTML names each).
func TestPlotsWriteEveryChart(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(dir string) error
		page string
	}{
		{"replay", func(dir string) error {
			_, _, err := runCmd(t, newReplayCmd(), "--requests", "300", "--out", dir, "--plots", "svg")
			return err
		}, "report.html"},
		{"curve", func(dir string) error {
			_, _, err := runCmd(t, newCurveCmd(), "--requests", "100", "--concurrency", "4,16", "--out", dir, "--plots", "svg")
			return err
		}, "curve.html"},
		{"compare", func(dir string) error {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			for _, args := range [][]string{{"--out", a}, {"--out", b, "--set", "prefill_load_scale=4"}} {
				if _, _, err := runCmd(t, newReplayCmd(), append([]string{"--requests", "300"}, args...)...); err != nil {
					return err
				}
			}
			_, _, err := runCmd(t, newCompareCmd(), a, b, "--html", filepath.Join(dir, "compare.html"), "--plots", "svg")
			return err
		}, "compare.html"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := c.run(dir); err != nil {
				t.Fatal(err)
			}
			page, err := os.ReadFile(filepath.Join(dir, c.page))
			if err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "plots", "*.svg"))
			if n := strings.Count(string(page), "<svg"); n == 0 || len(files) != n {
				t.Errorf("%s draws %d charts, plots/ has %d files", c.page, n, len(files))
			}
		})
	}
}

// Piped, a replay's progress is plain lines on standard error ending at every request, and
// standard output stays the JSON alone.
func TestReplayProgressPiped(t *testing.T) {
	defer func(d time.Duration) { progressDelay = d }(progressDelay)
	progressDelay = 0
	stdout, stderr, err := runCmd(t, newReplayCmd(), "--requests", "3000", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("standard output is not JSON alone: %v\n%s", err, stdout)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; last != "replay: 100 % (3000 of 3000 requests)" {
		t.Errorf("progress on standard error ends %q:\n%s", last, stderr)
	}
	if strings.Contains(stderr, "\r") || strings.Contains(stderr, "\x1b") {
		t.Errorf("piped progress draws a terminal bar:\n%q", stderr)
	}
	// curve counts its replays.
	_, stderr, err = runCmd(t, newCurveCmd(), "--requests", "100", "--concurrency", "4,16", "--format", "csv")
	if err != nil || !strings.HasSuffix(stderr, "curve: 100 % (4 of 4 replays)\n") {
		t.Errorf("curve's piped progress (%v):\n%s", err, stderr)
	}
	// A replay shorter than progressDelay shows nothing.
	progressDelay = time.Hour
	if _, stderr, err := runCmd(t, newReplayCmd(), "--requests", "300"); err != nil || stderr != "" {
		t.Errorf("a quick replay printed %q (%v)", stderr, err)
	}
}

// Every printed table has --format json and csv: replay's CSV is one header and one row that
// agree with its JSON; compare's JSON holds each metric's change and its CSV one row per
// metric; curve's CSV is its table with the Pareto mark as true or false.
func TestFormatsJSONAndCSV(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, args := range [][]string{{"--out", a}, {"--out", b, "--set", "prefill_load_scale=4"}} {
		if _, stderr, code := execute(append([]string{"replay", "--requests", "300"}, args...)...); code != 0 {
			t.Fatal(stderr)
		}
	}
	out, stderr, code := execute("replay", "--requests", "300", "--format", "csv")
	if code != 0 {
		t.Fatal(stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 2 || len(recs[0]) != len(recs[1]) {
		t.Fatalf("replay CSV: %v\n%s", err, out)
	}
	js, _, _ := execute("replay", "--requests", "300", "--format", "json")
	var sum map[string]any
	if err := json.Unmarshal([]byte(js), &sum); err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "mean_e2e_latency_ms")
	if col < 0 || recs[1][col] != strconv.FormatFloat(sum["mean_e2e_latency_ms"].(float64), 'g', -1, 64) {
		t.Errorf("replay CSV's mean_e2e_latency_ms (column %d) is not the JSON's %v", col, sum["mean_e2e_latency_ms"])
	}

	// compare counts goodput under the default SLO from the runs' records, the replay's own
	// count, and says under which SLO.
	text, stderr, code := execute("compare", a, b)
	table, _, _ := execute("replay", "--requests", "300")
	good := regexp.MustCompile(`: ([0-9]+) of 300 requests met it`).FindStringSubmatch(table)
	if code != 0 || good == nil || !regexp.MustCompile(`goodput\.good_requests +`+good[1]+` `).MatchString(text) ||
		!strings.Contains(text, "goodput.*: SLO TTFT ≤ 2000 ms, TPOT ≤ 30 ms for 90 % of requests (the default SLO; goal.sla sets another), counted from the per-request records") {
		t.Errorf("compare does not count the replay's goodput under the default SLO (%s):\n%s\n%s", stderr, text, table)
	}

	out, stderr, code = execute("compare", a, b, "--format", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var cs []struct {
		Metrics []struct {
			Metric              string
			Base, Other, Change float64
		}
		Paired  []struct{ Metric string }
		Changes []struct{ Setting, Base, Other string }
	}
	if err := json.Unmarshal([]byte(out), &cs); err != nil || len(cs) != 1 {
		t.Fatalf("compare JSON: %v\n%s", err, out)
	}
	found := false
	for _, m := range cs[0].Metrics {
		if m.Metric == "mean_e2e_latency_ms" {
			found = m.Change == m.Other-m.Base && m.Base > 0
		}
	}
	if !found || len(cs[0].Paired) != 3 || !slices.ContainsFunc(cs[0].Changes, func(c struct{ Setting, Base, Other string }) bool {
		return c.Setting == "search_space.prefill_load_scale" && c.Base == "1" && c.Other == "4"
	}) {
		t.Errorf("compare JSON lacks the e2e change, the paired intervals or the changed setting:\n%s", out)
	}
	out, _, code = execute("compare", a, b, "--format", "csv")
	recs, err = csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(recs) != len(cs[0].Metrics)+1 || recs[0][2] != "metric" {
		t.Errorf("compare CSV: %d rows for %d metrics, %v\n%s", len(recs), len(cs[0].Metrics), err, out)
	}

	out, stderr, code = execute("curve", "--requests", "100", "--concurrency", "4,16", "--format", "csv")
	if code != 0 {
		t.Fatal(stderr)
	}
	recs, err = csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 5 || recs[0][len(recs[0])-1] != "Pareto" || !slices.Contains([]string{"true", "false"}, recs[1][len(recs[1])-1]) {
		t.Errorf("curve CSV: %v\n%s", err, out)
	}
	out, _, code = execute("curve", "--requests", "100", "--concurrency", "4", "--format", "json")
	var cj struct{ Points []any }
	if code != 0 || json.Unmarshal([]byte(out), &cj) != nil || len(cj.Points) != 2 {
		t.Errorf("curve JSON:\n%s", out)
	}
	if _, stderr, code := execute("compare", a, b, "--format", "xml"); code == 0 || !strings.Contains(stderr, "want table, json or csv") {
		t.Errorf("compare --format xml: %d %s", code, stderr)
	}
}

// Shell completion knows --set's keys (the config package's table) and, after "key=", the
// values of a key with a fixed set, on every command that takes --set.
func TestCompleteSet(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"replay", "--set", "router_m"}, []string{"router_mode="}},
		{[]string{"sweep", "--set", "goal.sla."}, []string{"goal.sla.e2e_latency_ms=", "goal.sla.percentile=", "goal.sla.tpot_ms=", "goal.sla.ttft_ms="}},
		{[]string{"--set", "router_mode=r"}, []string{"router_mode=round_robin", "router_mode=random"}},
		{[]string{"curve", "--set", "kv_cache_dtype="}, []string{"kv_cache_dtype=fp8", "kv_cache_dtype=bf16", "kv_cache_dtype=auto"}},
		{[]string{"replay", "--set", "prefill_load_scale="}, nil},
	} {
		out, stderr, code := execute(append([]string{"__complete"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: %s", c.args, stderr)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l != "" && !strings.HasPrefix(l, ":") {
				got = append(got, l)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("complete %v = %q, want %q", c.args, got, c.want)
		}
	}
}

// In Chromium, as a reader sees report.html: a heatmap has its colour bar beside it, pale
// at the bottom of the scale and dark at the top, and a chart's legend sits beside the axes,
// not over the data.
func TestReportChartsInChromium(t *testing.T) {
	g := report.Grid{Z: [][]float64{{0, 500, 1000}, {250, 750, 1400}}, DX: 1, Rows: []string{"w0", "w1"}}
	hp, bar, err := report.Heatmap("load", "simulated time (s)", g, 0, 1400, 0, "active KV blocks")
	if err != nil {
		t.Fatal(err)
	}
	lp, err := report.Lines("", "x", "y", []report.Series{{Name: "a long series name", X: []float64{0, 1, 2}, Y: []float64{0.9, 0.9, 0.9}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	lp.Y.Min, lp.Y.Max = 0, 1
	shot := func(name string, f report.Figure) (image.Image, image.Rectangle) {
		pg := &report.Page{}
		pg.Figure(f)
		data, err := pg.HTML()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		page := filepath.Join(dir, name+".html")
		if err := os.WriteFile(page, data, 0o644); err != nil {
			t.Fatal(err)
		}
		img := shoot(t, page, filepath.Join(dir, name+".png"))
		return img, chartcheck.InkBox(img)
	}

	img, box := shot("heatmap", report.Figure{Name: "load", Plot: hp, Bar: bar})
	if !chartcheck.ColourBar(img, box) {
		t.Error("Chromium shows no colour bar (dark above, pale colour below) right of the heatmap")
	}
	img, box = shot("legend", report.Figure{Name: "lines", Plot: lp})
	if err := chartcheck.LegendOffLine(img, box, chartcheck.Right); err != nil {
		t.Errorf("in Chromium: %v", err)
	}
}

// model list as data: CSV has a row per layout the table lists and JSON a group per line.
func TestModelListFormats(t *testing.T) {
	table, _, code := execute("model", "list")
	js, _, code2 := execute("model", "list", "--format", "json")
	csvOut, _, code3 := execute("model", "list", "--format", "csv")
	if code+code2+code3 != 0 {
		t.Fatal("model list failed")
	}
	lines := strings.Split(strings.TrimSpace(strings.Split(table, "\n\n")[0]), "\n")[1:]
	layouts := 0
	for _, l := range lines {
		layouts += len(strings.Fields(l[34+1+9+1+12+1+19+1+18+1:])) // past the fixed-width columns (backend 18: sglang-0.5.6.post2)
	}
	var groups []struct {
		Model   string `json:"model_name"`
		Layouts []struct{ TP int }
	}
	if err := json.Unmarshal([]byte(js), &groups); err != nil || len(groups) != len(lines) {
		t.Fatalf("JSON: %d groups for %d lines (%v)", len(groups), len(lines), err)
	}
	recs, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil || len(recs)-1 != layouts || layouts < 20 {
		t.Errorf("CSV: %d rows for the table's %d layouts (%v)", len(recs)-1, layouts, err)
	}
}
