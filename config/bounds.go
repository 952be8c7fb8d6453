package config

import (
	"bytes"
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// Limits on the shape of YAML read from a file or --set, checked on the raw text before the
// parser sees it: the parser's memory grows with nesting far faster than with size (10,000
// nested '[' took 188 MB, 100,000 took 6 GB), so a 60 KB file could exhaust a machine. An
// experiment file nests 4 levels and holds a few hundred values; these are far beyond that
// and far below harm (TestYAMLBoundsHoldMemory measures them).
const (
	MaxYAMLDepth = 32      // collections inside collections, block and flow together
	MaxYAMLNodes = 100_000 // values, keys and collections
)

// checkYAMLShape refuses text whose nesting or node count exceeds the limits, naming the line
// where the limit is crossed. It is a conservative lexical scan (quoted strings and comments
// skipped; block nesting from indentation and "- " entries, flow nesting from brackets), so
// it may count a little more than the parser would, never less.
func checkYAMLShape(data []byte, name string) error {
	var indents []int // open block levels by column
	flow, nodes, line := 0, 0, 1
	tooDeep := func() error {
		return &Error{File: name, Line: line, Key: "(document)",
			Msg: fmt.Sprintf("nested more than %d levels deep (the limit of an experiment file)", MaxYAMLDepth)}
	}
	count := func() error {
		if nodes++; nodes > MaxYAMLNodes {
			return &Error{File: name, Line: line, Key: "(document)",
				Msg: fmt.Sprintf("more than %d YAML values (the limit of an experiment file)", MaxYAMLNodes)}
		}
		return nil
	}
	blockScalar := -1 // while inside a literal or folded block: the indent of its key's line
	dashes := 0       // "- " entries later in the current line
	lineStart := true
	for i := 0; i < len(data); i++ {
		if lineStart {
			lineStart = false
			col := 0
			for i+col < len(data) && data[i+col] == ' ' {
				col++
			}
			rest := data[i+col:]
			blank := len(rest) == 0 || rest[0] == '\n' || rest[0] == '\r' || rest[0] == '#'
			if blockScalar >= 0 && (blank || col > blockScalar) {
				if k := bytes.IndexByte(rest, '\n'); k >= 0 {
					i += col + k - 1 // the newline is the next byte
				} else {
					i = len(data)
				}
				continue
			}
			blockScalar = -1
			if !blank && flow == 0 {
				for len(indents) > 0 && indents[len(indents)-1] >= col {
					indents = indents[:len(indents)-1]
				}
				indents = append(indents, col)
				// Each "- " opens a level: "- - - x" nests three sequences.
				for i+col < len(data) && data[i+col] == '-' && (i+col+1 == len(data) || data[i+col+1] == ' ') {
					col += 2
					for i+col < len(data) && data[i+col] == ' ' {
						col++
					}
					indents = append(indents, col)
					if len(indents) > MaxYAMLDepth {
						return tooDeep()
					}
					if err := count(); err != nil {
						return err
					}
				}
				if len(indents) > MaxYAMLDepth {
					return tooDeep()
				}
			}
			i += col - 1
			continue
		}
		switch c := data[i]; c {
		case '\n':
			line++
			lineStart = true
			dashes = 0
		case '-':
			// "key: - - x" nests sequences inside a line too.
			if (i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n') && i > 0 && (data[i-1] == ' ' || data[i-1] == '\t') {
				if dashes++; len(indents)+flow+dashes > MaxYAMLDepth {
					return tooDeep()
				}
				if err := count(); err != nil {
					return err
				}
			}
		case '#':
			if i == 0 || data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == '\n' {
				if k := bytes.IndexByte(data[i:], '\n'); k >= 0 {
					i += k - 1
				} else {
					i = len(data)
				}
			}
		case '"', '\'':
			// A quoted scalar, which may run over lines.
			k := i + 1
			for ; k < len(data); k++ {
				if data[k] == '\n' {
					line++
				} else if c == '"' && data[k] == '\\' {
					k++
				} else if data[k] == c {
					if c == '\'' && k+1 < len(data) && data[k+1] == '\'' {
						k++
						continue
					}
					break
				}
			}
			i = k
			if err := count(); err != nil {
				return err
			}
		case '[', '{':
			flow++
			if len(indents)+flow+dashes > MaxYAMLDepth {
				return tooDeep()
			}
			if err := count(); err != nil {
				return err
			}
		case ']', '}':
			flow = max(0, flow-1)
		case ',':
			if err := count(); err != nil {
				return err
			}
		case ':':
			if i+1 < len(data) && data[i+1] != ' ' && data[i+1] != '\t' && data[i+1] != '\n' && data[i+1] != '\r' {
				break // part of a plain scalar (a URL, a time)
			}
			if err := count(); err != nil {
				return err
			}
			k := i + 1
			for k < len(data) && (data[k] == ' ' || data[k] == '\t') {
				k++
			}
			if flow == 0 && k < len(data) && (data[k] == '|' || data[k] == '>') && len(indents) > 0 {
				blockScalar = indents[len(indents)-1]
			}
		}
	}
	return nil
}

// noAnchorsOrTags refuses YAML anchors, aliases and tags anywhere in the document: an
// experiment file is plain values, and an alias could multiply what a small text expands to.
func (f *File) noAnchorsOrTags(root ast.Node) error {
	var err error
	ast.Walk(visitFunc(func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *ast.AliasNode:
			err = f.errAt(n, "(document)", "YAML aliases (*%s) are not supported in an experiment file: write the value out", x.Value)
		case *ast.AnchorNode:
			err = f.errAt(n, "(document)", "YAML anchors (&%s) are not supported in an experiment file: write the value out", x.Name)
		case *ast.TagNode:
			err = f.errAt(n, "(document)", "YAML tags (%s) are not supported in an experiment file: write the plain value", x.Start.Value)
		}
		return err == nil
	}), root)
	return err
}

type visitFunc func(ast.Node) bool

func (v visitFunc) Visit(n ast.Node) ast.Visitor {
	if v(n) {
		return v
	}
	return nil
}
