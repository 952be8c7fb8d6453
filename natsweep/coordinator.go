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
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
)

// Coordinator is a sweep.Simulator whose runs are tasks on the NATS work queue. Point
// lookups and request checks stay local (they need only the experiment file). It trusts no
// answer blindly: a result must bind to its task, a failed answer is retried on another
// worker (MaxFailures, then the sweep stops), and a seeded sample of results is replayed
// locally (audit.go).
type Coordinator struct {
	exp     *config.Experiment
	fp      config.Fingerprint
	ref     TraceRef
	url     string // redacted: it is shown
	sim     string // the experiment's simulator digest: its tasks' subject
	sweep   string
	session string
	audit   auditor
	nc      *nats.Conn
	js      jetstream.JetStream
	sub     *nats.Subscription
	cc      jetstream.ConsumeContext
	ctx     context.Context // the coordinator's life: checks of answers end with it
	cancel  context.CancelFunc

	mu       sync.Mutex
	tasks    map[string]*pending      // tasks published and not settled, by key
	arrived  map[string]Result        // answers nobody waits for yet (a resumed sweep's)
	workers  map[string]heartbeatSeen // last heartbeat of each worker
	pinged   time.Time                // when start asked the workers for a heartbeat
	joined   sync.Once                // the first task waited for the workers (awaitWorkers)
	done     int
	retried  int // failed answers whose task was published again
	status   io.Writer
	lastLine string
	stop     chan struct{}
	stopped  sync.WaitGroup // the status line's goroutine and the checks of answers
}

// pending is a published task and the runs waiting for it.
type pending struct {
	task     Task
	binding  string
	chans    []chan outcome
	failures []string // "worker W: why", in order
	// settling: an answer is being checked (its report fetched, perhaps replayed locally);
	// later answers to the task are duplicates.
	settling bool
}

// outcome is what a run waiting on a task gets.
type outcome struct {
	rep *engine.Report
	err error
}

// MaxFailures is how many failed answers (an error, a refusal, no report, a result bound to
// another task) a task may get before the sweep stops, naming the workers and their reasons.
const MaxFailures = 3

// CoordinatorOptions configure NewCoordinator.
type CoordinatorOptions struct {
	// Out is the sweep's run directory; with the experiment it names the sweep's subjects,
	// so a resumed sweep finds the results of the run it continues.
	Out string
	// Status receives a line whenever the number of connected workers or tasks in flight
	// changes (at most once a second); nil discards.
	Status io.Writer
	// Audit is the fraction of remote results replayed locally and compared (0 to 1;
	// DefaultAudit is the CLI's default); 0 checks none, not even a worker's first.
	Audit float64
	// AuditSeed picks the sample (0: drawn at random, so no worker can tell which of its
	// results will be checked).
	AuditSeed uint64
}

// NewCoordinator connects to the server at c, makes sure the streams exist, and puts the
// experiment's trace in the object store unless it is built in or already there.
func NewCoordinator(ctx context.Context, c Conn, exp *config.Experiment, fp config.Fingerprint, opt CoordinatorOptions) (*Coordinator, error) {
	if !(opt.Audit >= 0 && opt.Audit <= 1) {
		return nil, fmt.Errorf("--nats-audit: %v must be between 0 and 1", opt.Audit)
	}
	out, err := filepath.Abs(opt.Out)
	if err != nil {
		return nil, err
	}
	sim, _ := fp.Get(config.KeySimulator)
	co := &Coordinator{exp: exp, fp: fp, ref: refOf(exp.Trace), url: Redact(c.URL), sim: sim, sweep: sweepID(fp, out), session: rand.Text(),
		audit: newAuditor(opt.Audit, opt.AuditSeed),
		tasks: map[string]*pending{}, arrived: map[string]Result{}, workers: map[string]heartbeatSeen{},
		status: opt.Status, stop: make(chan struct{})}
	if co.status == nil {
		co.status = io.Discard
	}
	if co.nc, co.js, err = c.dial("routerlab sweep", co.note); err != nil {
		return nil, err
	}
	co.ctx, co.cancel = context.WithCancel(context.Background())
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
			co.workers[shown(hb.Worker)] = heartbeatSeen{time.Now(), shown(hb.Simulator), hb.Serving}
			co.mu.Unlock()
		}
	})
	if err != nil {
		return err
	}
	co.pinged = time.Now()
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

