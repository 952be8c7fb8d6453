package natsweep

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

// Coordinator is a sweep.Simulator whose runs are tasks on the NATS work queue. Point
// lookups and request checks stay local (they need only the experiment file).
type Coordinator struct {
	exp     *config.Experiment
	fp      config.Fingerprint
	ref     TraceRef
	url     string // redacted: it is shown
	sim     string // the experiment's simulator digest: its tasks' subject
	sweep   string
	session string
	nc      *nats.Conn
	js      jetstream.JetStream
	sub     *nats.Subscription
	cc      jetstream.ConsumeContext

	mu       sync.Mutex
	waiting  map[string][]chan Result // tasks published and not answered: every run that asked
	arrived  map[string]Result        // answers nobody waits for yet (a resumed sweep's)
	workers  map[string]heartbeatSeen // last heartbeat of each worker
	done     int
	status   io.Writer
	lastLine string
	stop     chan struct{}
	stopped  sync.WaitGroup
}

// CoordinatorOptions configure NewCoordinator.
type CoordinatorOptions struct {
	// Out is the sweep's run directory; with the experiment it names the sweep's subjects,
	// so a resumed sweep finds the results of the run it continues.
	Out string
	// Status receives a line whenever the number of connected workers or tasks in flight
	// changes (at most once a second); nil discards.
	Status io.Writer
}

// NewCoordinator connects to the server at c, makes sure the streams exist, and puts the
// experiment's trace in the object store unless it is built in or already there.
func NewCoordinator(ctx context.Context, c Conn, exp *config.Experiment, fp config.Fingerprint, opt CoordinatorOptions) (*Coordinator, error) {
	out, err := filepath.Abs(opt.Out)
	if err != nil {
		return nil, err
	}
	nc, js, err := c.dial("routerlab sweep")
	if err != nil {
		return nil, err
	}
	sim, _ := fp.Get(config.KeySimulator)
	co := &Coordinator{exp: exp, fp: fp, ref: refOf(exp.Trace), url: Redact(c.URL), sim: sim, sweep: sweepID(fp, out), session: rand.Text(), nc: nc, js: js,
		waiting: map[string][]chan Result{}, arrived: map[string]Result{}, workers: map[string]heartbeatSeen{},
		status: opt.Status, stop: make(chan struct{})}
	if co.status == nil {
		co.status = io.Discard
	}
	if err := co.start(ctx); err != nil {
		co.Close()
		return nil, err
	}
	return co, nil
}

func (co *Coordinator) start(ctx context.Context) error {
	if err := setup(ctx, co.js); err != nil {
		return err
	}
	if !co.ref.Builtin {
		if err := co.uploadTrace(ctx); err != nil {
			return err
		}
	}
	var err error
	co.sub, err = co.nc.Subscribe(heartbeatSubject, func(m *nats.Msg) {
		var hb heartbeat
		if json.Unmarshal(m.Data, &hb) == nil && hb.Worker != "" {
			co.mu.Lock()
			co.workers[hb.Worker] = heartbeatSeen{time.Now(), hb.Simulator}
			co.mu.Unlock()
		}
	})
	if err != nil {
		return err
	}
	if err := co.nc.Publish(pingSubject, nil); err != nil {
		return fmt.Errorf("nats: asking workers for a heartbeat: %w", err)
	}
	// Every result of this sweep from the start: a resumed sweep's earlier tasks included.
	cons, err := co.js.OrderedConsumer(ctx, ResultStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{resultSubject + co.sweep}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("nats: results of sweep %s: %w", co.sweep, err)
	}
	if co.cc, err = cons.Consume(co.receive); err != nil {
		return fmt.Errorf("nats: results of sweep %s: %w", co.sweep, err)
	}
	co.stopped.Go(co.report)
	return nil
}

