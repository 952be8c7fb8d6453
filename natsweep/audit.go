package natsweep

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/routerlab/routerlab/engine"
)

// DefaultAudit is the fraction of remote results `sweep --nats` replays locally by default:
// a twentieth of the fleet's work again on the coordinator, on top of each worker's first
// result.
const DefaultAudit = 0.05

// auditor decides which remote results the coordinator replays locally and remembers what
// it found. A worker's first result is always replayed (a worker that forges every answer
// is caught before the search uses one), then a seeded sample of Fraction of the others.
// A worker whose result differs from the local replay is refused: the local report is used,
// its later answers are discarded and replayed locally, and its answers the search already
// used are replayed too; if one of those differs, the search was misled and every run fails
// with poisoned. Worker names are the workers' own word (NATS does not tell who published a
// message), so a worker that changes its name meets the first-result check again.
// Fields other than fraction, seed and slots are guarded by the coordinator's mu.
type auditor struct {
	fraction float64
	seed     [8]byte
	slots    chan struct{} // local replays at once: one per CPU

	vouched  map[string]bool          // workers whose result matched a local replay
	judging  map[string]chan struct{} // workers whose first result is being replayed: closed at the verdict
	refused  map[string]string        // workers whose result differed: the first difference
	used     map[string][]usedAnswer  // unchecked answers the search used, by worker
	checked  int                      // results replayed locally
	poisoned error
}

// usedAnswer is an unchecked answer handed to the search: its task and its report's digest.
type usedAnswer struct {
	task   Task
	digest [32]byte
}

func newAuditor(fraction float64, seed uint64) auditor {
	a := auditor{fraction: fraction, slots: make(chan struct{}, runtime.GOMAXPROCS(0)),
		vouched: map[string]bool{}, judging: map[string]chan struct{}{}, refused: map[string]string{}, used: map[string][]usedAnswer{}}
	if seed == 0 {
		_, _ = rand.Read(a.seed[:])
	} else {
		binary.LittleEndian.PutUint64(a.seed[:], seed)
	}
	return a
}

// sampled says whether the task of key is in the seeded sample.
func (a *auditor) sampled(key string) bool {
	sum := sha256.Sum256(append(a.seed[:], key...))
	return float64(binary.LittleEndian.Uint64(sum[:])>>11)/(1<<53) < a.fraction
}

// status is the audit's part of the status line: what it checked, and whom it refused.
func (a *auditor) status() (checked, refused string) {
	if a.fraction == 0 {
		return "", ""
	}
	checked = fmt.Sprintf(", %d checked by local replay (%g of results and each worker's first)", a.checked, a.fraction)
	if len(a.refused) > 0 {
		var names []string
		for w := range a.refused {
			names = append(names, w)
		}
		slices.Sort(names)
		refused = fmt.Sprintf("; refused %d whose result differed from the local replay: %s", len(names), strings.Join(names, ", "))
	}
	return checked, refused
}

