package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// genSessionRows draws a trace in a session format: Mooncake sessions (a first turn at its
// timestamp, later turns a delay after the previous one, each prompt extending the last) or
// an agentic_mooncake DAG (each row waiting for up to three earlier rows, with a delay and a
// tool wait).
func genSessionRows(t *rapid.T, traceBlock int) (string, trace.Format) {
	var b strings.Builder
	next := int64(1)
	fresh := func(ids []int64, k int) []int64 {
		for range k {
			ids = append(ids, next)
			next++
		}
		return ids
	}
	row := func(ids []int64, extra string) {
		in := (len(ids)-1)*traceBlock + rapid.IntRange(1, traceBlock).Draw(t, "tail")
		idText := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ids)), ", "), "[]")
		fmt.Fprintf(&b, `{%s"input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n",
			extra, in, rapid.IntRange(1, 30).Draw(t, "out"), idText)
	}
	if rapid.Bool().Draw(t, "agentic") {
		n := rapid.IntRange(1, 25).Draw(t, "requests")
		for i := range n {
			extra := fmt.Sprintf(`"request_id": "r%d", "session_id": "s%d", "timestamp": %d, `, i, rapid.IntRange(0, 3).Draw(t, "session"), rapid.IntRange(0, 200).Draw(t, "ts"))
			if i > 0 {
				var waits []string
				for range rapid.IntRange(0, min(3, i)).Draw(t, "waits") {
					waits = append(waits, fmt.Sprintf(`"r%d"`, rapid.IntRange(0, i-1).Draw(t, "dep")))
				}
				if len(waits) > 0 {
					extra += fmt.Sprintf(`"wait_for": [%s], "delay": %d, "tool_wait_ms": %d, `, strings.Join(waits, ", "),
						rapid.IntRange(0, 20).Draw(t, "delay"), rapid.IntRange(0, 50).Draw(t, "tool_wait"))
				}
			}
			row(fresh(nil, rapid.IntRange(1, 3).Draw(t, "blocks")), extra)
		}
		return b.String(), trace.FormatAgentic
	}
	for s := range rapid.IntRange(1, 8).Draw(t, "sessions") {
		ids := fresh(nil, rapid.IntRange(1, 3).Draw(t, "blocks"))
		row(ids, fmt.Sprintf(`"session_id": "s%d", "timestamp": %d, `, s, rapid.IntRange(0, 300).Draw(t, "ts")))
		for range rapid.IntRange(0, 3).Draw(t, "turns") {
			ids = fresh(ids, rapid.IntRange(1, 2).Draw(t, "grow"))
			row(ids, fmt.Sprintf(`"session_id": "s%d", "delay": %d, `, s, rapid.IntRange(0, 100).Draw(t, "delay")))
		}
	}
	return b.String(), trace.FormatMooncake
}

// Every turn completes once; a session's turn is sent exactly its delay (and tool wait) after
// its predecessor completes (after the client's stream end), an agentic row exactly that long
// after the last of its dependencies, and never before; first turns at their timestamps (open
// loop) or as sessions free their slots (closed loop), never more sessions at once than the
// replay concurrency.
func TestSessionSchedulingProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tb := rapid.SampledFrom([]int{64, 128}).Draw(t, "trace_block")
		text, format := genSessionRows(t, tb)
		tr, err := trace.ParseFormat(strings.NewReader(text), "rapid.jsonl", tb, format)
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		cfg := genConfig(t, tr)
		if format == trace.FormatAgentic {
			cfg.ReplayConcurrency = 0
		}
		cfg.Router.SessionAffinityTTLSecs = rapid.SampledFrom([]float64{0, 0, 1, 600}).Draw(t, "affinity_ttl")
		timer := &fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "base")), perToken: 1}
		s, err := New(cfg, timer, tr)
		if err != nil {
			t.Fatal(err)
		}
		done := map[*request]int{}
		s.onDone = func(r *request) { done[r]++ }
		if _, err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i := range s.reqs {
			if n := done[&s.reqs[i]]; n != 1 {
				t.Fatalf("request %d completed %d times", i, n)
			}
		}
		checkSchedule(t, s, tr)
	})
}

func checkSchedule(t *rapid.T, s *Sim, tr *trace.Trace) {
	st := tr.Sessions
	ratio := s.cfg.ArrivalSpeedupRatio
	if ratio == 0 || s.cfg.ReplayConcurrency > 0 {
		ratio = 1
	}
	wait := func(i int) int64 {
		tu := &st.Turns[i]
		return int64(float64(tu.DelayUS+tu.ToolWaitUS)/ratio + 0.5)
	}
	prev := map[int32]int{} // per session: its latest turn so far
	type span struct{ start, end int64 }
	spans := map[int32]*span{}
	for i := range st.Turns {
		tu, r := &st.Turns[i], &s.reqs[i]
		p, later := prev[tu.Session]
		switch {
		case st.Format == trace.FormatAgentic && len(tu.WaitFor) > 0:
			var ready int64
			for _, j := range tu.WaitFor {
				ready = max(ready, s.reqs[j].done+s.streamEndUS)
			}
			if r.arrival != ready+wait(i) {
				t.Fatalf("request %d sent at %d µs, want its dependencies' last completion %d + %d", i, r.arrival, ready, wait(i))
			}
		case st.Format == trace.FormatAgentic, !later && s.cfg.ReplayConcurrency == 0:
			if r.arrival != s.arrivalTime(i) {
				t.Fatalf("request %d sent at %d µs, want its timestamp's %d", i, r.arrival, s.arrivalTime(i))
			}
		case later:
			if want := s.reqs[p].done + s.streamEndUS + wait(i); r.arrival != want {
				t.Fatalf("turn %d of session %d (request %d) sent at %d µs, want %d (its predecessor %d done at %d, then %d µs)",
					tu.Index, tu.Session, i, r.arrival, want, p, s.reqs[p].done, wait(i))
			}
		}
		prev[tu.Session] = i
		if sp := spans[tu.Session]; sp == nil {
			spans[tu.Session] = &span{r.arrival, r.done}
		} else {
			sp.end = r.done
		}
	}
	if c := s.cfg.ReplayConcurrency; c > 0 {
		for _, a := range spans {
			active := 0
			for _, b := range spans {
				if b.start <= a.start && a.start < b.end+s.streamEndUS {
					active++
				}
			}
			if active > c {
				t.Fatalf("%d sessions active at %d µs, concurrency %d", active, a.start, c)
			}
		}
	}
}

// BenchmarkReplayToolagentSessions is BenchmarkReplayToolagent on the same requests as
// sessions (builtin:toolagent-sessions): 32 sessions in flight.
func BenchmarkReplayToolagentSessions(b *testing.B) {
	tr, err := trace.Load("builtin:toolagent-sessions", trace.DefaultBlockSize)
	if err != nil {
		b.Fatal(err)
	}
	benchReplay(b, tr, router.ModeKV)
}

// A turn refused before routing (longer than the context) is answered at once in Dynamo, so
// its delay moves to its session's next turn; an agentic row that waited for it waits for
// what it waited for.
func TestRefusedTurnPassesItsWaitOn(t *testing.T) {
	mooncake := `{"session_id": "a", "timestamp": 0, "input_length": 64, "output_length": 4, "hash_ids": [1]}
{"session_id": "a", "delay": 100, "input_length": 4100, "output_length": 4, "hash_ids": [1, 2, 3, 4, 5, 6, 7, 8, 9]}
{"session_id": "a", "delay": 50, "input_length": 600, "output_length": 4, "hash_ids": [1, 2]}
`
	agentic := `{"request_id": "r1", "timestamp": 0, "input_length": 64, "output_length": 4, "hash_ids": [1]}
{"request_id": "r2", "input_length": 4100, "output_length": 4, "hash_ids": [1, 2, 3, 4, 5, 6, 7, 8, 9], "wait_for": ["r1"], "delay": 100}
{"request_id": "r3", "input_length": 600, "output_length": 4, "hash_ids": [1, 2], "wait_for": ["r2"], "tool_wait_ms": 50}
`
	for _, c := range []struct {
		rows   string
		format trace.Format
		closed int
	}{{mooncake, trace.FormatMooncake, 1}, {mooncake, trace.FormatMooncake, 0}, {agentic, trace.FormatAgentic, 0}} {
		tr, err := trace.ParseFormat(strings.NewReader(c.rows), "t.jsonl", 512, c.format)
		if err != nil {
			t.Fatal(err)
		}
		d := deployment(1000, 4096, 8)
		d.ContextLength = 4096
		rc := router.DefaultConfig()
		rc.BlockSize = d.BlockSize
		cfg := Config{Workers: 1, Worker: d, Router: rc, ReplayConcurrency: c.closed, RecordRequests: true}
		s, err := New(cfg, &fakeTimer{base: 10, perToken: 1}, tr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(s.reqs) != 2 || len(s.rejected) != 1 {
			t.Fatalf("%s: %d simulated, %v rejected", c.format, len(s.reqs), s.rejected)
		}
		if got, want := s.reqs[1].arrival, s.reqs[0].done+150_000; got != want {
			t.Errorf("%s (concurrency %d): the last turn sent at %d µs, want its predecessor's completion %d + 150 ms", c.format, c.closed, got, s.reqs[0].done)
		}
	}
}

// The seed fleet on the first 4,000 requests of the toolagent trace (docs/sessions.md): as
// sessions at c = 32 it serves under half the requests per second it serves as independent
// rows (sessions keep their slots through their gaps); the KV router still beats round robin
// on TTFT and e2e latency; session affinity raises prefix reuse above the KV router's own.
func TestSeedAsSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("four replays of the seed fleet")
	}
	cfg, mw := seedConfig(t)
	load := func(spec string) *trace.Trace {
		tr, err := trace.Load(spec, trace.DefaultBlockSize)
		if err != nil {
			t.Fatal(err)
		}
		return tr.First(4000)
	}
	rows, sess := load("builtin:toolagent"), load("builtin:toolagent-sessions")
	run := func(tr *trace.Trace, edit func(*Config)) Summary {
		c := cfg
		edit(&c)
		rep, err := Replay(context.Background(), c, mw, tr)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Summary
	}
	plain := run(rows, func(*Config) {})
	kv := run(sess, func(*Config) {})
	rr := run(sess, func(c *Config) { c.Router.Mode = router.ModeRoundRobin })
	aff := run(sess, func(c *Config) { c.Router.SessionAffinityTTLSecs = 600 })
	if kv.RequestThroughput > plain.RequestThroughput/2 {
		t.Errorf("sessions serve %.2f req/s, rows %.2f: want under half", kv.RequestThroughput, plain.RequestThroughput)
	}
	if kv.MeanTTFTMS >= rr.MeanTTFTMS || kv.MeanE2EMS >= rr.MeanE2EMS {
		t.Errorf("kv_router TTFT %.1f, e2e %.1f; round_robin %.1f, %.1f", kv.MeanTTFTMS, kv.MeanE2EMS, rr.MeanTTFTMS, rr.MeanE2EMS)
	}
	if aff.PrefixCacheReusedRatio <= kv.PrefixCacheReusedRatio+0.03 {
		t.Errorf("affinity reuse %.3f, kv_router %.3f", aff.PrefixCacheReusedRatio, kv.PrefixCacheReusedRatio)
	}
}
