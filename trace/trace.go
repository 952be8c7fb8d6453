// Package trace reads, writes, synthesizes and describes Mooncake-format request traces.
//
// A trace is a list of requests; each carries its prompt as a list of prefix-block ids
// (hash_ids). Two requests share a cached prefix exactly as far as their leading ids agree.
package trace

// DefaultBlockSize is the number of prompt tokens behind one hash id in Mooncake traces.
const DefaultBlockSize = 512

// Request is one line of a Mooncake JSONL trace.
type Request struct {
	TimestampMS  int64   `json:"timestamp"`
	InputLength  int     `json:"input_length"`
	OutputLength int     `json:"output_length"`
	HashIDs      []int64 `json:"hash_ids"`
}

// Trace is a parsed trace: its requests in file order (timestamps non-decreasing).
type Trace struct {
	Name      string // file path or builtin:NAME, used in messages and reports
	BlockSize int    // tokens per hash id
	Requests  []Request
	// Digest identifies the requests' source: "sha256:HEX" of a file's bytes, or the
	// generator and seed of a synthesized trace.
	Digest string
}
