// Package trace reads, writes, synthesizes and describes Mooncake-format request traces.
//
// A trace is a list of requests; each carries its prompt as a list of prefix-block ids
// (hash_ids). Two requests share a cached prefix exactly as far as their leading ids agree.
package trace

import "strconv"

// DefaultBlockSize is the number of prompt tokens behind one hash id in Mooncake traces.
const DefaultBlockSize = 512

// Request is one line of a Mooncake JSONL trace.
type Request struct {
	TimestampMS  int64   `json:"timestamp"`
	InputLength  int     `json:"input_length"`
	OutputLength int     `json:"output_length"`
	HashIDs      []int64 `json:"hash_ids"`
	// IDOffset is added to every hash id: copies of a trace (Repeat) share their hash id
	// arrays and differ only by it. Read ids with ID.
	IDOffset int64 `json:"-"`
}

// ID is the request's j-th hash id.
func (r *Request) ID(j int) int64 { return r.HashIDs[j] + r.IDOffset }

// Trace is a parsed trace: its requests in file order (timestamps non-decreasing).
type Trace struct {
	Name      string // file path or builtin:NAME, used in messages and reports
	BlockSize int    // tokens per hash id
	Requests  []Request
	// Digest identifies the requests' source: "sha256:HEX" of a file's bytes, or the
	// generator and seed of a synthesized trace.
	Digest string
	// Lines are the requests' lines in the file, for messages (nil for a synthesized trace,
	// whose n-th request is line n of the file `trace synth` writes).
	Lines []int
	// Sessions is the session and dependency structure of a trace read in a session format
	// (nil for independent rows).
	Sessions *Sessions
}

// Where names request i for messages: "file:line".
func (t *Trace) Where(i int) string {
	line := i + 1
	if i < len(t.Lines) {
		line = t.Lines[i]
	}
	return t.Name + ":" + strconv.Itoa(line)
}
