package natsweep

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Workers started before any sweep wait for its stream. The sweep's first task waits for
// them to join its queue (each joins at the sweep's ping), so every worker is serving
// before any task is done: none is left polling while the others take the first round.
func TestWaitingWorkersJoinBeforeTheFirstTask(t *testing.T) {
	f, exp := experiment(t)
	want, c, out := arena(t, f, exp, 0, DefaultAckWait)
	// Started a third of a second apart, so that their tries a second are out of step.
	var logs syncBuffer
	for i := range 3 {
		startWorker(t, c, "w"+string(rune('0'+i)), DefaultAckWait, io.MultiWriter(testLog{t}, &logs))
		for strings.Count(logs.String(), "waiting for a sweep") <= i {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second / 3)
	}
	if _, err := distributed(context.Background(), t, c, f, exp, out, false, nil); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, outputs(t, out), want)
	log := logs.String()
	if n := strings.Count(log, ": serving "); n != 3 {
		t.Fatalf("%d workers joined, want 3:\n%s", n, log)
	}
	if last, first := strings.LastIndex(log, ": serving "), strings.Index(log, " done in "); first < 0 || last > first {
		t.Errorf("a task was done before every worker had joined the queue:\n%s", log)
	}
}

// A worker answers a coordinator's ping with a heartbeat at once, so a coordinator that
// starts after its workers counts them before their next beat: five pings bring five beats
// in far less than the five seconds the ticker alone would take.
func TestWorkerAnswersAPing(t *testing.T) {
	c := startServer(t)
	nc, _, err := c.co.dial("test", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	beats := make(chan struct{}, 64)
	sub, err := nc.Subscribe(heartbeatSubject, func(*nats.Msg) { beats <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	startWorkers(t, c, 1, DefaultAckWait)
	<-beats // the worker is up and subscribed to pings
	start := time.Now()
	for range 5 {
		if err := nc.Publish(pingSubject, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		<-beats
	}
	if took := time.Since(start); took >= 5*heartbeatEvery {
		t.Errorf("five pings brought five beats in %v, as the ticker alone would", took)
	}
}
