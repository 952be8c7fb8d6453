// Package themes holds the explorer's colour palettes: dark, light, high-contrast and the
// colourless palette used when NO_COLOR is set. A palette is plain data; the tui builds its
// styles from one, so switching theme is switching a value.
package themes

import (
	"fmt"
	"image/color"
	"strings"
)

// Palette names the colours of every role the explorer draws. A nil colour means "leave the
// terminal's own colour": the no-colour palette is all nil.
type Palette struct {
	Name string

	Text     color.Color // body text
	Muted    color.Color // labels, axes, secondary figures
	Accent   color.Color // titles, the selected knob, the focused pane's title bar
	OnAccent color.Color // text drawn on an Accent background
	Better   color.Color // a change in the good direction
	Worse    color.Color // a change in the bad direction
	Warn     color.Color // running, cancelled, errors

	// Heat is the heatmap ramp from cold to hot; the heatmaps also shade with glyphs, so a
	// palette without colours still reads.
	Heat []color.Color
}

// HasColor reports whether the palette sets any colour at all.
func (p Palette) HasColor() bool { return p.Text != nil || p.Accent != nil || len(p.Heat) > 0 }

func hex(s string) color.Color {
	var r, g, b uint8
	if _, err := fmt.Sscanf(strings.TrimPrefix(s, "#"), "%02x%02x%02x", &r, &g, &b); err != nil {
		panic("themes: bad colour literal " + s) // a defect in this file, caught by its tests
	}
	return color.RGBA{R: r, G: g, B: b, A: 0xff}
}

func ramp(stops ...string) []color.Color {
	out := make([]color.Color, len(stops))
	for i, s := range stops {
		out[i] = hex(s)
	}
	return out
}

// Dark is the default palette for dark terminal backgrounds.
func Dark() Palette {
	return Palette{
		Name: "dark", Text: hex("#d0d0d0"), Muted: hex("#808080"), Accent: hex("#7aa2f7"),
		OnAccent: hex("#1a1b26"), Better: hex("#9ece6a"), Worse: hex("#f7768e"), Warn: hex("#e0af68"),
		Heat: ramp("#1f2a44", "#23557a", "#1f8a8a", "#5fb85f", "#d8c23c", "#f08a24", "#e8413c"),
	}
}

// Light suits light terminal backgrounds.
func Light() Palette {
	return Palette{
		Name: "light", Text: hex("#2e2e2e"), Muted: hex("#6b6b6b"), Accent: hex("#1f5fbf"),
		OnAccent: hex("#ffffff"), Better: hex("#1d7a1d"), Worse: hex("#b3261e"), Warn: hex("#9a6700"),
		Heat: ramp("#dbe7f3", "#a8cbe6", "#6fb0c9", "#6cbf6c", "#e3c440", "#ec8f2e", "#c9302c"),
	}
}

// HighContrast uses only saturated, widely distinguishable colours on black.
func HighContrast() Palette {
	return Palette{
		Name: "high-contrast", Text: hex("#ffffff"), Muted: hex("#c0c0c0"), Accent: hex("#ffff00"),
		OnAccent: hex("#000000"), Better: hex("#00ff00"), Worse: hex("#ff3030"), Warn: hex("#ff9900"),
		Heat: ramp("#0000ff", "#00ffff", "#00ff00", "#ffff00", "#ff0000"),
	}
}

// NoColor draws no colour at all (the NO_COLOR convention); emphasis is left to glyphs. Its
// name is spelt like the project's prose; ROUTERLAB_THEME also accepts the NO_COLOR spelling.
func NoColor() Palette { return Palette{Name: "no-colour"} }

// Cycle lists the palettes `t` steps through, the one to start with first. With NO_COLOR set
// (non-empty) the user asked for no colour, so only the colourless palette is offered;
// otherwise ROUTERLAB_THEME, when set, names the starting palette.
func Cycle(getenv func(string) string) ([]Palette, error) {
	if getenv("NO_COLOR") != "" {
		return []Palette{NoColor()}, nil
	}
	all := []Palette{Dark(), Light(), HighContrast(), NoColor()}
	name := getenv("ROUTERLAB_THEME")
	if name == "" {
		return all, nil
	}
	if name == "no-color" {
		name = NoColor().Name
	}
	var names []string
	for i, p := range all {
		if p.Name == name {
			return append(all[i:], all[:i]...), nil
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("ROUTERLAB_THEME: unknown theme %q (want one of %s)", getenv("ROUTERLAB_THEME"), strings.Join(names, ", "))
}
