package backend

import (
	"regexp"
	"strconv"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/routerlab/routerlab/themes"
)

// The real explorer on 300 requests of the seed experiment: the first result appears, and
// `m` switches to round robin with a lower prefix reuse — the e2e test's check, in process.
func TestExplorerModeChangeOnTheEngine(t *testing.T) {
	exp, _ := smallExperiment(t, 0)
	m, _, err := NewExplorer(exp, ExplorerOptions{Requests: 300, Palettes: []themes.Palette{themes.NoColor()}})
	if err != nil {
		t.Fatal(err)
	}
	var model tea.Model = m
	model, _ = model.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	drive(t, model, model.Init())
	reuse := regexp.MustCompile(`prefix reuse +([0-9.]+)%`)
	screen := func() string { return ansi.Strip(model.View().Content) }
	first := screen()
	if !regexp.MustCompile(`Metrics · kv_router · 300 requests`).MatchString(first) {
		t.Fatalf("first screen:\n%s", first)
	}
	model, cmd := model.Update(tea.KeyPressMsg{Code: 'm', Text: "m"})
	drive(t, model, cmd)
	second := screen()
	if !regexp.MustCompile(`Metrics · round_robin · 300 requests`).MatchString(second) {
		t.Fatalf("after m:\n%s", second)
	}
	a, b := reuse.FindStringSubmatch(first), reuse.FindStringSubmatch(second)
	if a == nil || b == nil {
		t.Fatalf("no prefix reuse figure:\n%s\n%s", first, second)
	}
	kv, _ := strconv.ParseFloat(a[1], 64)
	rr, _ := strconv.ParseFloat(b[1], 64)
	if kv <= rr {
		t.Fatalf("prefix reuse %v%% → %v%%, want a drop under round robin", kv, rr)
	}
}
