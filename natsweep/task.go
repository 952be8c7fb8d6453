// Package natsweep runs a sweep's simulations on a NATS JetStream work queue. The sweep's
// process is the coordinator: its Simulator publishes one task per simulation (the
// experiment's fingerprint, the candidate's engine configuration with its seed, the request
// count, a reference to the trace) and waits for the result, while the sweep itself — the
// proposals, the ledger, resume, the report — runs exactly as it does locally. Workers on
// any machine pull tasks, simulate, publish the result and only then acknowledge the task.
//
// Delivery is at least once: a task whose worker dies is redelivered after the ack wait,
// and every result carries the task's key (a hash of everything the result depends on), so
// a second result for a key is recognised and dropped. Results are kept in a stream, so a
// coordinator that is stopped and resumed picks up what finished while it was away.
//
// Tasks are filed under the simulator digest of the coordinator's build (config.
// SimulatorDigest), and each build's workers pull only their own digest's tasks, so a worker
// built from other code never runs one: the coordinator counts it as refused in its status
// line and the sweep carries on with the workers that match. A build older than this layout
// reads another stream and sees no task at all.
//
// The trace travels once: a file's bytes go into a JetStream object store under the SHA-256
// of those bytes (built-in traces are rebuilt by name and seed), and workers keep the traces
// they have loaded.
package natsweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/trace"
)

// Names on the NATS server. Subjects end in a sweep id, so sweeps of different
// experiments (or run directories) share the streams without seeing each other's results.
const (
	TaskStream   = "ROUTERLAB_WORK"    // work queue: each task is delivered to one worker at a time
	ResultStream = "ROUTERLAB_RESULTS" // results, kept for a day so a resumed coordinator finds them
	TraceBucket  = "routerlab_traces"  // object store: trace files by SHA-256
	ReportBucket = "routerlab_reports" // object store: results too large for one message
	// WorkersConsumer and a simulator digest name the pull consumer shared by the workers of
	// that digest.
	WorkersConsumer = "routerlab-workers-"

	taskSubject      = "routerlab.work." // + simulator digest + "." + sweep id
	resultSubject    = "routerlab.results."
	heartbeatSubject = "routerlab.workers"
	// pingSubject asks every worker for a heartbeat at once: a coordinator that starts
	// after its workers counts them before their next beat (a short sweep may end sooner).
	pingSubject = "routerlab.workers.ping"
)

// taskSubjectOf is where the tasks of sweep for simulator sim go.
func taskSubjectOf(sim, sweep string) string { return taskSubject + sim + "." + sweep }

// TraceRef says which trace a task replays: a built-in one by name (the worker rebuilds
// it), or a file by the SHA-256 of its bytes (the worker fetches it from TraceBucket).
type TraceRef struct {
	Name      string `json:"name"`   // builtin:NAME[:xN], or the coordinator's file path (for messages)
	Digest    string `json:"digest"` // trace.Trace.Digest: "sha256:HEX" of a file, or the generator and seed
	BlockSize int    `json:"block_size"`
	// Format is the row format a session trace was read in (absent for plain rows).
	Format  trace.Format `json:"format,omitempty"`
	Builtin bool         `json:"builtin"`
}

// refOf describes tr for workers.
func refOf(tr *trace.Trace) TraceRef {
	ref := TraceRef{Name: tr.Name, Digest: tr.Digest, BlockSize: tr.BlockSize, Builtin: strings.HasPrefix(tr.Name, trace.BuiltinPrefix)}
	if tr.Sessions != nil {
		ref.Format = tr.Sessions.Format
	}
	return ref
}

// object is the trace's name in TraceBucket: the hex SHA-256 of the file.
func (r TraceRef) object() string { return strings.TrimPrefix(r.Digest, "sha256:") }

// Task is one simulation: the first Requests requests of the trace under Config (whose Seed
// is the run's seed).
type Task struct {
	Key   string `json:"key"`
	Sweep string `json:"sweep"` // the coordinator's sweep id: results go to its subject
	// Session is the publishing coordinator process: a refusal or failure speaks for that
	// session only, so a sweep resumed after the fleet is fixed does not read old ones.
	Session string `json:"session"`
	// Simulator is the coordinator's simulator digest (also in Experiment): only a worker
	// of the same digest runs the task.
	Simulator  string             `json:"simulator"`
	Experiment config.Fingerprint `json:"experiment"`
	Trace      TraceRef           `json:"trace"`
	Requests   int                `json:"requests"`
	Config     engine.Config      `json:"config"`
	// Attempt counts the task's publications: a failed answer publishes it again, with the
	// workers that failed it in Avoid, which step aside while another worker may take it.
	Attempt int      `json:"attempt,omitempty"`
	Avoid   []string `json:"avoid,omitempty"`
}

// Result is a worker's answer to a task: the replay's report, or why there is none.
type Result struct {
	Key     string `json:"key"`
	Session string `json:"session"` // the task's
	Worker  string `json:"worker"`
	// Simulator is the worker's simulator digest: a result of another digest is dropped.
	Simulator string `json:"simulator"`
	// Task binds the answer to its task: binding() of what the worker replayed. The
	// coordinator refuses a result whose binding is not the task's.
	Task   string         `json:"task"`
	Report *engine.Report `json:"report,omitempty"`
	// Object names the report in ReportBucket when it did not fit in one message (per-request
	// records of a long validation replay).
	Object string `json:"object,omitempty"`
	// Refused says why the worker would not run the task (another simulator digest, a
	// deployment it has no timing table for); Error why the simulation failed.
	Refused string `json:"refused,omitempty"`
	Error   string `json:"error,omitempty"`
}

// taskKey is the hash of everything a result depends on: the experiment, the trace, the
// request count and the engine configuration (seed included).
func taskKey(exp config.Fingerprint, ref TraceRef, requests int, cfg engine.Config) string {
	b, _ := json.Marshal(struct {
		Experiment string
		Trace      TraceRef
		Requests   int
		Config     engine.Config
	}{exp.Digest(), ref, requests, cfg})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// binding is what a result answers: the task's key and sweep, its experiment, request count
// and engine configuration, and the digest of the trace replayed. The worker computes it
// from the task it decoded and the trace it loaded, the coordinator from the task it
// published.
func binding(key, sweep string, exp config.Fingerprint, traceDigest string, requests int, cfg engine.Config) string {
	b, _ := json.Marshal(struct {
		Key, Sweep, Experiment, Trace string
		Requests                      int
		Config                        engine.Config
	}{key, sweep, exp.Digest(), traceDigest, requests, cfg})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sweepID names a sweep's subjects: its experiment and run directory, so a resumed sweep
// (same directory) sees the results of the run it continues and a new one starts afresh.
func sweepID(exp config.Fingerprint, out string) string {
	sum := sha256.Sum256([]byte(exp.Digest() + "\x00" + out))
	return hex.EncodeToString(sum[:8])
}

// refusal is why this build cannot run a task of experiment exp, or "" when it can: the
// task's simulator digest must be this build's. Version strings are not compared: equal
// digests simulate alike whatever the builds call themselves.
func refusal(exp config.Fingerprint) string {
	sim, _ := exp.Get(config.KeySimulator)
	if mine := config.SimulatorDigest(); sim != mine {
		return "the task is for simulator " + sim + ", this worker's is " + mine + " (built from other code)"
	}
	return ""
}
