package config

// Scalar values of the experiment file: each reader names the key and the line of a bad value.

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

func scalarValue(s string) Value {
	v := Value{Text: s}
	if x, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(x) && !math.IsInf(x, 0) {
		v.Num, v.IsNum = x, true
	}
	return v
}

// scalars reads a scalar or a list of scalars.
func (f *File) scalars(path string, n ast.Node) ([]Value, error) {
	var nodes []ast.Node
	if seq, ok := n.(*ast.SequenceNode); ok {
		nodes = seq.Values
	} else {
		nodes = []ast.Node{n}
	}
	if len(nodes) == 0 {
		return nil, f.errAt(n, path, "empty list")
	}
	vals := make([]Value, 0, len(nodes))
	seen := map[string]bool{}
	for _, e := range nodes {
		s, err := f.scalarText(path, e)
		if err != nil {
			return nil, err
		}
		v := scalarValue(s)
		if seen[v.Text] {
			return nil, f.errAt(e, path, "value %q listed twice", v.Text)
		}
		seen[v.Text] = true
		vals = append(vals, v)
	}
	return vals, nil
}

func (f *File) scalarText(path string, n ast.Node) (string, error) {
	switch x := n.(type) {
	case *ast.StringNode:
		return x.Value, nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return n.GetToken().Value, nil
	case *ast.NullNode, nil:
		return "", f.errAt(n, path, "missing value")
	case *ast.NanNode, *ast.InfinityNode:
		return "", f.errAt(n, path, "%s is not a finite number", n.GetToken().Value)
	case *ast.MappingNode, *ast.MappingValueNode:
		return "", f.errAt(n, path, "want a single value, got a mapping")
	case *ast.SequenceNode:
		return "", f.errAt(n, path, "want a single value, got a list")
	}
	return "", f.errAt(n, path, "want a single value, got %q", n.String())
}

func (f *File) str(path string, n ast.Node, dst *string) error {
	s, err := f.scalarText(path, n)
	if err != nil {
		return err
	}
	if s == "" {
		return f.errAt(n, path, "empty value")
	}
	*dst = s
	return nil
}

// oneOf reads a string that must be one of values.
func (f *File) oneOf(path string, n ast.Node, dst *string, values []string) error {
	if err := f.str(path, n, dst); err != nil {
		return err
	}
	if !slices.Contains(values, *dst) {
		return f.errAt(n, path, "unsupported value %q (want one of %s)", *dst, strings.Join(values, ", "))
	}
	return nil
}

func (f *File) number(path string, n ast.Node, dst *float64, lo, hi float64) error {
	s, err := f.scalarText(path, n)
	if err != nil {
		return err
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || x < lo || x > hi {
		return f.errAt(n, path, "want a number in [%g, %g], got %q", lo, hi, s)
	}
	*dst = x
	return nil
}

func (f *File) integer(path string, n ast.Node, dst *int, lo, hi int) error {
	s, err := f.scalarText(path, n)
	if err != nil {
		return err
	}
	x, err := strconv.Atoi(s)
	if err != nil || x < lo || x > hi {
		return f.errAt(n, path, "want an integer in [%d, %d], got %q", lo, hi, s)
	}
	*dst = x
	return nil
}

func (f *File) seed(path string, n ast.Node, dst *uint64) error {
	s, err := f.scalarText(path, n)
	if err != nil {
		return err
	}
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return f.errAt(n, path, "want a non-negative integer seed, got %q", s)
	}
	*dst = x
	return nil
}

func (f *File) boolean(path string, n ast.Node, dst *bool) error {
	s, err := f.scalarText(path, n)
	if err != nil {
		return err
	}
	switch s {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return f.errAt(n, path, "want true or false, got %q", s)
	}
	return nil
}
