package backend

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui"
)

// The explorer at 80×24 on the seed walked through every model × GPU the binary embeds
// (issue 31's acceptance): from a state on each GPU, the model knob steps to each model. On
// every screen, nothing is wider than the window and the status line's message is there
// whole (wrapped, not cut); while the new model's run is under way the old figures are
// hidden, never shown under the new name; once it ends, the figures shown are that model's
// on the GPU and layout the Knobs pane names — or, for a model without tables on that GPU,
// the screen says why the GPU moved and shows the figures where it moved to.
func TestExplorerWalksEveryModelAndGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("a hundred small simulations")
	}
	_, s := smallExperiment(t, 40)
	m := tui.New(tui.Options{Title: s.Title(), Space: s.Space(), Initial: s.Initial(), Sim: s,
		Palettes: []themes.Palette{themes.NoColor()}})
	var model tea.Model = m
	const width = 80
	model, _ = model.Update(tea.WindowSizeMsg{Width: width, Height: 24})
	drive(t, model, model.Init())
	screen := func() string { return ansi.Strip(model.View().Content) }
	press := func(k string) tea.Cmd {
		code := map[string]rune{"down": tea.KeyDown, "up": tea.KeyUp, "left": tea.KeyLeft, "right": tea.KeyRight}[k]
		var cmd tea.Cmd
		model, cmd = model.Update(tea.KeyPressMsg{Code: code})
		return cmd
	}
	for range 30 { // the cursor down to model_name (its help line says so)
		if strings.Contains(screen(), "model_name: ") {
			break
		}
		press("down")
	}
	cat := s.catalog
	shown := s.Initial()
	want := map[string]string{} // "model|gpu|layout" → output tok/s, simulated once each
	figure := regexp.MustCompile(`output tok/s +([0-9]+)`)
	check := func(what string, knobs tui.Knobs, note string) {
		t.Helper()
		sc := screen()
		for i, line := range strings.Split(sc, "\n") {
			if w := ansi.StringWidth(line); w > width {
				t.Fatalf("%s: line %d is %d wide:\n%s", what, i, w, sc)
			}
		}
		flat := strings.Join(strings.Fields(sc), " ")
		if note != "" && !strings.Contains(flat, strings.Join(strings.Fields(note), " ")) {
			t.Fatalf("%s: the note %q is not on screen whole:\n%s", what, note, sc)
		}
		d := knobs.Deployment
		for _, v := range []string{shortModel(d.Model), d.GPU, d.Layout} {
			if !strings.Contains(sc, v) {
				t.Fatalf("%s: the Knobs pane does not name %q:\n%s", what, v, sc)
			}
		}
		key := d.Model + "|" + d.GPU + "|" + d.Layout
		if _, ok := want[key]; !ok {
			res, err := s.Simulate(context.Background(), tui.Run{Knobs: knobs}, nil)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			want[key] = fmt.Sprintf("%.0f", res.Metrics.OutputTokS)
		}
		got := figure.FindStringSubmatch(sc)
		if got == nil || got[1] != want[key] {
			t.Fatalf("%s: output tok/s on screen %v, the knobs' own run gives %s:\n%s", what, got, want[key], sc)
		}
	}
	// The explorer fits a model or GPU change from the GPU and layout last chosen by hand.
	asked := s.Initial().Deployment
	// step moves the model (the cursor's row) or GPU knob to value and checks every screen.
	step := func(row tui.Knobs, get func(tui.Knobs) string, list []string, value string, isGPU bool) tui.Knobs {
		t.Helper()
		for get(row) != value {
			dir, k := "right", +1
			if slices.Index(list, value) < slices.Index(list, get(row)) {
				dir, k = "left", -1
			}
			next := list[slices.Index(list, get(row))+k]
			cmd := press(dir)
			row = stepped(row, get, next)
			want := row.Deployment
			if isGPU {
				asked.GPU = want.GPU
			}
			want.GPU, want.Layout = asked.GPU, asked.Layout
			var note string
			row.Deployment, note = cat.Fit(want)
			sc := screen()
			if !strings.Contains(sc, "running "+shortModel(row.Deployment.Model)+" on "+row.Deployment.GPU+"…") &&
				(row.Deployment.Model != shown.Deployment.Model || row.Deployment.GPU != shown.Deployment.GPU) {
				t.Fatalf("moving to %s on %s: the screen does not say it is running it:\n%s", row.Deployment.Model, row.Deployment.GPU, sc)
			}
			if strings.Contains(sc, "output tok/s") && (row.Deployment.Model != shown.Deployment.Model || row.Deployment.GPU != shown.Deployment.GPU) {
				t.Fatalf("%s on %s shows the figures of %s on %s while it runs:\n%s", row.Deployment.Model, row.Deployment.GPU, shown.Deployment.Model, shown.Deployment.GPU, sc)
			}
			drive(t, model, cmd)
			check(fmt.Sprintf("%s on %s", row.Deployment.Model, row.Deployment.GPU), row, note)
			shown = row
		}
		return row
	}
	model_ := func(k tui.Knobs) string { return k.Deployment.Model }
	gpu := func(k tui.Knobs) string { return k.Deployment.GPU }
	models := cat.Models()
	var gpus []string
	for _, mo := range models {
		gpus = append(gpus, cat.GPUs(mo)...)
	}
	slices.Sort(gpus)
	gpus = slices.Compact(gpus)
	k := s.Initial()
	pairs := 0
	for _, g := range gpus {
		for _, mo := range models {
			// Onto g: a model that has it, then the GPU knob (the row below).
			host := models[slices.IndexFunc(models, func(x string) bool { return slices.Contains(cat.GPUs(x), g) })]
			k = step(k, model_, models, host, false)
			press("down")
			k = step(k, gpu, cat.GPUs(host), g, true)
			press("up")
			k = step(k, model_, models, mo, false)
			if slices.Contains(cat.GPUs(mo), g) != (k.Deployment.GPU == g) {
				t.Fatalf("%s from %s: on %s", mo, g, k.Deployment.GPU)
			}
			pairs++
		}
	}
	if pairs != len(models)*len(gpus) || len(models) != 8 || len(gpus) != 4 {
		t.Fatalf("walked %d pairs of %d models × %d GPUs", pairs, len(models), len(gpus))
	}
}

// stepped is row with the knob get reads set to v.
func stepped(row tui.Knobs, get func(tui.Knobs) string, v string) tui.Knobs {
	probe := row
	probe.Deployment.Model = "\x00"
	if get(probe) == "\x00" {
		row.Deployment.Model = v
	} else {
		row.Deployment.GPU = v
	}
	return row
}

func shortModel(id string) string { return id[strings.LastIndex(id, "/")+1:] }