// uploadTrace stores the trace file's bytes under their SHA-256, checking they are still
// the bytes the experiment loaded.
func (co *Coordinator) uploadTrace(ctx context.Context) error {
	store, err := co.js.ObjectStore(ctx, TraceBucket)
	if err != nil {
		return err
	}
	if _, err := store.GetInfo(ctx, co.ref.object()); err == nil {
		return nil // a worker fleet has it already
	}
	b, err := os.ReadFile(co.ref.Name)
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(b); "sha256:"+hex.EncodeToString(sum[:]) != co.ref.Digest {
		return fmt.Errorf("%s changed since the experiment loaded it", co.ref.Name)
	}
	if _, err := store.PutBytes(ctx, co.ref.object(), b); err != nil {
		return fmt.Errorf("nats: storing trace %s: %w", co.ref.Name, err)
	}
	return nil
}

// receive takes one result from the stream: to its waiting run, or kept for a run that
// will ask for it. A second result for a key (a redelivered task) is dropped, and so is a
// refusal or failure of another session's task: it says nothing about this fleet.
func (co *Coordinator) receive(m jetstream.Msg) {
	var res Result
	if err := json.Unmarshal(m.Data(), &res); err != nil || res.Key == "" {
		fmt.Fprintf(co.status, "nats: dropped a malformed result: %v\n", err)
		return
	}
	if (res.Refused != "" || res.Error != "") && res.Session != co.session {
		return
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	if chs, ok := co.waiting[res.Key]; ok {
		delete(co.waiting, res.Key)
		co.done++
		for _, ch := range chs {
			ch <- res
		}
		return
	}
	if _, ok := co.arrived[res.Key]; !ok {
		co.arrived[res.Key] = res
	}
}

// Slots lets the sweep keep every run of a round in flight: the work queue, not this
// process's CPUs, bounds how many simulate at once.
func (co *Coordinator) Slots() int { return 1 << 16 }

// EngineConfig is the experiment's.
func (co *Coordinator) EngineConfig(p config.Point) (engine.Config, error) {
	return co.exp.EngineConfig(p)
}

// CheckRequests is the experiment's.
func (co *Coordinator) CheckRequests(ns ...int) error { return co.exp.CheckRequests(ns...) }

// Run publishes the simulation as a task and waits for its result.
func (co *Coordinator) Run(ctx context.Context, cfg engine.Config, requests int) (*engine.Report, error) {
	task := Task{Sweep: co.sweep, Session: co.session, Simulator: co.sim, Experiment: co.fp, Trace: co.ref, Requests: requests, Config: cfg}
	task.Key = taskKey(co.fp, co.ref, requests, cfg)
	// Two runs of one task at once (a validation replay of the same configuration as another,
	// both in flight) share its one publication and its one result.
	ch := make(chan Result, 1)
	co.mu.Lock()
	res, ok := co.arrived[task.Key]
	inFlight := false
	if ok {
		delete(co.arrived, task.Key)
	} else {
		_, inFlight = co.waiting[task.Key]
		co.waiting[task.Key] = append(co.waiting[task.Key], ch)
	}
	co.mu.Unlock()
	if !ok {
		if !inFlight {
			b, _ := json.Marshal(task)
			if _, err := co.js.Publish(ctx, taskSubjectOf(co.sim, co.sweep), b); err != nil {
				co.unpublished(task.Key, ch, err)
				return nil, fmt.Errorf("nats: publishing a task: %w", err)
			}
		}
		select {
		case res = <-ch:
		case <-ctx.Done():
			co.forget(task.Key, ch)
			return nil, ctx.Err()
		}
	}
	switch {
	case res.Refused != "":
		return nil, fmt.Errorf("worker %s refused task %s: %s", res.Worker, res.Key, res.Refused)
	case res.Error != "":
		return nil, fmt.Errorf("worker %s: task %s: %s", res.Worker, res.Key, res.Error)
	case res.Simulator != co.sim:
		return nil, fmt.Errorf("worker %s: task %s: answered by simulator %s, this sweep's is %s", res.Worker, res.Key, res.Simulator, co.sim)
	case res.Object != "":
		return co.fetchReport(ctx, res)
	case res.Report == nil:
		return nil, fmt.Errorf("worker %s: task %s: result without a report", res.Worker, res.Key)
	}
	return res.Report, nil
}

// unpublished fails every other run waiting on the task of key, which ch's run could not
// publish: none of them would ever see a result.
func (co *Coordinator) unpublished(key string, ch chan Result, err error) {
	co.mu.Lock()
	defer co.mu.Unlock()
	for _, c := range co.waiting[key] {
		if c != ch {
			c <- Result{Key: key, Worker: "none", Simulator: co.sim, Error: "the coordinator could not publish the task: " + err.Error()}
		}
	}
	delete(co.waiting, key)
}

// forget stops waiting on ch for the task of key (the task stays waited for by other runs).
func (co *Coordinator) forget(key string, ch chan Result) {
	co.mu.Lock()
	defer co.mu.Unlock()
	chs := slices.DeleteFunc(co.waiting[key], func(c chan Result) bool { return c == ch })
	if len(chs) == 0 {
		delete(co.waiting, key)
		return
	}
	co.waiting[key] = chs
}

func (co *Coordinator) fetchReport(ctx context.Context, res Result) (*engine.Report, error) {
	store, err := co.js.ObjectStore(ctx, ReportBucket)
	if err != nil {
		return nil, err
	}
	b, err := store.GetBytes(ctx, res.Object)
	if err != nil {
		return nil, fmt.Errorf("nats: report of task %s: %w", res.Key, err)
	}
	var rep engine.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("nats: report of task %s: %w", res.Key, err)
	}
	return &rep, nil
}

