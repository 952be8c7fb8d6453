// Package shellwords splits a command line as a POSIX shell reads the commands routerlab
// prints and documents: bare words, '…' quoting (with '\” for a quote inside), a
// backslash escaping the next character, and a backslash before a newline continuing the
// line. For tests that run the commands they read.
package shellwords

import (
	"fmt"
	"strings"
)

// Split returns the words of s; an unterminated quote is an error.
func Split(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, in = true, true
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n': // a line continuation: nothing
			i++
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == ' ' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}
