package natsweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/trace"
)

// WorkerOptions configure RunWorker.
type WorkerOptions struct {
	Parallel int           // simulations at once (default 1, at most MaxParallel)
	Name     string        // how coordinators and logs name this worker (default host-pid)
	AckWait  time.Duration // redelivery delay of a silent worker's task (default DefaultAckWait, at least MinAckWait)
	Log      io.Writer     // one line per task; nil discards
}

// MaxParallel bounds a worker's simulations at once: each holds a replay's memory (tens of
// MB for a search-sized one), so more than this is a typo, not a machine.
const MaxParallel = 1024

// MinAckWait is the shortest redelivery delay: a busy worker reports progress every third
// of it, and a shorter one would hand every running task to a second worker.
const MinAckWait = time.Second

// Check says what is wrong with the options, naming the limits.
func (o WorkerOptions) Check() error {
	switch {
	case o.Parallel < 0 || o.Parallel > MaxParallel:
		return fmt.Errorf("--parallel: %d must be between 1 and %d", o.Parallel, MaxParallel)
	case o.AckWait != 0 && o.AckWait < MinAckWait:
		return fmt.Errorf("--ack-wait: %s must be at least %s", o.AckWait, MinAckWait)
	}
	return nil
}

// avoidOffers is how often a worker named in a task's Avoid hands it back (a second apart)
// before it takes the task itself: the other workers have had their chance.
const avoidOffers = 5

// worker is one RunWorker: its connection, its caches and its counters.
type worker struct {
	opt  WorkerOptions
	sim  string // config.SimulatorDigest
	js   jetstream.JetStream
	cons jetstream.Consumer
	busy atomic.Int32
	// serving: joined the work queue; heartbeats say so, and a sweep's first task waits for
	// the workers it has heard from to join (Coordinator.awaitWorkers).
	serving atomic.Bool
	// wake: a coordinator pinged, after creating the streams; a waiting worker tries to
	// join at once instead of at its next second.
	wake chan struct{}

	mu     sync.Mutex
	traces map[string]*trace.Trace // by TraceRef.Digest
	models model.Workers           // timing models, by deployment
	logMu  sync.Mutex
}

