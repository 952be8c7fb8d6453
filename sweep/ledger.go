package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// LedgerName is the ledger's file name inside a sweep's output directory.
const LedgerName = "ledger.jsonl"

// ledgerHeader is the first line of a ledger: what the evaluations below it are evaluations
// of, so that a resume under different settings is refused instead of mixing results.
type ledgerHeader struct {
	Ledger         string   `json:"ledger"` // "routerlab sweep"
	Algorithm      string   `json:"algorithm"`
	Seed           uint64   `json:"seed"`
	Goal           string   `json:"goal"`
	SearchRequests int      `json:"search_requests"`
	WorkloadSeed   uint64   `json:"workload_seed"`
	Dimensions     []string `json:"dimensions"`
	Candidates     int      `json:"candidates"`
	RoundSize      int      `json:"candidates_per_round"`
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
}

// openLedger creates the ledger, or with resume reads the evaluations it holds and rewrites
// it without a torn last line. Without resume an existing ledger is an error: results of two
// sweeps must not mix.
func openLedger(dir string, h ledgerHeader, resume bool) (*ledger, []Evaluation, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	l := &ledger{path: filepath.Join(dir, LedgerName), header: h}
	var prior []Evaluation
	data, err := os.ReadFile(l.path)
	switch {
	case err == nil && !resume:
		return nil, nil, fmt.Errorf("%s already exists: pass --resume to continue that sweep, or choose another --out", l.path)
	case err == nil:
		if prior, err = readLedger(l.path, data, h); err != nil {
			return nil, nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, nil, err
	}
	if err := l.rewrite(prior); err != nil {
		return nil, nil, err
	}
	return l, prior, nil
}

// readLedger parses a ledger's text. A last line without its newline is the torn write of an
// interrupted sweep and is dropped; any other bad line is an error naming it.
func readLedger(path string, data []byte, want ledgerHeader) ([]Evaluation, error) {
	lines := bytes.Split(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) > 0 {
		lines = lines[:n-1] // torn last line
	}
	var evals []Evaluation
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if i == 0 {
			var h ledgerHeader
			if err := json.Unmarshal(line, &h); err != nil || h.Ledger != ledgerMagic {
				return nil, fmt.Errorf("%s:1: not a routerlab sweep ledger", path)
			}
			if err := sameSweep(h, want); err != nil {
				return nil, fmt.Errorf("%s:1: cannot resume: %w", path, err)
			}
			continue
		}
		var e Evaluation
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		if e.Key == "" || len(e.Runs) == 0 || len(e.Runs) != len(e.Seeds) {
			return nil, fmt.Errorf("%s:%d: evaluation without key or with %d runs for %d seeds", path, i+1, len(e.Runs), len(e.Seeds))
		}
		evals = append(evals, e)
	}
	if len(lines) == 0 || len(bytes.TrimSpace(lines[0])) == 0 {
		return nil, fmt.Errorf("%s: empty ledger (no header line)", path)
	}
	return evals, nil
}

func sameSweep(got, want ledgerHeader) error {
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		return fmt.Errorf("it was written by a different sweep:\n  ledger: %s\n  now:    %s", g, w)
	}
	return nil
}

// rewrite replaces the ledger by the header and evals, atomically (temporary file, fsync,
// rename), then reopens it for appending.
func (l *ledger) rewrite(evals []Evaluation) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	tmp := l.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, v := range append([]any{l.header}, evalsAsAny(evals)...) {
		line, err := json.Marshal(v)
		if err != nil {
			f.Close()
			return err
		}
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return err
	}
	l.f, err = os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
	return err
}

func evalsAsAny(evals []Evaluation) []any {
	out := make([]any, len(evals))
	for i := range evals {
		out[i] = &evals[i]
	}
	return out
}

// append writes one finished evaluation as one line.
func (l *ledger) append(e *Evaluation) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	return nil
}

func (l *ledger) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
