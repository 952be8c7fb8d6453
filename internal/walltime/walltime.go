// Package walltime removes the one kind of field that may differ between two runs of the same
// experiment — "wall_time_ms", how long the run took on this machine — so tests can compare
// replay JSON, ledgers and summaries byte for byte.
package walltime

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Strip re-encodes a JSON document, or every line of a JSONL one, without any "wall_time_ms"
// key at any depth. Lines come back compact and newline-separated.
func Strip(data []byte) ([]byte, error) {
	docs := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if !json.Valid(docs[0]) {
		docs = [][]byte{data} // one document over several lines
	}
	out := make([][]byte, 0, len(docs))
	for i, d := range docs {
		var v any
		if err := json.Unmarshal(d, &v); err != nil {
			return nil, fmt.Errorf("walltime: document %d: %w", i+1, err)
		}
		b, err := json.Marshal(drop(v))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return bytes.Join(out, []byte("\n")), nil
}

func drop(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "wall_time_ms")
		for k := range x {
			x[k] = drop(x[k])
		}
	case []any:
		for i := range x {
			x[i] = drop(x[i])
		}
	}
	return v
}
