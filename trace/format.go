package trace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Format names a trace layout as Dynamo's replay (--trace-format) names it. The empty Format
// detects the layout from the first row.
type Format string

// The formats of Dynamo's docs/dynosim/trace-formats.md (ai-dynamo/dynamo f6de294), read as
// lib/mocker/src/loadgen/trace.rs and lib/data-gen/src/mooncake.rs (c1b1ab0) read them.
const (
	FormatDetect         Format = ""
	FormatMooncake       Format = "mooncake"
	FormatMooncakeDelta  Format = "mooncake-delta"
	FormatAgentic        Format = "agentic_mooncake"
	FormatAppliedCompute Format = "applied_compute_agentic"
)

// Formats lists the formats a --trace-format flag accepts.
func Formats() []Format {
	return []Format{FormatMooncake, FormatMooncakeDelta, FormatAgentic, FormatAppliedCompute}
}

// ParseFormatName checks a --trace-format value ("" or "auto" detects).
func ParseFormatName(s string) (Format, error) {
	if s == "" || s == "auto" {
		return FormatDetect, nil
	}
	if slices.Contains(Formats(), Format(s)) {
		return Format(s), nil
	}
	names := make([]string, 0, 5)
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("--trace-format: %q is not one of auto, %s", s, strings.Join(names, ", "))
}

// detect names the format of a trace from the top-level keys of its first row: a summary row
// (num_turns) is Applied Compute's, a request_id makes the agentic DAG, and a session_id or
// delay closed-loop Mooncake sessions. Anything else is read as plain Mooncake, as it always
// was, until a row opens a session (see opensSession). mooncake-delta rows look like
// Mooncake session rows, so that format is never detected.
func detect(br *bufio.Reader) Format {
	peek, _ := br.Peek(br.Size())
	for len(peek) > 0 {
		line := peek
		if i := bytes.IndexByte(peek, '\n'); i >= 0 {
			line, peek = peek[:i], peek[i+1:]
		} else {
			peek = nil
		}
		line = bytes.TrimPrefix(line, utf8BOM)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		keys := topLevelKeys(line)
		switch {
		case keys["num_turns"]:
			return FormatAppliedCompute
		case keys["request_id"]:
			return FormatAgentic
		case keys["session_id"] || keys["delay"] || keys["delay_ms"]:
			return FormatMooncake
		}
		return FormatDetect
	}
	return FormatDetect
}

// opensSession says whether a row the plain reader refused is a Mooncake session row (sessions
// may start after independent rows).
func opensSession(raw []byte) bool {
	k := topLevelKeys(raw)
	return (k["session_id"] || k["delay"] || k["delay_ms"]) && !k["request_id"] && !k["num_turns"]
}

// topLevelKeys lists the keys of a JSON object as far as it can be read (a first row longer
// than the peek buffer is cut; its leading keys still count).
func topLevelKeys(line []byte) map[string]bool {
	keys := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return keys
	}
	for dec.More() {
		tok, err := dec.Token()
		k, ok := tok.(string)
		if err != nil || !ok {
			return keys
		}
		keys[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// ParseFormat reads a trace in the given format (FormatDetect: from its first row). Plain
// Mooncake rows go through Parse's own reader, unchanged; the session formats fill
// Trace.Sessions.
func ParseFormat(r io.Reader, name string, blockSize int, format Format) (*Trace, error) {
	if blockSize <= 0 {
		return nil, fmt.Errorf("%s: block size must be positive, got %d", name, blockSize)
	}
	sum := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(r, sum), readBuffer)
	if format == FormatDetect || format == FormatMooncake {
		// Named mooncake on rows without sessions is today's plain reading too.
		if found := detect(br); format == FormatDetect || found == FormatDetect {
			format = found
		}
	}
	if format == FormatDetect {
		return parseMooncake(br, sum, name, blockSize)
	}
	t, err := parseSessions(br, name, blockSize, format)
	if err != nil {
		return nil, err
	}
	t.Digest = "sha256:" + hex.EncodeToString(sum.Sum(nil))
	return t, nil
}
