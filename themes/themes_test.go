package themes

import "testing"

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func cycle(t *testing.T, vars map[string]string) []Palette {
	t.Helper()
	ps, err := Cycle(env(vars))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestCycleHonoursNoColor(t *testing.T) {
	all := cycle(t, nil)
	if len(all) != 4 || all[0].Name != "dark" || all[1].Name != "light" || all[2].Name != "high-contrast" {
		t.Fatalf("cycle = %v", all)
	}
	nc := cycle(t, map[string]string{"NO_COLOR": "1", "ROUTERLAB_THEME": "light"})
	if len(nc) != 1 || nc[0].Name != "no-colour" || nc[0].HasColor() {
		t.Fatalf("NO_COLOR cycle = %+v", nc)
	}
	// An empty NO_COLOR does not count (no-color.org: "present and not an empty string").
	if len(cycle(t, map[string]string{"NO_COLOR": ""})) != 4 {
		t.Fatal("empty NO_COLOR disabled colours")
	}
}

func TestCycleStartsAtRouterlabTheme(t *testing.T) {
	ps := cycle(t, map[string]string{"ROUTERLAB_THEME": "high-contrast"})
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if len(names) != 4 || names[0] != "high-contrast" || names[1] != "no-colour" || names[2] != "dark" || names[3] != "light" {
		t.Fatalf("cycle = %v", names)
	}
	for _, spelling := range []string{"no-colour", "no-color"} {
		if ps := cycle(t, map[string]string{"ROUTERLAB_THEME": spelling}); ps[0].Name != "no-colour" {
			t.Errorf("ROUTERLAB_THEME=%s starts at %s", spelling, ps[0].Name)
		}
	}
	if _, err := Cycle(env(map[string]string{"ROUTERLAB_THEME": "solarized"})); err == nil {
		t.Fatal("unknown theme accepted")
	}
}

func TestPalettesAreComplete(t *testing.T) {
	for _, p := range []Palette{Dark(), Light(), HighContrast()} {
		if !p.HasColor() || p.Text == nil || p.Muted == nil || p.Accent == nil || p.OnAccent == nil ||
			p.Better == nil || p.Worse == nil || p.Warn == nil || len(p.Heat) < 4 {
			t.Errorf("%s palette misses a role: %+v", p.Name, p)
		}
	}
}
