package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// BuiltinPrefix marks a trace spec that names a synthesized trace instead of a file.
const BuiltinPrefix = "builtin:"

// line is the wire form of one request. Pointers tell a missing field from a zero one.
type line struct {
	Timestamp    *int64   `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      *[]int64 `json:"hash_ids"`
}

// Parse reads a Mooncake JSONL trace, one request per line, validating every line.
// Blank lines are skipped. Errors read "name:line: field: problem".
// The input is streamed once; lines of any length are accepted.
func Parse(r io.Reader, name string, blockSize int) (*Trace, error) {
	if blockSize <= 0 {
		return nil, fmt.Errorf("%s: block size must be positive, got %d", name, blockSize)
	}
	br := bufio.NewReaderSize(r, 1<<20)
	t := &Trace{Name: name, BlockSize: blockSize}
	var buf []byte
	lastTS := int64(0)
	for lineNo := 1; ; lineNo++ {
		raw, err := readLine(br, &buf)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: read: %w", name, lineNo, err)
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			req, perr := parseLine(raw, blockSize)
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, lineNo, perr)
			}
			if len(t.Requests) > 0 && req.TimestampMS < lastTS {
				return nil, fmt.Errorf("%s:%d: timestamp: %d is earlier than the previous request's %d (timestamps must not decrease)",
					name, lineNo, req.TimestampMS, lastTS)
			}
			lastTS = req.TimestampMS
			t.Requests = append(t.Requests, req)
		}
		if err == io.EOF {
			return t, nil
		}
	}
}

// readLine returns the next line without its newline, reusing *buf for lines longer than
// the reader's buffer. It returns io.EOF together with the final (possibly empty) line.
func readLine(br *bufio.Reader, buf *[]byte) ([]byte, error) {
	frag, err := br.ReadSlice('\n')
	if err == nil || err == io.EOF {
		return bytes.TrimSuffix(frag, []byte{'\n'}), err
	}
	if err != bufio.ErrBufferFull {
		return nil, err
	}
	*buf = append((*buf)[:0], frag...)
	for {
		frag, err = br.ReadSlice('\n')
		*buf = append(*buf, frag...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil || err == io.EOF:
			return bytes.TrimSuffix(*buf, []byte{'\n'}), err
		default:
			return nil, err
		}
	}
}

// fieldError is a validation problem attributed to one field of a line.
type fieldError struct{ field, problem string }

func (e *fieldError) Error() string { return e.field + ": " + e.problem }

func parseLine(raw []byte, blockSize int) (Request, error) {
	var l line
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Request{}, jsonProblem(err)
	}
	if dec.More() {
		return Request{}, &fieldError{"json", "unexpected data after the object"}
	}
	switch {
	case l.Timestamp == nil:
		return Request{}, &fieldError{"timestamp", "missing"}
	case l.InputLength == nil:
		return Request{}, &fieldError{"input_length", "missing"}
	case l.OutputLength == nil:
		return Request{}, &fieldError{"output_length", "missing"}
	case l.HashIDs == nil:
		return Request{}, &fieldError{"hash_ids", "missing"}
	}
	req := Request{TimestampMS: *l.Timestamp, InputLength: *l.InputLength, OutputLength: *l.OutputLength, HashIDs: *l.HashIDs}
	if err := validate(&req, blockSize); err != nil {
		return Request{}, err
	}
	return req, nil
}

// validate checks one request's fields against each other and the block size.
func validate(req *Request, blockSize int) error {
	switch {
	case req.TimestampMS < 0:
		return &fieldError{"timestamp", fmt.Sprintf("negative (%d)", req.TimestampMS)}
	case req.InputLength < 1:
		return &fieldError{"input_length", fmt.Sprintf("must be at least 1, got %d", req.InputLength)}
	case req.OutputLength < 1:
		return &fieldError{"output_length", fmt.Sprintf("must be at least 1, got %d", req.OutputLength)}
	}
	if want := (req.InputLength + blockSize - 1) / blockSize; len(req.HashIDs) != want {
		return &fieldError{"hash_ids", fmt.Sprintf("has %d ids, want ceil(input_length %d / block size %d) = %d",
			len(req.HashIDs), req.InputLength, blockSize, want)}
	}
	for i, id := range req.HashIDs {
		if id < 0 {
			return &fieldError{fmt.Sprintf("hash_ids[%d]", i), fmt.Sprintf("negative (%d)", id)}
		}
	}
	return nil
}

// jsonProblem turns an encoding/json error into a field-attributed problem where possible.
func jsonProblem(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return &fieldError{te.Field, fmt.Sprintf("expected %s, got JSON %s", goKind(te.Type.String()), te.Value)}
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return &fieldError{strings.Trim(f, `"`), "unknown field (a Mooncake line has timestamp, input_length, output_length, hash_ids)"}
	}
	if err == io.EOF {
		return &fieldError{"json", "empty"}
	}
	return &fieldError{"json", "malformed: " + strings.TrimPrefix(msg, "json: ")}
}

func goKind(t string) string {
	switch t {
	case "int", "int64":
		return "an integer"
	case "[]int64":
		return "a list of integers"
	}
	return t
}

// Load reads a trace from a file path, or synthesizes a built-in one for "builtin:NAME".
// blockSize <= 0 means DefaultBlockSize.
func Load(spec string, blockSize int) (*Trace, error) {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	if profile, ok := strings.CutPrefix(spec, BuiltinPrefix); ok {
		if blockSize != DefaultBlockSize {
			return nil, fmt.Errorf("%s: built-in traces use %d-token blocks, not %d", spec, DefaultBlockSize, blockSize)
		}
		return Builtin(profile)
	}
	f, err := os.Open(spec)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, spec, blockSize)
}

// First returns the first n requests (contiguous, as the reference replay tools take
// subsets). n <= 0 or n >= len returns all of them. The requests are shared, not copied.
func (t *Trace) First(n int) *Trace {
	if n <= 0 || n >= len(t.Requests) {
		n = len(t.Requests)
	}
	return &Trace{Name: t.Name, BlockSize: t.BlockSize, Requests: t.Requests[:n:n]}
}
