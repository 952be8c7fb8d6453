package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/internal/chartcheck"
)

// vary replays the planner experiment at two start-up times: one point per value in order,
// the x axis the values, vary.html with the five charts (drawn in Chromium); a value that is not a number needs
// --x, one number per value.
func TestVary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	_, stderr, code := execute("vary", "startup_time", "0", "60", "--config", "../examples/planner-sla.yaml", "--requests", "300", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got varyJSON
	data, err := os.ReadFile(filepath.Join(dir, "vary.json"))
	if err != nil || json.Unmarshal(data, &got) != nil {
		t.Fatalf("vary.json: %v", err)
	}
	if len(got.Points) != 2 || got.Points[0].X != 0 || got.Points[1].X != 60 || got.Points[1].Value != "60" ||
		got.Points[0].Summary.RequestsCompleted != 300 || got.Points[0].Summary.Fleet == nil {
		t.Fatalf("points %+v", got.Points)
	}
	html, err := os.ReadFile(filepath.Join(dir, "vary.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p99 TTFT (ms) against startup_time", "scaling events against startup_time", "GPU-hours against startup_time"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("vary.html lacks %q", want)
		}
	}
	if !testing.Short() { // in Chromium, as a reader sees it: charts, and nothing fetched
		img := shoot(t, filepath.Join(dir, "vary.html"), filepath.Join(dir, "vary.png"))
		if box := chartcheck.InkBox(img); box.Dx() < 400 || box.Dy() < 2000 { // five charts under the table
			t.Errorf("Chromium draws vary.html in %v: too small for its table and five charts", box)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"vary", "planner_scaling_policy", "disabled", "load_180_5"}, `value "disabled" of planner_scaling_policy is not a number: give --x`},
		{[]string{"vary", "startup_time", "0", "60", "--x", "1"}, "--x: 1 numbers for 2 values"},
	} {
		if _, stderr, code := execute(c.args...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}
