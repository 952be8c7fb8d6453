package trace

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Copies follow each other in time, share no hash id, share the original's id arrays, and
// write out as a plain trace that parses back to the same requests.
func TestRepeatBuildsTimeShiftedDisjointCopies(t *testing.T) {
	base, err := Synthesize("toolagent", 3, 500)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Repeat(base, 3)
	if err != nil {
		t.Fatal(err)
	}
	n := len(base.Requests)
	if len(rep.Requests) != 3*n || rep.Name != "toolagent:x3" || !strings.Contains(rep.Digest, "3 copies") {
		t.Fatalf("%d requests named %q (%q), want %d", len(rep.Requests), rep.Name, rep.Digest, 3*n)
	}
	period := base.Requests[n-1].TimestampMS - base.Requests[0].TimestampMS + 1
	owner := map[int64]int{} // hash id → copy
	for i := range rep.Requests {
		r, b := &rep.Requests[i], &base.Requests[i%n]
		k := i / n
		if r.TimestampMS != b.TimestampMS+int64(k)*period || r.InputLength != b.InputLength || &r.HashIDs[0] != &b.HashIDs[0] {
			t.Fatalf("request %d (copy %d) = %+v, base %+v", i, k, r, b)
		}
		if i > 0 && r.TimestampMS < rep.Requests[i-1].TimestampMS {
			t.Fatalf("request %d: timestamp goes back", i)
		}
		for j := range r.HashIDs {
			if c, ok := owner[r.ID(j)]; ok && c != k {
				t.Fatalf("hash id %d in copies %d and %d", r.ID(j), c, k)
			}
			owner[r.ID(j)] = k
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, rep.Requests); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(&buf, "x3.jsonl", DefaultBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	for i := range back.Requests {
		r, w := &back.Requests[i], &rep.Requests[i]
		if r.TimestampMS != w.TimestampMS || len(r.HashIDs) != len(w.HashIDs) {
			t.Fatalf("request %d: parsed %+v, wrote %+v", i, r, w)
		}
		for j := range r.HashIDs {
			if r.ID(j) != w.ID(j) {
				t.Fatalf("request %d id %d: parsed %d, wrote %d", i, j, r.ID(j), w.ID(j))
			}
		}
	}
	// Repeating a repeat keeps ids disjoint: the largest id counts the offset.
	twice, err := Repeat(rep, 2)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := twice.Requests[3*n].ID(0), rep.Requests[0].ID(0); a == b {
		t.Fatalf("second repeat reuses id %d", a)
	}
}

func TestLoadBuiltinCopies(t *testing.T) {
	tr, err := Load("builtin:toolagent:x2", 0)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := Builtin("toolagent")
	if len(tr.Requests) != 2*len(one.Requests) || tr.Name != "builtin:toolagent:x2" {
		t.Fatalf("%s: %d requests, want %d", tr.Name, len(tr.Requests), 2*len(one.Requests))
	}
	for _, bad := range []string{"builtin:toolagent:x0", "builtin:toolagent:xten", "builtin:toolagent:x10001"} {
		if _, err := Load(bad, 0); err == nil || !strings.Contains(err.Error(), bad+": copies: want :xN with N in 1..10000") {
			t.Errorf("Load(%q) error %v", bad, err)
		}
	}
	if _, err := Load("builtin:nosuch:x2", 0); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown profile with copies: error %v", err)
	}
}

// The ":xN" suffix of a built-in name: accepted exactly when N is a plain count in range,
// and then it round-trips.
func FuzzCutCopies(f *testing.F) {
	for _, s := range []string{"toolagent", "toolagent:x100", "toolagent:x0", "a:xb:x2", ":x", "toolagent:x+5", "toolagent:x10001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		name, n, err := cutCopies(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "copies: want :xN") {
				t.Fatalf("%q: error %v does not say what is wanted", spec, err)
			}
			return
		}
		if n < 1 || n > MaxCopies {
			t.Fatalf("%q: %d copies accepted", spec, n)
		}
		want := spec
		if n == 1 && !strings.Contains(spec, ":x") {
			want = spec + ":x1"
		}
		if again := fmt.Sprintf("%s:x%d", name, n); again != want {
			t.Fatalf("%q: cut to %q × %d, which reads back as %q", spec, name, n, again)
		}
	})
}
