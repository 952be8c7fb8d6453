package trace

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
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

// MaxLineBytes bounds one line of a trace (64 MiB, over three million hash ids), so that a
// file without newlines, such as /dev/zero, ends in an error instead of exhausting memory.
const MaxLineBytes = 64 << 20

// readBuffer is the trace reader's buffer: longer lines are gathered piece by piece.
const readBuffer = 1 << 20

// Parse reads a Mooncake JSONL trace, one request per line, validating every line.
// Blank lines and a leading UTF-8 byte-order mark are skipped; a trace without requests is an
// error. Errors read "name:line: field: problem". The input is streamed once; lines may be up
// to MaxLineBytes long.
//
// A first row with session or dependency fields is read in its format (see ParseFormat).
func Parse(r io.Reader, name string, blockSize int) (*Trace, error) {
	return ParseFormat(r, name, blockSize, FormatDetect)
}

// parseMooncake reads plain Mooncake rows from br, which tees into sum.
func parseMooncake(br *bufio.Reader, sum hash.Hash, name string, blockSize int) (*Trace, error) {
	t := &Trace{Name: name, BlockSize: blockSize}
	var buf []byte
	lastTS, ids := int64(0), 0
	for lineNo := 1; ; lineNo++ {
		raw, err := readLine(br, &buf)
		if err == errLineTooLong || err == errNotObject {
			return nil, fmt.Errorf("%s:%d: %w (is this a Mooncake JSONL trace?)", name, lineNo, err)
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: read: %w", name, lineNo, err)
		}
		if lineNo == 1 {
			raw = bytes.TrimPrefix(raw, utf8BOM)
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			req, perr := parseLine(raw, blockSize)
			if perr != nil && opensSession(raw) {
				t, err := continueAsSessions(br, t, ids, lineNo, raw)
				if err != nil {
					return nil, err
				}
				t.Digest = "sha256:" + hex.EncodeToString(sum.Sum(nil))
				return t, nil
			}
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, lineNo, perr)
			}
			if len(t.Requests) > 0 && req.TimestampMS < lastTS {
				return nil, fmt.Errorf("%s:%d: timestamp: %d is earlier than the previous request's %d (timestamps must not decrease)",
					name, lineNo, req.TimestampMS, lastTS)
			}
			lastTS = req.TimestampMS
			if ids += len(req.HashIDs); len(t.Requests) == MaxRequests || ids > MaxHashIDs {
				return nil, fmt.Errorf("%s:%d: the trace exceeds the memory budget of %d requests and %d hash ids (cut it with trace subset)",
					name, lineNo, MaxRequests, MaxHashIDs)
			}
			t.Requests = append(t.Requests, req)
			t.Lines = append(t.Lines, lineNo)
		}
		if err == io.EOF {
			if len(t.Requests) == 0 {
				return nil, fmt.Errorf("%s: no requests (the trace is empty)", name)
			}
			t.Digest = "sha256:" + hex.EncodeToString(sum.Sum(nil))
			return t, nil
		}
	}
}

// utf8BOM is the byte-order mark some editors put at the start of a UTF-8 file.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

var (
	errLineTooLong = fmt.Errorf("line longer than the %d MiB limit", MaxLineBytes>>20)
	errNotObject   = fmt.Errorf("line does not open a JSON object and runs past %d MiB: not read further (a row may be up to the %d MiB limit)", readBuffer>>20, MaxLineBytes>>20)
)

