package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// noteDPLine keeps the line of a parallel_configs entry with attention data parallelism, so
// that a worker the model cannot price in that layout (no table of the rank's tp, a backend
// that forbids it: model/attentiondp.go, model/backend.go) is reported at the entry.
func (f *File) noteDPLine(pc ParallelConfig, m *ast.MappingNode) {
	if pc.AttentionDP <= 1 || m.GetToken() == nil {
		return
	}
	if f.dpLines == nil {
		f.dpLines = map[ParallelConfig]int{}
	}
	f.dpLines[pc] = m.GetToken().Position.Line
}

// shapeError is the error of a worker of parallel_configs entry pc: at the entry's line when
// it has attention data parallelism and came from the file.
func (f *File) shapeError(pc ParallelConfig, err error) error {
	if line := f.dpLines[pc]; line > 0 {
		return &Error{File: f.Name, Line: line, Key: "search_space.parallel_configs", Msg: err.Error()}
	}
	return fmt.Errorf("%s: search_space: %w", f.Name, err)
}
