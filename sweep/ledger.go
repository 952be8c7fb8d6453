package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/routerlab/routerlab/internal/readlimit"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/routerlab/routerlab/config"
)

// LedgerName is the ledger's file name inside a sweep's output directory.
const LedgerName = "ledger.jsonl"

// ledgerHeader is the first line of a ledger: the experiment the evaluations below it belong
// to, so that a resume of a different experiment is refused instead of mixing results.
type ledgerHeader struct {
	Ledger     string             `json:"ledger"` // "routerlab sweep"
	Experiment config.Fingerprint `json:"experiment"`
}

const ledgerMagic = "routerlab sweep"

// ledger appends finished evaluations to OUT/ledger.jsonl, one JSON object a line, handed to
// the kernel as each one finishes: one write(2) of a whole line, so a kill -9 of the process
// loses nothing written and leaves at most a partial last line, which reading ignores. (Per
// line fsync is not worth its cost: it would only add safety against power loss.)
type ledger struct {
	path   string
	header ledgerHeader
	mu     sync.Mutex
	f      *os.File
	lines  int // evaluations in the file

	// A rewrite behind (rewriteBehind) in flight: appends queue their lines until it has
	// reopened the file; behind is closed when it has, err is its error (or an append's).
	behind chan struct{}
	queued [][]byte
	err    error
}

// openLedger creates the ledger, or with resume reads the evaluations it holds and rewrites
// it without a torn last line. Without resume an existing ledger is an error: results of two
// sweeps must not mix.
//
// A ledger written by another routerlab version is resumed with a note saying so (notes).
func openLedger(dir string, h ledgerHeader, resume bool) (l *ledger, prior []Evaluation, notes []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, err
	}
	l = &ledger{path: filepath.Join(dir, LedgerName), header: h}
	data, err := readlimit.ReadJSON(l.path, MaxLedgerBytes, "a sweep ledger")
	switch {
	case err == nil && !resume:
		return nil, nil, nil, fmt.Errorf("%s already exists: pass --resume to continue that sweep, or choose another --out", l.path)
	case err == nil:
		var old config.Fingerprint
		if old, prior, err = readLedger(l.path, data); err != nil {
			return nil, nil, nil, err
		}
		if notes, err = sameExperiment(l.path, old, h.Experiment); err != nil {
			return nil, nil, nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil, err
	}
	// Written behind, as between rounds: the first round's simulations need not wait for
	// the new file's fsync (2–30 ms with every core idle); a failure is returned by the first
	// append or wait after it (RunSearch waits before it reports an interruption).
	l.rewriteBehind(prior)
	return l, prior, notes, nil
}

// readLedger parses a ledger's text into the experiment of its header and its evaluations. A
// last line without its newline is the torn write of an interrupted sweep and is dropped; any
// other bad line is an error naming it.
func readLedger(path string, data []byte) (config.Fingerprint, []Evaluation, error) {
	lines := bytes.Split(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) > 0 {
		lines = lines[:n-1] // torn last line
	}
	var evals []Evaluation
	var exp config.Fingerprint
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if i == 0 {
			var h ledgerHeader
			if err := json.Unmarshal(line, &h); err != nil || h.Ledger != ledgerMagic {
				return nil, nil, fmt.Errorf("%s:1: not a routerlab sweep ledger", path)
			}
			if len(h.Experiment) == 0 {
				return nil, nil, fmt.Errorf("%s:1: the header has no experiment fingerprint (written by an older routerlab): start a new sweep", path)
			}
			exp = h.Experiment
			continue
		}
		var e Evaluation
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		if e.Key == "" || len(e.Runs) == 0 || len(e.Runs) != len(e.Seeds) {
			return nil, nil, fmt.Errorf("%s:%d: evaluation without key or with %d runs for %d seeds", path, i+1, len(e.Runs), len(e.Seeds))
		}
		evals = append(evals, e)
	}
	if len(lines) == 0 || len(bytes.TrimSpace(lines[0])) == 0 {
		return nil, nil, fmt.Errorf("%s: empty ledger (no header line)", path)
	}
	return exp, evals, nil
}

// sameExperiment refuses to resume a ledger of another experiment, listing every setting that
// differs as old → new. A different routerlab version alone is only noted.
func sameExperiment(path string, old, now config.Fingerprint) (notes []string, err error) {
	var refuse []string
	for _, c := range config.Diff(old, now) {
		if c.Key == config.KeyVersion {
			notes = append(notes, fmt.Sprintf("%s was written by routerlab %s; this is %s", path, c.Old, c.New))
			continue
		}
		line := "  " + c.String()
		if c.Key == config.KeySimulator {
			line += " (a build from other code: its results differ)"
		}
		refuse = append(refuse, line)
	}
	if len(refuse) > 0 {
		return nil, fmt.Errorf("%s:1: cannot resume: the ledger is of a different experiment (ledger → now):\n%s",
			path, strings.Join(refuse, "\n"))
	}
	return notes, nil
}

// rewriteBehind replaces the ledger by the header and evals, atomically (temporary file,
// fsync, rename: replace), then reopens it for appending, without waiting for it: between a
// sweep's rounds the next proposal and simulations need not wait for the disk (the fsync took
// 25–75 ms on a busy machine, with both cores idle). The round's appends queue until the
// rewrite has reopened the file, then follow it in their order, so the ledger's lines are
// those a waiting rewrite then the appends would write; a failure is returned by the next
// append or wait after it (appends queued meanwhile return nil).
func (l *ledger) rewriteBehind(evals []Evaluation) {
	if l.wait() != nil {
		return // the error stays for the next call
	}
	l.mu.Lock()
	l.closeFile()
	done := make(chan struct{})
	l.behind = done
	l.mu.Unlock()
	go func() {
		f, err := l.replace(evals)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.f, l.lines, l.err = f, len(evals), err
		for _, line := range l.queued {
			if l.err == nil {
				l.err = l.write(line)
			}
		}
		l.queued, l.behind = nil, nil
		close(done)
	}()
}

// wait waits for a rewrite behind to finish and returns its error (or an append's after it).
func (l *ledger) wait() error {
	l.mu.Lock()
	done := l.behind
	l.mu.Unlock()
	if done != nil {
		<-done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// replace writes the header and evals to a temporary file, syncs it, renames it over the
// ledger and opens that for appending.
func (l *ledger) replace(evals []Evaluation) (*os.File, error) {
	tmp := l.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(f)
	for _, v := range append([]any{l.header}, evalsAsAny(evals)...) {
		line, err := json.Marshal(v)
		if err != nil {
			f.Close()
			return nil, err
		}
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return nil, err
	}
	return os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
}

// closeFile closes the file for appending, if open (l.mu held).
func (l *ledger) closeFile() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

func evalsAsAny(evals []Evaluation) []any {
	out := make([]any, len(evals))
	for i := range evals {
		out[i] = &evals[i]
	}
	return out
}

// append writes one finished evaluation as one line (queued while a rewrite behind runs).
func (l *ledger) append(e *Evaluation) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.err != nil:
		return l.err
	case l.behind != nil:
		l.queued = append(l.queued, append(line, '\n'))
		return nil
	}
	l.err = l.write(append(line, '\n'))
	return l.err
}

// write appends one line to the file (l.mu held).
func (l *ledger) write(line []byte) error {
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	l.lines++
	return nil
}

// saved is the number of evaluations in the ledger.
func (l *ledger) saved() int {
	l.wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}

func (l *ledger) close() error {
	err := l.wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return err
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
