// Package mutate makes seeded mutants of Go source for the build-identity mutation test
// (docs/trust.md, "Build identity"): a numeric literal nudged, a comparison flipped or an
// if-branch dropped, one site at a time. A mutant names its site by file, kind and the
// site's index among that file's sites of the kind (walk order), so a mutant list is stable
// text that can be applied again.
package mutate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Kind is how a mutant changes its site.
type Kind string

const (
	Nudge Kind = "nudge" // a numeric literal: integers n ≥ 4 halved, smaller ones +1; floats ×1.1 (0 → 0.1)
	Flip  Kind = "flip"  // a comparison: < ↔ <=, > ↔ >=, == ↔ !=
	Drop  Kind = "drop"  // an if statement's body emptied (its else kept)
)

// Mutant is one change at one site of one file.
type Mutant struct {
	File  string // slash path relative to the module root
	Kind  Kind
	Index int    // the site's place among File's sites of Kind, in walk order
	Line  int    // where the site is, for people
	From  string // the site's text before and after, for people
	To    string
}

func (m Mutant) String() string {
	return fmt.Sprintf("%s:%d %s %s → %s", m.File, m.Line, m.Kind, m.From, m.To)
}

// site is a mutable place found by walking a file, and how to mutate it.
type site struct {
	kind     Kind
	pos      token.Pos
	from, to string
	apply    func()
}

// sites walks f and lists its mutable places in walk order: numeric literals outside array
// types (whose lengths must stay constant), comparisons and if statements. Error handling
// is left alone — an if whose condition tests err, with everything in it, and comparisons
// with err — since it decides whether there is a result, not what it is.
func sites(f *ast.File) []site {
	var out []site
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ArrayType:
			return false // array lengths must stay constant expressions of the right value
		case *ast.BasicLit:
			if to, ok := nudge(n); ok {
				from := n.Value
				out = append(out, site{Nudge, n.Pos(), from, to, func() { n.Value = to }})
			}
		case *ast.BinaryExpr:
			if to, ok := flips[n.Op]; ok && !mentionsErr(n) {
				from := n.Op
				out = append(out, site{Flip, n.OpPos, from.String(), to.String(), func() { n.Op = to }})
			}
		case *ast.IfStmt:
			if mentionsErr(n.Cond) {
				return false
			}
			if len(n.Body.List) > 0 {
				out = append(out, site{Drop, n.Pos(), "if … {" + strconv.Itoa(len(n.Body.List)) + " statements}", "if … {}",
					func() { n.Body.List = nil }})
			}
		}
		return true
	})
	return out
}

var flips = map[token.Token]token.Token{
	token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
}

// nudge is a numeric literal's mutated text.
func nudge(l *ast.BasicLit) (string, bool) {
	switch l.Kind {
	case token.INT:
		n, err := strconv.ParseInt(strings.ReplaceAll(l.Value, "_", ""), 0, 64)
		if err != nil {
			return "", false
		}
		if n >= 4 {
			return strconv.FormatInt(n/2, 10), true
		}
		return strconv.FormatInt(n+1, 10), true
	case token.FLOAT:
		x, err := strconv.ParseFloat(strings.ReplaceAll(l.Value, "_", ""), 64)
		if err != nil {
			return "", false
		}
		if x == 0 {
			return "0.1", true
		}
		return strconv.FormatFloat(x*1.1, 'g', -1, 64), true
	}
	return "", false
}

// mentionsErr reports whether an expression refers to a variable named err.
func mentionsErr(e ast.Node) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "err" {
			found = true
		}
		return !found
	})
	return found
}

// Sites lists every mutant of the named files (slash paths under root).
func Sites(root string, files []string) ([]Mutant, error) {
	var out []Mutant
	for _, name := range files {
		fset, f, err := parse(root, name)
		if err != nil {
			return nil, err
		}
		count := map[Kind]int{}
		for _, s := range sites(f) {
			out = append(out, Mutant{File: name, Kind: s.kind, Index: count[s.kind], Line: fset.Position(s.pos).Line, From: s.from, To: s.to})
			count[s.kind]++
		}
	}
	return out, nil
}

// Sample picks n of ms at random under seed, in a stable order.
func Sample(ms []Mutant, n int, seed uint64) []Mutant {
	ms = append([]Mutant(nil), ms...)
	r := rand.New(rand.NewPCG(seed, 0x6d757461))
	r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	return ms[:min(n, len(ms))]
}

// Apply writes m into its file under root and returns a function that restores the file.
func Apply(root string, m Mutant) (restore func() error, err error) {
	path := filepath.Join(root, filepath.FromSlash(m.File))
	orig, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset, f, err := parse(root, m.File)
	if err != nil {
		return nil, err
	}
	i := 0
	var hit *site
	for _, s := range sites(f) {
		if s.kind == m.Kind {
			if i == m.Index {
				hit = &s
				break
			}
			i++
		}
	}
	if hit == nil || hit.from != m.From {
		return nil, fmt.Errorf("mutate: %s has no %s site %d as listed (%s)", m.File, m.Kind, m.Index, m)
	}
	hit.apply()
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return nil, fmt.Errorf("mutate: %s: %w", m, err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return func() error { return os.WriteFile(path, orig, 0o644) }, nil
}

func parse(root, name string) (*token.FileSet, *ast.File, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(name)), nil, parser.ParseComments)
	return fset, f, err
}