// workerTimeout is how long a silent worker still counts as connected.
const workerTimeout = 3 * heartbeatEvery

// report writes the status line when it changes (checked four times a second), and once
// more when the coordinator closes.
func (co *Coordinator) report() {
	t := time.NewTicker(time.Second / 4)
	defer t.Stop()
	for {
		select {
		case <-co.stop:
			co.writeStatus(true)
			return
		case <-t.C:
			co.writeStatus(false)
		}
	}
}

// Status is the fleet's status line; sweep progress events carry it (sweep.Remote), so the
// explorer's watch view and progress.json show it beside the phase.
func (co *Coordinator) Status() string {
	co.mu.Lock()
	defer co.mu.Unlock()
	return co.statusLine()
}

// writeStatus writes the status line if it changed, or always when final.
func (co *Coordinator) writeStatus(final bool) {
	co.mu.Lock()
	defer co.mu.Unlock()
	line := co.statusLine()
	if line != co.lastLine || final {
		co.lastLine = line
		fmt.Fprintln(co.status, line)
	}
}

// heartbeatSeen is when a worker was last heard from and its simulator digest.
type heartbeatSeen struct {
	at  time.Time
	sim string
}

// statusLine counts the workers heard from lately (forgetting silent ones) and the tasks in
// flight; workers of another simulator digest are named as refused: they never get this
// sweep's tasks. co.mu is held.
func (co *Coordinator) statusLine() string {
	live := 0
	var refused []string
	for w, seen := range co.workers {
		switch {
		case time.Since(seen.at) >= workerTimeout:
			delete(co.workers, w)
		case seen.sim == co.sim:
			live++
		default:
			sim := seen.sim
			if sim == "" {
				sim = "none"
			}
			refused = append(refused, w+" ("+sim+")")
		}
	}
	line := fmt.Sprintf("nats: %d workers connected, %d tasks in flight, %d results", live, len(co.waiting), co.done)
	if len(refused) > 0 {
		slices.Sort(refused)
		line += fmt.Sprintf("; refused %d built from other code: %s; this sweep's simulator is %s",
			len(refused), strings.Join(refused, ", "), co.sim)
	}
	if live == 0 && len(co.waiting) > 0 {
		line += " (no worker: start routerlab worker --nats " + co.url + ", built from this code)"
	}
	return line
}

// Close stops consuming results and closes the connection. Tasks still queued stay in the
// work queue; their results wait in the stream for a resumed sweep.
func (co *Coordinator) Close() {
	select {
	case <-co.stop:
		return
	default:
	}
	close(co.stop)
	co.stopped.Wait()
	if co.cc != nil {
		co.cc.Stop()
	}
	if co.sub != nil {
		_ = co.sub.Unsubscribe()
	}
	co.nc.Close()
}
