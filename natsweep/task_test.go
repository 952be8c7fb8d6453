package natsweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/trace"
)

// A trace file travels once, as an object named by the SHA-256 of its bytes; a worker's
// replay of it equals the coordinator's own.
func TestFileTraceTravelsByDigest(t *testing.T) {
	tr, err := trace.Synthesize("conversation", 5, 400)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := trace.Write(&buf, tr.Requests); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "conv.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f := config.Default()
	if err := f.Set("workload.trace_path=" + path); err != nil {
		t.Fatal(err)
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	c := startServer(t)
	ctx := context.Background()
	co, cfg := coordinator(ctx, t, c, exp, exp.Fingerprint())
	store, err := co.js.ObjectStore(ctx, TraceBucket)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	if _, err := store.GetInfo(ctx, hex.EncodeToString(sum[:])); err != nil {
		t.Fatalf("trace not stored under its SHA-256: %v", err)
	}
	startWorkers(t, c, 1, DefaultAckWait)
	got, err := co.Run(ctx, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := exp.Run(ctx, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	got.Summary.WallTimeMS, want.Summary.WallTimeMS = 0, 0
	g, _ := json.Marshal(got.Summary)
	w, _ := json.Marshal(want.Summary)
	if !bytes.Equal(g, w) || got.Summary.RequestsCompleted != 400 {
		t.Errorf("worker's replay of the file:\n%s\nlocal:\n%s", g, w)
	}
}

// Runs of one task at once (a validation replay of a configuration already in flight) share
// one publication and one result; a run that gives up leaves the others waiting for it.
func TestOneTaskRunTwiceAtOnce(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	ctx := context.Background()
	co, cfg := coordinator(ctx, t, c, exp, exp.Fingerprint())
	key := taskKey(co.fp, co.ref, 50, cfg)
	quitter, quit := context.WithCancel(ctx)
	type answer struct {
		rep *engine.Report
		err error
	}
	answers := make(chan answer, 3)
	for _, rctx := range []context.Context{quitter, ctx, ctx} {
		go func() {
			rep, err := co.Run(rctx, cfg, 50)
			answers <- answer{rep, err}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		co.mu.Lock()
		n := 0
		if p, ok := co.tasks[key]; ok {
			n = len(p.chans)
		}
		co.mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs waiting on the task, want 3", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	info, err := co.js.Stream(ctx, TaskStream)
	if err != nil {
		t.Fatal(err)
	}
	// The first task waits a moment for workers to join (awaitWorkers) before it is published.
	for {
		st, err := info.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Msgs > 0 || time.Now().After(deadline) {
			if st.State.Msgs != 1 {
				t.Fatalf("tasks published for three runs of one task: %v, want 1", st.State.Msgs)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	quit()
	if a := <-answers; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("the run that gave up: %v", a.err)
	}
	startWorkers(t, c, 1, DefaultAckWait)
	var got []string
	for range 2 {
		select {
		case a := <-answers:
			if a.err != nil || a.rep.Summary.RequestsCompleted != 50 {
				t.Fatalf("a run sharing the task: %v", a.err)
			}
			a.rep.Summary.WallTimeMS = 0
			b, _ := json.Marshal(a.rep.Summary)
			got = append(got, string(b))
		case <-time.After(2 * time.Minute):
			t.Fatal("a run sharing the task never got its result")
		}
	}
	if got[0] != got[1] {
		t.Errorf("the two runs' reports differ:\n%s\n%s", got[0], got[1])
	}
}
