package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

const sharedConversation = "../../shared/traces/conversation_trace.jsonl"

func TestParseValid(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]}

{"hash_ids":[0,2,3],"output_length":1,"input_length":1025,"timestamp":7}
{"timestamp": 7, "input_length": 512, "output_length": 2, "hash_ids": [9]}`
	tr, err := Parse(strings.NewReader(in), "t.jsonl", 512)
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{
		{TimestampMS: 0, InputLength: 1000, OutputLength: 5, HashIDs: []int64{0, 1}},
		{TimestampMS: 7, InputLength: 1025, OutputLength: 1, HashIDs: []int64{0, 2, 3}},
		{TimestampMS: 7, InputLength: 512, OutputLength: 2, HashIDs: []int64{9}},
	}
	if !reflect.DeepEqual(tr.Requests, want) {
		t.Fatalf("got %+v, want %+v", tr.Requests, want)
	}
	if tr.Name != "t.jsonl" || tr.BlockSize != 512 {
		t.Fatalf("name/block size: %q %d", tr.Name, tr.BlockSize)
	}
}

func TestParseErrors(t *testing.T) {
	ok := `{"timestamp": 5, "input_length": 10, "output_length": 5, "hash_ids": [0]}` + "\n"
	cases := []struct{ in, want string }{
		{`{"timestamp": 0, "input_length": 10`, "x.jsonl:1: json: malformed"},
		{`not json`, "x.jsonl:1: json: malformed"},
		{ok + `{"input_length": 10, "output_length": 5, "hash_ids": [0]}`, "x.jsonl:2: timestamp: missing"},
		{`{"timestamp": 0, "output_length": 5, "hash_ids": [0]}`, "x.jsonl:1: input_length: missing"},
		{`{"timestamp": 0, "input_length": 10, "hash_ids": [0]}`, "x.jsonl:1: output_length: missing"},
		{`{"timestamp": 0, "input_length": 10, "output_length": 5}`, "x.jsonl:1: hash_ids: missing"},
		{`{"timestamp": -1, "input_length": 10, "output_length": 5, "hash_ids": [0]}`, "x.jsonl:1: timestamp: negative"},
		{`{"timestamp": 0, "input_length": -3, "output_length": 5, "hash_ids": []}`, "x.jsonl:1: input_length: must be at least 1"},
		{`{"timestamp": 0, "input_length": 10, "output_length": 0, "hash_ids": [0]}`, "x.jsonl:1: output_length: must be at least 1"},
		{`{"timestamp": 0, "input_length": 513, "output_length": 5, "hash_ids": [0]}`, "x.jsonl:1: hash_ids: has 1 ids, want ceil(input_length 513 / block size 512) = 2"},
		{`{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [-4]}`, "x.jsonl:1: hash_ids[0]: negative"},
		{ok + ok + `{"timestamp": 4, "input_length": 10, "output_length": 5, "hash_ids": [0]}`, "x.jsonl:3: timestamp: 4 is earlier than the previous request's 5"},
		{`{"timestamp": 1.5, "input_length": 10, "output_length": 5, "hash_ids": [0]}`, "x.jsonl:1: timestamp: expected an integer"},
		{`{"timestamp": 1, "input_length": 10, "output_length": 5, "hash_ids": ["a"]}`, "x.jsonl:1: hash_ids"},
		{`{"timestamp": 1, "input_length": 10, "output_length": 5, "hash_ids": [0], "session": 3}`, "x.jsonl:1: session: unknown field"},
		{`{"timestamp": 1, "input_length": 10, "output_length": 5, "hash_ids": [0]} {}`, "x.jsonl:1: json: unexpected data"},
	}
	for _, c := range cases {
		_, err := Parse(strings.NewReader(c.in), "x.jsonl", 512)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("input %q: got error %v, want prefix %q", c.in, err, c.want)
		}
	}
	if _, err := Parse(strings.NewReader(ok), "x", 0); err == nil {
		t.Error("block size 0 accepted")
	}
}

// A line far longer than the reader's buffer must parse.
func TestParseLongLine(t *testing.T) {
	n := 300_000
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i) * 1_000_003
	}
	reqs := []Request{{TimestampMS: 0, InputLength: n * 4, OutputLength: 1, HashIDs: ids}, {TimestampMS: 1, InputLength: 4, OutputLength: 1, HashIDs: []int64{1}}}
	var buf bytes.Buffer
	if err := Write(&buf, reqs); err != nil {
		t.Fatal(err)
	}
	if buf.Len() < 2<<20 {
		t.Fatalf("test line too short: %d bytes", buf.Len())
	}
	tr, err := Parse(&buf, "long", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tr.Requests, reqs) {
		t.Fatal("long line did not round-trip")
	}
}

func TestWriteLayout(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, []Request{{TimestampMS: 0, InputLength: 6758, OutputLength: 500, HashIDs: []int64{0, 1, 2}}, {TimestampMS: 3, InputLength: 1, OutputLength: 1, HashIDs: []int64{7}}}); err != nil {
		t.Fatal(err)
	}
	want := `{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2]}
{"timestamp": 3, "input_length": 1, "output_length": 1, "hash_ids": [7]}
`
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestFirst(t *testing.T) {
	tr := &Trace{Name: "x", BlockSize: 4, Requests: []Request{{TimestampMS: 0, InputLength: 1, OutputLength: 1, HashIDs: []int64{0}}, {TimestampMS: 1, InputLength: 1, OutputLength: 1, HashIDs: []int64{1}}, {TimestampMS: 2, InputLength: 1, OutputLength: 1, HashIDs: []int64{2}}}}
	for _, c := range []struct{ n, want int }{{0, 3}, {-1, 3}, {1, 1}, {2, 2}, {3, 3}, {9, 3}} {
		s := tr.First(c.n)
		if len(s.Requests) != c.want || s.Name != "x" || s.BlockSize != 4 {
			t.Errorf("First(%d): %d requests", c.n, len(s.Requests))
		}
		if c.want > 0 && s.Requests[0].TimestampMS != 0 {
			t.Errorf("First(%d) does not start at the first request", c.n)
		}
	}
	// Appending to a subset must not overwrite the parent's requests.
	s := tr.First(1)
	_ = append(s.Requests, Request{TimestampMS: 99})
	if tr.Requests[1].TimestampMS != 1 {
		t.Fatal("First shares capacity with its parent")
	}
}

func genRequests(t *rapid.T, blockSize int) []Request {
	n := rapid.IntRange(1, 20).Draw(t, "n")
	reqs := make([]Request, n)
	ts := int64(0)
	for i := range reqs {
		ts += rapid.Int64Range(0, 5000).Draw(t, "dt")
		in := rapid.IntRange(1, 20*blockSize).Draw(t, "in")
		ids := make([]int64, (in+blockSize-1)/blockSize)
		for j := range ids {
			ids[j] = rapid.Int64Range(0, 1<<62).Draw(t, "id")
		}
		reqs[i] = Request{TimestampMS: ts, InputLength: in, OutputLength: rapid.IntRange(1, 100000).Draw(t, "out"), HashIDs: ids}
	}
	return reqs
}

func TestWriteParseRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bs := rapid.IntRange(1, 1024).Draw(t, "blockSize")
		reqs := genRequests(t, bs)
		var buf bytes.Buffer
		if err := Write(&buf, reqs); err != nil {
			t.Fatal(err)
		}
		tr, err := Parse(bytes.NewReader(buf.Bytes()), "rt", bs)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Requests) != len(reqs) || (len(reqs) > 0 && !reflect.DeepEqual(tr.Requests, reqs)) {
			t.Fatalf("round trip changed the requests")
		}
		// Writing the parsed trace again gives the same bytes.
		var again bytes.Buffer
		if err := Write(&again, tr.Requests); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Fatal("write(parse(write(x))) != write(x)")
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}`))
	f.Add([]byte("{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [5]}\n\n{\"timestamp\": 0}"))
	f.Add([]byte(`{"timestamp": 1e3, "input_length": 1, "output_length": 1, "hash_ids": [5]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Parse(bytes.NewReader(data), "fuzz", 512)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error does not name the input: %v", err)
			}
			return
		}
		// Whatever parses is valid and survives a write/parse round trip unchanged.
		var buf bytes.Buffer
		if err := Write(&buf, tr.Requests); err != nil {
			t.Fatal(err)
		}
		again, err := Parse(&buf, "again", 512)
		if err != nil {
			t.Fatalf("re-parse of written trace: %v", err)
		}
		if len(again.Requests) != len(tr.Requests) || (len(tr.Requests) > 0 && !reflect.DeepEqual(again.Requests, tr.Requests)) {
			t.Fatal("round trip changed the requests")
		}
	})
}

func TestLoadConversation(t *testing.T) {
	if _, err := os.Stat(sharedConversation); err != nil {
		t.Skip("../shared/traces/conversation_trace.jsonl not present: ", err)
	}
	tr, err := Load(sharedConversation, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Requests) != 12031 || tr.BlockSize != 512 {
		t.Fatalf("requests %d block size %d", len(tr.Requests), tr.BlockSize)
	}
	var in, out int64
	maxIn := 0
	for _, r := range tr.Requests {
		in += int64(r.InputLength)
		out += int64(r.OutputLength)
		maxIn = max(maxIn, r.InputLength)
	}
	if in != 144793823 || out != 4122048 || maxIn != 126195 {
		t.Fatalf("sum input %d, sum output %d, max input %d", in, out, maxIn)
	}
	last := tr.Requests[len(tr.Requests)-1].TimestampMS
	if last != 3536999 {
		t.Fatalf("last timestamp %d", last)
	}
	if _, err := Load(sharedConversation, 64); err == nil || !strings.Contains(err.Error(), "conversation_trace.jsonl:1: hash_ids") {
		t.Fatalf("block size 64 should fail on line 1's hash_ids, got %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load("/nonexistent/trace.jsonl", 0); err == nil || !strings.Contains(err.Error(), "/nonexistent/trace.jsonl") {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkParseConversation(b *testing.B) {
	data, err := os.ReadFile(sharedConversation)
	if err != nil {
		b.Skip("../shared/traces/conversation_trace.jsonl not present: ", err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data), "conv", 512); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigestConversation is the share of BenchmarkParseConversation that names the
// trace's bytes (sha256) for the experiment fingerprint.
func BenchmarkDigestConversation(b *testing.B) {
	data, err := os.ReadFile(sharedConversation)
	if err != nil {
		b.Skip("../shared/traces/conversation_trace.jsonl not present: ", err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sha256.Sum256(data)
	}
}

// The fast path agrees with encoding/json on every line it accepts.
func FuzzScanLine(f *testing.F) {
	f.Add([]byte(`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2]}`))
	f.Add([]byte(` {"hash_ids":[],"output_length":-0,"input_length":01,"timestamp":3} `))
	f.Add([]byte(`{"timestamp": 1, "timestamp": 2, "input_length": 1, "output_length": 1, "hash_ids": [5]}`))
	f.Add([]byte(`{"timestamp": 1e2, "input_length": 1, "output_length": 1, "hash_ids": [5,]}`))
	f.Add([]byte(`{"time\u0073tamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [5]} }`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := scanLine(line)
		if !ok {
			return
		}
		slow, err := decodeLine(line)
		if err != nil {
			t.Fatalf("fast path accepted %q, encoding/json says %v", line, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", line, fast, slow)
		}
	})
}

