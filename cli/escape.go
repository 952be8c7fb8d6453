package cli

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// terminalSafe escapes what a terminal would act on rather than show — C0 and C1 control
// characters other than newline and tab, DEL, and bytes that are not UTF-8 — as Go escapes
// (\x1b), so a model name, path or value a user typed (or a file holds) is printed, never
// obeyed: an escape sequence in an error could clear the screen or retitle the window.
func terminalSafe(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case unicode.IsControl(r) && r != '\n' && r != '\t':
			q := strconv.QuoteRune(r) // '\x1b', '\u0085'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