// receive takes one result from the stream. An answer to a published task is checked
// (failed → published again, see failed; else settled in its own goroutine, see settle); an
// answer nobody asked for yet is kept for a run that will. A refusal or failure of another
// session's task says nothing about this fleet and is dropped.
func (co *Coordinator) receive(m jetstream.Msg) {
	var res Result
	if err := json.Unmarshal(m.Data(), &res); err != nil || res.Key == "" {
		co.note("nats: dropped a malformed result: %v", err)
		return
	}
	// What a worker says reaches the terminal: no control characters, no novels.
	for _, f := range []*string{&res.Worker, &res.Simulator, &res.Task, &res.Refused, &res.Error} {
		*f = shown(*f)
	}
	if (res.Refused != "" || res.Error != "") && res.Session != co.session {
		return
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	p, ok := co.tasks[res.Key]
	if !ok {
		if _, ok := co.arrived[res.Key]; !ok && res.Refused == "" && res.Error == "" {
			co.arrived[res.Key] = res
		}
		return
	}
	if p.settling {
		return
	}
	if why := p.fault(res, co.sim); why != "" {
		co.failed(p, res.Worker, why)
		return
	}
	p.settling = true
	co.spawn(func() { co.settle(p, res) })
}

// maxShown bounds what a worker's message may put in a status line or error, in bytes.
const maxShown = 1024

// shown is s as a status line may show it: control characters as U+FFFD, cut at maxShown
// bytes (on a character boundary) with "…".
func shown(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, strings.ToValidUTF8(s, string(unicode.ReplacementChar)))
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// note writes a line to the status writer. co.mu is not held.
func (co *Coordinator) note(format string, args ...any) {
	co.mu.Lock()
	defer co.mu.Unlock()
	fmt.Fprintf(co.status, format+"\n", args...)
}

// spawn runs f in a goroutine Close waits for, unless the coordinator is closing. co.mu is
// held (Close cancels under it, so nothing is spawned once it waits).
func (co *Coordinator) spawn(f func()) {
	if co.ctx.Err() == nil {
		co.stopped.Go(f)
	}
}

// fault says what makes res no answer to p's task ("" if nothing does).
func (p *pending) fault(res Result, sim string) string {
	switch {
	case res.Refused != "":
		return "refused: " + res.Refused
	case res.Error != "":
		return res.Error
	case res.Simulator != sim:
		return "answered by simulator " + res.Simulator + ", this sweep's is " + sim
	case res.Task != p.binding:
		return "answered another task (its result binds to " + res.Task + ", the task's binding is " + p.binding + ")"
	case res.Report == nil && res.Object == "":
		return "result without a report"
	}
	return ""
}

// failed counts a failed answer of worker to p's task: the task is published again for
// another worker, or after MaxFailures the runs waiting on it fail, naming every worker
// and its reason, and the sweep stops. co.mu is held.
func (co *Coordinator) failed(p *pending, worker, why string) {
	if co.tasks[p.task.Key] != p {
		return // every run gave up on it
	}
	p.settling = false
	p.failures = append(p.failures, "worker "+worker+": "+why)
	if len(p.failures) >= MaxFailures {
		co.finish(p, outcome{err: fmt.Errorf("task %s failed %d times, the most a task may: %s", p.task.Key, len(p.failures), tally(p.failures))})
		return
	}
	co.retried++
	fmt.Fprintf(co.status, "nats: worker %s failed task %s (%s); publishing it for another worker\n", worker, p.task.Key, why)
	p.task.Attempt++
	if !slices.Contains(p.task.Avoid, worker) {
		p.task.Avoid = append(slices.Clone(p.task.Avoid), worker)
	}
	task := p.task
	co.spawn(func() { // not in the result consumer's callback: the publication waits for the server
		if err := co.publish(co.ctx, task); err != nil {
			co.mu.Lock()
			co.finish(p, outcome{err: err})
			co.mu.Unlock()
		}
	})
}

// tally joins reasons, each once, with how often it came when more than once.
func tally(reasons []string) string {
	var out []string
	for i, r := range reasons {
		if slices.Index(reasons, r) < i {
			continue
		}
		if n := len(slices.DeleteFunc(slices.Clone(reasons), func(x string) bool { return x != r })); n > 1 {
			r += fmt.Sprintf(" (%d times)", n)
		}
		out = append(out, r)
	}
	return strings.Join(out, "; ")
}

// finish hands o to every run waiting on p's task, which then is no longer pending. co.mu
// is held.
func (co *Coordinator) finish(p *pending, o outcome) {
	if co.tasks[p.task.Key] != p {
		return // every run gave up on it
	}
	delete(co.tasks, p.task.Key)
	if o.err == nil {
		co.done++
	}
	for _, ch := range p.chans {
		ch <- o
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

// Run publishes the simulation as a task and waits for its checked result. Runs of one task
// at once (a validation replay of the same configuration as another, both in flight) share
// its one publication and its one result.
func (co *Coordinator) Run(ctx context.Context, cfg engine.Config, requests int) (*engine.Report, error) {
	key := taskKey(co.fp, co.ref, requests, cfg)
	ch := make(chan outcome, 1)
	co.mu.Lock()
	if err := co.audit.poisoned; err != nil {
		co.mu.Unlock()
		return nil, err
	}
	p, inFlight := co.tasks[key]
	if !inFlight {
		p = &pending{task: Task{Key: key, Sweep: co.sweep, Session: co.session, Simulator: co.sim, Experiment: co.fp, Trace: co.ref, Requests: requests, Config: cfg},
			binding: binding(key, co.sweep, co.fp, co.ref.Digest, requests, cfg)}
		co.tasks[key] = p
	}
	p.chans = append(p.chans, ch)
	res, arrived := co.arrived[key]
	if !inFlight && arrived {
		delete(co.arrived, key)
		if why := p.fault(res, co.sim); why == "" {
			p.settling = true
			co.spawn(func() { co.settle(p, res) })
		} else {
			arrived = false // an earlier session's answer to another binding: ask again
		}
	}
	co.mu.Unlock()
	if !inFlight && !arrived {
		co.joined.Do(func() { co.awaitWorkers(ctx) })
		if err := co.publish(ctx, p.task); err != nil {
			co.mu.Lock()
			co.finish(p, outcome{err: err})
			co.mu.Unlock()
		}
	}
	select {
	case o := <-ch:
		return o.rep, o.err
	case <-ctx.Done():
		co.forget(key, ch)
		return nil, ctx.Err()
	}
}

// pingReplies is how long the first task waits for the workers' answers to start's ping;
// joinWait bounds its wait for those workers to join the work queue.
const (
	pingReplies = heartbeatEvery / 4
	joinWait    = 2 * heartbeatEvery
)

// awaitWorkers holds the sweep's first task until every worker of its simulator heard from
// has joined the work queue (at most joinWait after the ping): a worker that was waiting
// for the stream to exist joins at the ping, and the first round is then shared by all of
// them, not taken by whichever joined first.
func (co *Coordinator) awaitWorkers(ctx context.Context) {
	t := time.NewTicker(pingReplies / 5)
	defer t.Stop()
	for {
		co.mu.Lock()
		since := time.Since(co.pinged)
		ready := since >= pingReplies && co.allJoined()
		co.mu.Unlock()
		if ready || since >= joinWait {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// allJoined: every live worker of this sweep's simulator has joined the work queue. co.mu
// is held.
func (co *Coordinator) allJoined() bool {
	for _, seen := range co.workers {
		if seen.sim == co.sim && !seen.serving && time.Since(seen.at) < workerTimeout {
			return false
		}
	}
	return true
}

// publish puts task on the work queue.
func (co *Coordinator) publish(ctx context.Context, task Task) error {
	b, _ := json.Marshal(task)
	if _, err := co.js.Publish(ctx, taskSubjectOf(co.sim, co.sweep), b); err != nil {
		return fmt.Errorf("nats: publishing a task: %w", err)
	}
	return nil
}

// forget stops waiting on ch for the task of key (the task stays waited for by other runs).
func (co *Coordinator) forget(key string, ch chan outcome) {
	co.mu.Lock()
	defer co.mu.Unlock()
	p, ok := co.tasks[key]
	if !ok {
		return
	}
	p.chans = slices.DeleteFunc(p.chans, func(c chan outcome) bool { return c == ch })
	if len(p.chans) == 0 {
		delete(co.tasks, key)
	}
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

// heartbeatSeen is when a worker was last heard from, its simulator digest and whether it
// had joined its work queue.
type heartbeatSeen struct {
	at      time.Time
	sim     string
	serving bool
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
	line := fmt.Sprintf("nats: %d workers connected, %d tasks in flight, %d results", live, len(co.tasks), co.done)
	if co.retried > 0 {
		line += fmt.Sprintf(", %d failed answers retried", co.retried)
	}
	checked, differed := co.audit.status()
	line += checked
	if len(refused) > 0 {
		slices.Sort(refused)
		line += fmt.Sprintf("; refused %d built from other code: %s; this sweep's simulator is %s",
			len(refused), strings.Join(refused, ", "), co.sim)
	}
	line += differed
	if live == 0 && len(co.tasks) > 0 {
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
	if co.cc != nil {
		co.cc.Stop()
	}
	co.mu.Lock()
	co.cancel()
	co.mu.Unlock()
	co.stopped.Wait()
	if co.sub != nil {
		_ = co.sub.Unsubscribe()
	}
	co.nc.Close()
}