// readLine returns the next line without its newline, reusing *buf for lines longer than
// the reader's buffer. It returns io.EOF together with the final (possibly empty) line,
// errLineTooLong for a line over MaxLineBytes, and errNotObject for a line longer than the
// buffer whose first byte (past blanks and a byte-order mark) is not '{': no row of any
// trace format, and so refused before the rest of it is read (/dev/zero was read to the
// limit, 64 MiB, taking seconds on a loaded machine).
func readLine(br *bufio.Reader, buf *[]byte) ([]byte, error) {
	frag, err := br.ReadSlice('\n')
	if err == nil || err == io.EOF {
		return bytes.TrimSuffix(frag, []byte{'\n'}), err
	}
	if err != bufio.ErrBufferFull {
		return nil, err
	}
	if start := bytes.TrimLeft(bytes.TrimPrefix(frag, utf8BOM), " \t\r"); len(start) > 0 && start[0] != '{' {
		return nil, errNotObject
	}
	*buf = append((*buf)[:0], frag...)
	for {
		if len(*buf) > MaxLineBytes {
			return nil, errLineTooLong
		}
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
	req, ok := scanLine(raw)
	if !ok {
		var err error
		if req, err = decodeLine(raw); err != nil {
			return Request{}, err
		}
	}
	if err := validate(&req, blockSize); err != nil {
		return Request{}, err
	}
	return req, nil
}

// decodeLine decodes one line with encoding/json: the general path, which also words
// the errors.
func decodeLine(raw []byte) (Request, error) {
	var l line
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Request{}, jsonProblem(err, mooncakeFields)
	}
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0 {
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
	return Request{TimestampMS: *l.Timestamp, InputLength: *l.InputLength, OutputLength: *l.OutputLength, HashIDs: *l.HashIDs}, nil
}

// scanLine is the fast path for well-formed lines: an object with exactly the four fields,
// in any order, integers without fraction or exponent. Anything else (including every
// malformed line) returns false and goes to decodeLine.
func scanLine(b []byte) (Request, bool) {
	var req Request
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return req, false
	}
	var seen [4]bool
	for {
		i = skipSpace(b, i+1)
		if i >= len(b) || b[i] != '"' {
			return req, false
		}
		end := bytes.IndexByte(b[i+1:], '"')
		if end < 0 {
			return req, false
		}
		key := b[i+1 : i+1+end]
		i = skipSpace(b, i+end+2)
		if i >= len(b) || b[i] != ':' {
			return req, false
		}
		i = skipSpace(b, i+1)
		var k int
		var v int64
		var ok bool
		switch string(key) {
		case "timestamp":
			k = 0
			v, i, ok = scanInt(b, i)
			req.TimestampMS = v
		case "input_length":
			k = 1
			v, i, ok = scanInt(b, i)
			req.InputLength = int(v)
		case "output_length":
			k = 2
			v, i, ok = scanInt(b, i)
			req.OutputLength = int(v)
		case "hash_ids":
			k = 3
			req.HashIDs, i, ok = scanInts(b, i)
		}
		if !ok || seen[k] {
			return req, false
		}
		seen[k] = true
		i = skipSpace(b, i)
		if i >= len(b) {
			return req, false
		}
		if b[i] == '}' {
			break
		}
		if b[i] != ',' {
			return req, false
		}
	}
	if skipSpace(b, i+1) != len(b) || !seen[0] || !seen[1] || !seen[2] || !seen[3] {
		return req, false
	}
	return req, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanInt reads a JSON integer of at most 18 digits (so it cannot overflow) that ends
// where a number must end.
func scanInt(b []byte, i int) (int64, int, bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	var v int64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + int64(b[i]-'0')
		i++
	}
	n := i - start
	if n == 0 || n > 18 || (n > 1 && b[start] == '0') {
		return 0, i, false
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, i, false
	}
	if neg {
		v = -v
	}
	return v, i, true
}

func scanInts(b []byte, i int) ([]int64, int, bool) {
	if i >= len(b) || b[i] != '[' {
		return nil, i, false
	}
	ids := make([]int64, 0, 16)
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return ids, i + 1, true
	}
	for {
		v, j, ok := scanInt(b, i)
		if !ok {
			return nil, j, false
		}
		ids = append(ids, v)
		i = skipSpace(b, j)
		if i >= len(b) {
			return nil, i, false
		}
		switch b[i] {
		case ']':
			return ids, i + 1, true
		case ',':
			i = skipSpace(b, i+1)
		default:
			return nil, i, false
		}
	}
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

const mooncakeFields = "a Mooncake line has timestamp, input_length, output_length, hash_ids"

// jsonProblem turns an encoding/json error into a field-attributed problem where possible.
func jsonProblem(err error, fields string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return &fieldError{te.Field, fmt.Sprintf("expected %s, got JSON %s", goKind(te.Type.String()), te.Value)}
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return &fieldError{strings.Trim(f, `"`), "unknown field (" + fields + ")"}
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

// Load reads a trace from a file path, or synthesizes a built-in one for "builtin:NAME";
// "builtin:NAME:xN" is N back-to-back copies of it (see Repeat). blockSize <= 0 means
// DefaultBlockSize.
func Load(spec string, blockSize int) (*Trace, error) {
	return LoadFormat(spec, blockSize, FormatDetect)
}

// LoadFormat is Load with the file's format named (FormatDetect: from its first row). A
// built-in trace has no other format than plain Mooncake.
func LoadFormat(spec string, blockSize int, format Format) (*Trace, error) {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	if profile, ok := strings.CutPrefix(spec, BuiltinPrefix); ok {
		if format != FormatDetect && format != FormatMooncake {
			return nil, fmt.Errorf("%s: built-in traces are plain mooncake rows, not %s", spec, format)
		}
		if blockSize != DefaultBlockSize {
			return nil, fmt.Errorf("%s: built-in traces use %d-token blocks, not %d", spec, DefaultBlockSize, blockSize)
		}
		profile, copies, err := cutCopies(profile)
		if err != nil {
			return nil, err
		}
		t, err := Builtin(profile)
		if err != nil || copies == 1 {
			return t, err
		}
		return Repeat(t, copies)
	}
	f, err := os.Open(spec)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseFormat(f, spec, blockSize, format)
}

// First returns the first n requests (contiguous, as the reference replay tools take
// subsets). n <= 0 or n >= len returns all of them. The requests are shared, not copied.
func (t *Trace) First(n int) *Trace {
	if n <= 0 || n >= len(t.Requests) {
		n = len(t.Requests)
	}
	sub := *t
	sub.Requests = t.Requests[:n:n]
	if len(t.Lines) >= n {
		sub.Lines = t.Lines[:n:n]
	}
	if t.Sessions != nil {
		// Earlier requests never wait for later ones, so the first n keep their structure.
		s := *t.Sessions
		s.Turns = s.Turns[:n:n]
		sessions := int32(0) // numbered in order of appearance: the first n use a prefix
		for _, tu := range s.Turns {
			sessions = max(sessions, tu.Session+1)
		}
		s.IDs = s.IDs[:sessions:sessions]
		if s.Expanded != nil {
			s.Expanded = s.Expanded[:sessions:sessions]
		}
		sub.Sessions = &s
	}
	return &sub
}
