package trace

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// The agentic synthesizer's sessions grow: each later turn's prompt is the previous prompt,
// its answer and a tool result, its hash ids extend the previous turn's, and it waits for
// the tool; both formats read back as written.
func TestSynthesizeAgentic(t *testing.T) {
	for _, f := range []Format{FormatMooncake, FormatAgentic} {
		spec := DefaultAgenticSpec()
		spec.Sessions, spec.Format = 60, f
		tr, err := SynthesizeAgentic(spec)
		if err != nil {
			t.Fatal(err)
		}
		st := tr.Sessions
		if len(st.IDs) != 60 || len(tr.Requests) != 60*8 {
			t.Fatalf("%s: %d sessions, %d requests, want 60 and 480", f, len(st.IDs), len(tr.Requests))
		}
		last := map[int32]int{}
		waits := 0.0
		for i, tu := range st.Turns {
			r := &tr.Requests[i]
			if i > 0 && r.TimestampMS < tr.Requests[i-1].TimestampMS {
				t.Fatalf("%s: request %d out of time order", f, i)
			}
			p, later := last[tu.Session]
			last[tu.Session] = i
			if !later {
				if tu.Index != 0 || len(r.HashIDs) < 8 || r.HashIDs[0] > int64(spec.PromptGroups*8) {
					t.Fatalf("%s: first turn %d: %+v ids %v", f, i, tu, r.HashIDs[:3])
				}
				continue
			}
			pr := &tr.Requests[p]
			wait := tu.DelayUS + tu.ToolWaitUS
			waits += float64(wait) / 1000
			switch {
			case tu.Index != st.Turns[p].Index+1:
				t.Fatalf("%s: turn %d follows turn %d", f, tu.Index, st.Turns[p].Index)
			case r.InputLength <= pr.InputLength+pr.OutputLength:
				t.Fatalf("%s: turn %d's prompt %d does not extend %d + answer %d", f, i, r.InputLength, pr.InputLength, pr.OutputLength)
			case !slices.Equal(r.HashIDs[:len(pr.HashIDs)], pr.HashIDs):
				t.Fatalf("%s: turn %d's ids do not extend its predecessor's", f, i)
			case r.TimestampMS != pr.TimestampMS+wait/1000:
				t.Fatalf("%s: turn %d at %d ms, want %d + %d", f, i, r.TimestampMS, pr.TimestampMS, wait/1000)
			case f == FormatAgentic && !slices.Equal(tu.WaitFor, []int32{int32(p)}):
				t.Fatalf("agentic turn %d waits for %v, want [%d]", i, tu.WaitFor, p)
			}
		}
		// 420 tool waits of mean 2,000 ms: their mean is within 15 %.
		if m := waits / float64(60*7); m < 1700 || m > 2300 {
			t.Errorf("%s: mean tool wait %.0f ms, want about 2000", f, m)
		}
		roundTrip(t, tr)
		roundTrip(t, tr.First(37))
	}
	bad := DefaultAgenticSpec()
	bad.Format = FormatAppliedCompute
	if _, err := SynthesizeAgentic(bad); err == nil {
		t.Error("applied_compute_agentic accepted")
	}
}

// builtin:toolagent-sessions is builtin:toolagent's requests with their sessions declared;
// it reads back as written.
func TestBuiltinSessions(t *testing.T) {
	plain, err := Synthesize("toolagent", 1, 3000)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := SynthesizeSessions("toolagent", 1, 3000)
	if err != nil {
		t.Fatal(err)
	}
	// The same requests; among equal timestamps a session's earlier turn comes first.
	key := func(r Request) string { return fmt.Sprint(r.TimestampMS, r.InputLength, r.OutputLength, r.HashIDs) }
	a, b := make([]string, 3000), make([]string, 3000)
	for i := range a {
		a[i], b[i] = key(plain.Requests[i]), key(sess.Requests[i])
	}
	moved := 0
	for i := range a {
		if a[i] != b[i] {
			moved++
		}
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) || moved > 30 {
		t.Fatalf("the session form has other requests (%d moved)", moved)
	}
	st := Stats(sess).SessionStructure
	if st == nil || st.Sessions < 1000 || st.Sessions >= 3000 || st.DependentRequests != 3000-st.Sessions {
		t.Fatalf("session structure %+v", st)
	}
	roundTrip(t, sess)
	bt, err := Builtin("toolagent-sessions")
	if err != nil || bt.Name != "builtin:toolagent-sessions" || bt.Sessions == nil || len(bt.Requests) != 23608 {
		t.Fatalf("%v %s", err, bt.Name)
	}
}

// Copies of a session trace keep their sessions apart and read back as written.
func TestRepeatSessions(t *testing.T) {
	for _, f := range []Format{FormatMooncake, FormatAgentic} {
		spec := DefaultAgenticSpec()
		spec.Sessions, spec.Turns, spec.Format = 5, 3, f
		tr, err := SynthesizeAgentic(spec)
		if err != nil {
			t.Fatal(err)
		}
		x, err := Repeat(tr, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(x.Sessions.IDs) != 15 || len(x.Sessions.Turns) != 45 || x.Sessions.Turns[44].Session != 14 {
			t.Fatalf("%s: %d sessions, %d turns", f, len(x.Sessions.IDs), len(x.Sessions.Turns))
		}
		if f == FormatAgentic && x.Sessions.Turns[44].WaitFor[0] < 30 {
			t.Fatalf("the last copy's turn waits for %v, outside its copy", x.Sessions.Turns[44].WaitFor)
		}
		// Written out, the copies read back with their hash ids shifted into the rows.
		var buf bytes.Buffer
		if err := WriteTrace(&buf, x); err != nil {
			t.Fatal(err)
		}
		back, err := ParseFormat(&buf, "x.jsonl", x.BlockSize, f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range x.Requests {
			r, b := &x.Requests[i], &back.Requests[i]
			for j := range r.HashIDs {
				if r.ID(j) != b.ID(j) {
					t.Fatalf("%s: request %d id %d: %d, read back %d", f, i, j, r.ID(j), b.ID(j))
				}
			}
		}
		if !reflect.DeepEqual(back.Sessions, x.Sessions) {
			t.Fatalf("%s: sessions read back differ", f)
		}
	}
}
