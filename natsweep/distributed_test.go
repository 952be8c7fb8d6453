package natsweep

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/sweep"
)

// The seed experiment as it ships (20 evaluations on 2,000 requests, validation on the
// whole trace) through three workers writes the local sweep's files.
func TestDistributedSweepMatchesLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole seed sweep, twice; skipped with -short")
	}
	f := config.Default()
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	want, c, out := arena(t, f, exp, 3, DefaultAckWait)
	var status syncBuffer
	events := make(chan sweep.Event)
	remotes := make(chan []string)
	go func() {
		var r []string
		for ev := range events {
			r = append(r, ev.Progress.Remote)
		}
		remotes <- r
	}()
	if _, err := distributedStatus(context.Background(), t, c, f, exp, out, false, events, &status); err != nil {
		t.Fatal(err)
	}
	close(events)
	sameOutputs(t, outputs(t, out), want)
	// Every progress event carries the fleet's status, and progress.json with it.
	all := <-remotes
	if len(all) == 0 || !slices.ContainsFunc(all, func(r string) bool { return strings.HasPrefix(r, "nats: 3 workers connected") }) {
		t.Errorf("no progress event saw the three workers: %q", all)
	}
	for _, r := range all {
		if !strings.HasPrefix(r, "nats: ") {
			t.Fatalf("progress event without the fleet's status: %q", r)
		}
	}
	if rec, err := sweep.ReadProgress(out); err != nil || rec == nil || !strings.HasPrefix(rec.Remote, "nats: ") {
		t.Errorf("progress.json: %+v, %v; want the fleet's status", rec, err)
	}
	// The last status line: every worker seen, nothing left in flight.
	lines := strings.Split(strings.TrimSpace(status.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "nats: 3 workers connected, 0 tasks in flight, ") {
		t.Errorf("last status line %q, want 3 workers and nothing in flight:\n%s", last, status.String())
	}
}

// A worker that takes a task and dies before acknowledging it: the task is redelivered
// after the ack wait, and the sweep ends as the local one does.
func TestDistributedSweepSurvivesAKilledWorker(t *testing.T) {
	f, exp := experiment(t)
	const ackWait = time.Second
	want, c, out := arena(t, f, exp, 0, ackWait)
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		_, err := distributed(ctx, t, c, f, exp, out, false, nil)
		errc <- err
	}()

	nc, js, err := c.wk.dial("dying worker", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	dying := &worker{opt: WorkerOptions{Name: "dying", AckWait: ackWait, Log: io.Discard}, sim: config.SimulatorDigest(), js: js}
	cons, err := dying.workQueue(ctx) // once the coordinator has made the stream
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if meta, err := msg.Metadata(); err != nil || meta.NumDelivered != 1 {
		t.Fatalf("first task: %+v, %v", meta, err)
	}
	nc.Close() // killed mid-task: no result, no ack

	startWorkers(t, c, 2, ackWait)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, outputs(t, out), want)
}

// A coordinator stopped after a few evaluations and resumed: the resumed sweep takes the
// ledger's evaluations and the results that finished meanwhile, and ends as the local one.
func TestDistributedSweepResumesAfterTheCoordinatorStops(t *testing.T) {
	f, exp := experiment(t)
	want, c, out := arena(t, f, exp, 3, DefaultAckWait)
	ctx, cancel := context.WithCancel(context.Background())
	progress := make(chan sweep.Event)
	go func() {
		n := 0
		for ev := range progress {
			if ev.Phase == sweep.PhaseSearch && ev.Key != "" {
				if n++; n == 3 {
					cancel() // the coordinator is stopped with tasks in flight
				}
			}
		}
	}()
	_, err := distributed(ctx, t, c, f, exp, out, false, progress)
	close(progress)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped sweep: error %v, want it cancelled", err)
	}
	res, err := distributed(context.Background(), t, c, f, exp, out, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Search.Resumed < 3 {
		t.Errorf("resumed sweep took %d evaluations from the ledger, want at least the 3 recorded before the stop", res.Search.Resumed)
	}
	sameOutputs(t, outputs(t, out), want)
}
