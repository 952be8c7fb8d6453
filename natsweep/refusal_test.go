package natsweep

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerlab/routerlab/config"
)

// A task of another simulator digest reaches no worker of this build: it is filed under
// its digest. Published by hand on this build's subject, it is refused, and the coordinator's
// error and the worker's log both say why.
func TestWorkerRefusesAnotherSimulator(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	var log syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = RunWorker(ctx, c.wk, WorkerOptions{Name: "other", Log: &log}) }()
	defer func() { cancel(); <-done }()

	fp := slices.Clone(exp.Fingerprint())
	for i := range fp {
		if fp[i].Key == config.KeySimulator {
			fp[i].Value = "sim-0123456789abcdef"
		}
	}
	co, cfg := coordinator(ctx, t, c, exp, fp)
	short, stop := context.WithTimeout(ctx, 3*time.Second)
	_, err := co.Run(short, cfg, 50)
	stop()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a task of another simulator: %v, want no worker to take it", err)
	}

	// As a coordinator that lies about its digest would file it; under co.mu, which the
	// status line's goroutine reads it under.
	co.mu.Lock()
	co.sim = config.SimulatorDigest()
	co.mu.Unlock()
	_, err = co.Run(ctx, cfg, 50)
	want := "the task is for simulator sim-0123456789abcdef, this worker's is " + config.SimulatorDigest() + " (built from other code)"
	// Refused by the only worker MaxFailures times (it steps aside for another worker a few
	// times first), then the sweep stops naming it and its reason.
	stops := "failed 3 times, the most a task may: worker other: refused: " + want + " (3 times)"
	if err == nil || !strings.HasSuffix(err.Error(), stops) {
		t.Fatalf("error %v, want it to end %q", err, stops)
	}
	if !strings.Contains(log.String(), "refused: "+want) {
		t.Errorf("worker log lacks the refusal:\n%s", log.String())
	}
}

// A worker of another simulator digest among matching ones is refused by name in the status
// line, and the sweep finishes on the others with the local sweep's outputs.
func TestMixedFleetLeavesOtherSimulatorOut(t *testing.T) {
	f, exp := experiment(t)
	want, c, out := arena(t, f, exp, 1, DefaultAckWait)
	nc, _, err := c.wk.dial("impostor", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	stop := make(chan struct{})
	var beats sync.WaitGroup
	beats.Go(func() { // the heartbeats of a worker built from other code, often enough that the
		// coordinator hears one however short the sweep is
		b, _ := json.Marshal(heartbeat{Worker: "skewed", Simulator: "sim-fedcba9876543210", Parallel: 1})
		for {
			_ = nc.Publish(heartbeatSubject, b)
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	defer func() { close(stop); beats.Wait() }()
	var status syncBuffer
	if _, err := distributedStatus(context.Background(), t, c, f, exp, out, false, nil, &status); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, outputs(t, out), want)
	line := "refused 1 built from other code: skewed (sim-fedcba9876543210); this sweep's simulator is " + config.SimulatorDigest()
	if !strings.Contains(status.String(), line) {
		t.Errorf("status lines lack %q:\n%s", line, status.String())
	}
}

// A worker runs a task only of its own simulator digest, whatever the version strings say.
func TestRefusalNamesSimulator(t *testing.T) {
	fp := config.Fingerprint{{Key: config.KeyVersion, Value: "v0.0.1"}, {Key: config.KeySimulator, Value: config.SimulatorDigest()}}
	if why := refusal(fp); why != "" {
		t.Errorf("refused its own digest under another version: %s", why)
	}
	fp[1].Value = "sim-1"
	if why := refusal(fp); why != "the task is for simulator sim-1, this worker's is "+config.SimulatorDigest()+" (built from other code)" {
		t.Errorf("other digest: %q", why)
	}
}

// A refusal stored by an earlier session (a fleet since fixed) does not fail the task for
// a coordinator that runs it again; a successful result of any session would count.
func TestOldRefusalsDoNotCount(t *testing.T) {
	_, exp := experiment(t)
	c := startServer(t)
	ctx := context.Background()
	co, cfg := coordinator(ctx, t, c, exp, exp.Fingerprint())
	publishResult(t, c, co.sweep, Result{Key: taskKey(co.fp, co.ref, 50, cfg), Session: "earlier", Worker: "old", Refused: "the task is for simulator sim-0"})
	startWorkers(t, c, 1, DefaultAckWait)
	rep, err := co.Run(ctx, cfg, 50)
	if err != nil || rep.Summary.RequestsCompleted != 50 {
		t.Fatalf("run after an old refusal: %v", err)
	}
}
