package themes

import "testing"

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestCycleHonoursNoColor(t *testing.T) {
	all := Cycle(env(nil))
	if len(all) != 4 || all[0].Name != "dark" || all[1].Name != "light" || all[2].Name != "high-contrast" {
		t.Fatalf("cycle = %v", all)
	}
	nc := Cycle(env(map[string]string{"NO_COLOR": "1"}))
	if len(nc) != 1 || nc[0].Name != "no-color" || nc[0].HasColor() {
		t.Fatalf("NO_COLOR cycle = %+v", nc)
	}
	// An empty NO_COLOR does not count (no-color.org: "present and not an empty string").
	if len(Cycle(env(map[string]string{"NO_COLOR": ""}))) != 4 {
		t.Fatal("empty NO_COLOR disabled colours")
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

func TestByName(t *testing.T) {
	p, err := ByName("light", env(nil))
	if err != nil || p.Name != "light" {
		t.Fatalf("ByName(light) = %v, %v", p.Name, err)
	}
	if _, err := ByName("solarized", env(nil)); err == nil {
		t.Fatal("unknown theme accepted")
	}
	if _, err := ByName("dark", env(map[string]string{"NO_COLOR": "x"})); err == nil {
		t.Fatal("dark offered under NO_COLOR")
	}
}