// settle checks the answer res to p's task and hands the report to the runs waiting on it:
// the worker's, or the local replay's when the answer is replayed and differs or comes
// from a refused worker.
func (co *Coordinator) settle(p *pending, res Result) {
	rep := res.Report
	if res.Object != "" {
		var err error
		if rep, err = co.fetchReport(co.ctx, res); err != nil {
			co.mu.Lock()
			co.failed(p, res.Worker, err.Error())
			co.mu.Unlock()
			return
		}
	}
	co.mu.Lock()
	a := &co.audit
	// A worker's first result is replayed; its others wait for that verdict, so that a fast
	// worker's first burst is not all replayed here.
	first := false
	for a.fraction > 0 && !a.vouched[res.Worker] && a.refused[res.Worker] == "" {
		verdict, judging := a.judging[res.Worker]
		if !judging {
			a.judging[res.Worker] = make(chan struct{})
			first = true
			break
		}
		co.mu.Unlock()
		select {
		case <-verdict:
		case <-co.ctx.Done():
		}
		co.mu.Lock()
		if co.ctx.Err() != nil {
			co.finish(p, outcome{err: co.ctx.Err()})
			co.mu.Unlock()
			return
		}
	}
	_, refused := a.refused[res.Worker]
	check := refused || first || (a.fraction > 0 && a.sampled(p.task.Key))
	if !check {
		a.used[res.Worker] = append(a.used[res.Worker], usedAnswer{p.task, reportDigest(rep)})
		co.finish(p, outcome{rep: rep})
		co.mu.Unlock()
		return
	}
	co.mu.Unlock()

	local, err := co.replay(p.task)
	co.mu.Lock()
	defer co.mu.Unlock()
	if first { // runs before the unlock: the waiting answers see the verdict
		defer func() {
			close(a.judging[res.Worker])
			delete(a.judging, res.Worker)
		}()
	}
	if err != nil {
		co.finish(p, outcome{err: err})
		return
	}
	a.checked++
	if refused {
		co.finish(p, outcome{rep: local})
		return
	}
	if diff := difference(rep, local); diff != "" {
		a.refused[res.Worker] = diff
		fmt.Fprintf(co.status, "nats: worker %s refused: its result for task %s differs from the local replay (%s); its results are discarded and replayed here\n",
			res.Worker, p.task.Key, diff)
		used := a.used[res.Worker]
		delete(a.used, res.Worker)
		co.mu.Unlock()
		err := co.recheck(res.Worker, used)
		co.mu.Lock()
		a.checked += len(used)
		if err != nil {
			a.poisoned = err
			co.finish(p, outcome{err: err})
			return
		}
		co.finish(p, outcome{rep: local})
		return
	}
	a.vouched[res.Worker] = true
	co.finish(p, outcome{rep: rep})
}

// replay runs task here, one replay per CPU at once.
func (co *Coordinator) replay(task Task) (*engine.Report, error) {
	select {
	case co.audit.slots <- struct{}{}:
	case <-co.ctx.Done():
		return nil, co.ctx.Err()
	}
	defer func() { <-co.audit.slots }()
	rep, err := co.exp.Run(co.ctx, task.Config, task.Requests)
	if err != nil {
		return nil, fmt.Errorf("replaying task %s locally to check a worker's result: %w", task.Key, err)
	}
	return rep, nil
}

// recheck replays the answers of a refused worker that the search used unchecked; the error
// names the worker and says how many differ.
func (co *Coordinator) recheck(worker string, used []usedAnswer) error {
	differ := 0
	for _, u := range used {
		local, err := co.replay(u.task)
		if err != nil {
			return err
		}
		if reportDigest(local) != u.digest {
			differ++
		}
	}
	if differ > 0 {
		return fmt.Errorf("worker %s answered falsely: %d of its %d results the search used before it was caught differ from local replays, so the search was misled; start the sweep again in a new --out directory (its fleet without %s)",
			worker, differ, len(used), worker)
	}
	return nil
}

// comparable is a report's JSON without its wall time, the one field that differs between
// identical replays.
func comparable(rep *engine.Report) []byte {
	r := *rep
	r.Summary.WallTimeMS = 0
	b, _ := json.Marshal(&r)
	return b
}

func reportDigest(rep *engine.Report) [32]byte { return sha256.Sum256(comparable(rep)) }

// difference names the first summary field in which got differs from want ("" if the
// reports are the same), or says that the per-request records or snapshots differ.
func difference(got, want *engine.Report) string {
	g, w := comparable(got), comparable(want)
	if bytes.Equal(g, w) {
		return ""
	}
	var gs, ws map[string]any
	gb, _ := json.Marshal(got.Summary)
	wb, _ := json.Marshal(want.Summary)
	_ = json.Unmarshal(gb, &gs)
	_ = json.Unmarshal(wb, &ws)
	keys := make([]string, 0, len(ws))
	for k := range ws {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "wall_time_ms" {
			continue
		}
		if a, b := fmt.Sprint(gs[k]), fmt.Sprint(ws[k]); a != b {
			return fmt.Sprintf("%s %s, local %s", k, a, b)
		}
	}
	return "per-request records or snapshots differ"
}