func TestScanLineFallsBack(t *testing.T) {
	for _, l := range []string{
		`{"timestamp": 1, "timestamp": 2, "input_length": 1, "output_length": 1, "hash_ids": [5]}`,
		`{"timestamp": 01, "input_length": 1, "output_length": 1, "hash_ids": [5]}`,
		`{"timestamp": 1.0, "input_length": 1, "output_length": 1, "hash_ids": [5]}`,
		`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [5,]}`,
		`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [5]} }`,
		`{"timestamp": 1, "input_length": 1, "output_length": 1}`,
		`{"timestamp": 1234567890123456789, "input_length": 1, "output_length": 1, "hash_ids": [5]}`,
	} {
		if _, ok := scanLine([]byte(l)); ok {
			t.Errorf("fast path accepted %s", l)
		}
	}
	// Both paths reject a trailing brace.
	if _, err := Parse(strings.NewReader(`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [5]} }`), "x", 512); err == nil {
		t.Error("trailing data accepted")
	}
}

func TestParseRecordsTheDigestOfTheBytes(t *testing.T) {
	text := `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}` + "\n"
	tr, err := Parse(strings.NewReader(text), "d.jsonl", 512)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	if want := "sha256:" + hex.EncodeToString(sum[:]); tr.Digest != want || tr.First(1).Digest != want {
		t.Errorf("digest %q (first 1: %q), want %q", tr.Digest, tr.First(1).Digest, want)
	}
}
