package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// breakAtFlags lays a shell command out in lines of at most width cells, breaking only
// before a flag (a word starting with "--") with a " \" continuation, so that no flag is cut
// from its value; a flag and value wider than the line get a line of their own. Words are
// split at spaces outside single quotes (the quoting the cli's commands use).
func breakAtFlags(cmd string, width int) string {
	var groups []string
	for _, w := range shellFields(cmd) {
		if len(groups) == 0 || strings.HasPrefix(w, "--") {
			groups = append(groups, w)
			continue
		}
		groups[len(groups)-1] += " " + w
	}
	var lines []string
	line := ""
	for _, g := range groups {
		switch {
		case line == "":
			line = g
		case ansi.StringWidth(line)+1+ansi.StringWidth(g)+2 <= width: // room for the group and a continuation
			line += " " + g
		default:
			lines = append(lines, line+" \\")
			line = "  " + g
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// shellFields splits s at spaces outside single quotes.
func shellFields(s string) []string {
	var out []string
	start, quoted := -1, false
	for i, c := range s {
		switch {
		case c == '\'':
			quoted = !quoted
			if start < 0 {
				start = i
			}
		case c == ' ' && !quoted:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case start < 0:
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}