// RunWorker serves tasks from the NATS server at c until ctx ends: Parallel loops each
// pull one task, simulate it, publish the result and acknowledge the task.
func RunWorker(ctx context.Context, c Conn, opt WorkerOptions) error {
	if err := opt.Check(); err != nil {
		return err
	}
	if opt.Parallel < 1 {
		opt.Parallel = 1
	}
	if opt.AckWait <= 0 {
		opt.AckWait = DefaultAckWait
	}
	if opt.Name == "" {
		host, _ := os.Hostname()
		opt.Name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	sim := config.SimulatorDigest()
	w := &worker{opt: opt, sim: sim, traces: map[string]*trace.Trace{}, wake: make(chan struct{}, 1)}
	nc, js, err := c.dial("routerlab worker "+opt.Name, w.logf)
	if err != nil {
		return err
	}
	defer nc.Close()
	w.js = js
	// Heartbeats: how coordinators count connected workers; one at once when a coordinator
	// asks. The ping subscription comes first, so a coordinator's ping either reaches it or
	// precedes this worker's first beat.
	beat := func() {
		b, _ := json.Marshal(heartbeat{Worker: opt.Name, Simulator: sim, Parallel: opt.Parallel, Busy: int(w.busy.Load()), Serving: w.serving.Load()})
		_ = nc.Publish(heartbeatSubject, b)
	}
	ping, err := nc.Subscribe(pingSubject, func(*nats.Msg) {
		beat()
		select {
		case w.wake <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return fmt.Errorf("nats: subscribing to %s: %w", pingSubject, err)
	}
	defer func() { _ = ping.Unsubscribe() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, stop := context.WithCancel(ctx) // the heartbeats end too when the worker fails
	defer stop()
	wg.Go(func() {
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			beat()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	if w.cons, err = w.workQueue(ctx); err != nil {
		return err
	}
	if w.cons == nil {
		return nil // stopped while waiting
	}
	w.logf("worker %s: serving %s with %d simulation(s) at once; simulator %s", opt.Name, Redact(c.URL), opt.Parallel, sim)
	w.serving.Store(true)
	beat()
	for range opt.Parallel {
		wg.Go(func() {
			// One simulation at a time per goroutine: its replays reuse one memory.
			var sc engine.Scratch
			for ctx.Err() == nil {
				msg, err := w.cons.Next(jetstream.FetchMaxWait(time.Second))
				if errors.Is(err, nats.ErrTimeout) {
					continue // no task within the wait
				}
				if err != nil { // the server is away: ask again once it may be back
					select {
					case <-ctx.Done():
					case <-time.After(time.Second):
					}
					continue
				}
				w.serve(ctx, msg, &sc)
			}
		})
	}
	wg.Wait()
	return nil
}

// workQueue joins the work queue of this worker's simulator, waiting (a line in the log, a
// try a second and one at each coordinator's ping) while the queue's stream does not exist
// yet: a sweep creates it. A nil consumer: ctx ended first.
func (w *worker) workQueue(ctx context.Context) (jetstream.Consumer, error) {
	waiting := false
	for {
		cons, err := workQueue(ctx, w.js, w.sim, w.opt.AckWait)
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return cons, err
		}
		if !waiting {
			waiting = true
			w.logf("worker %s: waiting for a sweep to create stream %s", w.opt.Name, TaskStream)
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-w.wake:
		case <-time.After(time.Second):
		}
	}
}

func (w *worker) logf(format string, args ...any) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	fmt.Fprintf(w.opt.Log, format+"\n", args...)
}

// serve runs one task in sc's memory. The task is acknowledged only once its result is
// stored; a worker stopped before that leaves it to be redelivered.
func (w *worker) serve(ctx context.Context, msg jetstream.Msg, sc *engine.Scratch) {
	w.busy.Add(1)
	defer w.busy.Add(-1)
	var task Task
	if err := json.Unmarshal(msg.Data(), &task); err != nil || task.Key == "" || task.Sweep == "" {
		w.logf("dropped a malformed task on %s: %v", msg.Subject(), err)
		_ = msg.Term()
		return
	}
	// A task this worker failed before goes back for another worker, unless none has taken
	// it after a few offers (the coordinator counts the failures and stops at its cap).
	if slices.Contains(task.Avoid, w.opt.Name) {
		if meta, err := msg.Metadata(); err == nil && meta.NumDelivered <= avoidOffers {
			_ = msg.NakWithDelay(time.Second)
			return
		}
	}
	// Tell the server the task is alive while it runs, so it is not handed to another worker.
	stop := make(chan struct{})
	defer close(stop)
	ackWait := w.opt.AckWait
	if info := w.cons.CachedInfo(); info != nil && info.Config.AckWait > 0 {
		// Another worker may have set it shorter (never below MinAckWait: it checked too).
		ackWait = max(MinAckWait, min(ackWait, info.Config.AckWait))
	}
	go func() {
		t := time.NewTicker(ackWait / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	start := time.Now()
	res := w.run(ctx, &task, sc)
	if ctx.Err() != nil {
		return // stopping: the task goes to another worker
	}
	switch { // before the result goes out, so the log says it first
	case res.Refused != "":
		w.logf("task %s refused: %s", task.Key, res.Refused)
	case res.Error != "":
		w.logf("task %s failed: %s", task.Key, res.Error)
	}
	if err := w.publish(ctx, &task, &res); err != nil {
		w.logf("task %s: publishing the result: %v", task.Key, err)
		return // not acknowledged: redelivered
	}
	_ = msg.Ack()
	if res.Report != nil {
		w.logf("task %s done in %.2f s (%d requests)", task.Key, time.Since(start).Seconds(), res.Report.Summary.RequestsCompleted)
	}
}

// run simulates a task in sc's memory, or says why not.
func (w *worker) run(ctx context.Context, task *Task, sc *engine.Scratch) Result {
	res := Result{Key: task.Key, Session: task.Session, Worker: w.opt.Name, Simulator: w.sim,
		Task: binding(task.Key, task.Sweep, task.Experiment, task.Trace.Digest, task.Requests, task.Config)}
	if why := refusal(task.Experiment); why != "" {
		res.Refused = why
		return res
	}
	m, err := w.models.Get(task.Config.Worker)
	if err != nil {
		res.Refused = "no timing table for the task's deployment: " + err.Error()
		return res
	}
	tr, err := w.trace(ctx, task.Trace)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Task = binding(task.Key, task.Sweep, task.Experiment, tr.Digest, task.Requests, task.Config)
	rep, err := sc.Replay(ctx, task.Config, m, tr.First(task.Requests))
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Report = rep
	return res
}

// publish stores the result in the result stream, the report in ReportBucket when it is too
// large for one message.
func (w *worker) publish(ctx context.Context, task *Task, res *Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if limit := w.js.Conn().MaxPayload(); int64(len(b)) > limit-1024 {
		rep, _ := json.Marshal(res.Report)
		store, err := w.js.ObjectStore(ctx, ReportBucket)
		if err != nil {
			return err
		}
		if _, err := store.PutBytes(ctx, task.Key, rep); err != nil {
			return err
		}
		small := *res
		small.Report, small.Object = nil, task.Key
		if b, err = json.Marshal(small); err != nil {
			return err
		}
	}
	_, err = w.js.Publish(ctx, resultSubject+task.Sweep, b)
	return err
}

// trace returns the task's trace: from the cache, rebuilt (built-in), or fetched from the
// object store and checked against its digest.
func (w *worker) trace(ctx context.Context, ref TraceRef) (*trace.Trace, error) {
	w.mu.Lock()
	defer w.mu.Unlock() // one fetch per trace, even with parallel loops
	if tr, ok := w.traces[ref.Digest]; ok {
		return tr, nil
	}
	var tr *trace.Trace
	var err error
	if ref.Builtin {
		tr, err = trace.Load(ref.Name, ref.BlockSize)
	} else {
		tr, err = w.fetch(ctx, ref)
	}
	if err != nil {
		return nil, err
	}
	if tr.Digest != ref.Digest {
		return nil, fmt.Errorf("trace %s: this worker builds %q, the task names %q", ref.Name, tr.Digest, ref.Digest)
	}
	w.traces[ref.Digest] = tr
	return tr, nil
}

func (w *worker) fetch(ctx context.Context, ref TraceRef) (*trace.Trace, error) {
	store, err := w.js.ObjectStore(ctx, TraceBucket)
	if err != nil {
		return nil, err
	}
	b, err := store.GetBytes(ctx, ref.object())
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("trace %s: not in object store %s as %s", ref.Name, TraceBucket, ref.object())
	}
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != ref.object() {
		return nil, fmt.Errorf("trace %s: object %s does not hash to its name", ref.Name, ref.object())
	}
	return trace.ParseFormat(bytes.NewReader(b), ref.Name, ref.BlockSize, ref.Format)
}
