package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/routerlab/routerlab/internal/readlimit"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/routerlab/routerlab/config"
)

// ProgressName is the progress record beside the ledger in a sweep's output directory.
const ProgressName = "progress.json"

// ProgressRecord is progress.json: where the sweep writing the directory stands, so that a
// reader elsewhere (routerlab watch, possibly on another machine over a shared filesystem)
// sees the phase and its counts as well as the evaluations in the ledger.
type ProgressRecord struct {
	Progress
	Target string `json:"target"` // goal.target: what Value-like figures measure
	Unit   string `json:"unit"`
}

// progressFile rewrites progress.json at every event. The write is a temporary file renamed
// over the record, so a reader never sees half of one; the lock keeps records in event order.
type progressFile struct {
	mu     sync.Mutex
	path   string
	target string
	last   ProgressRecord // the record written last
	ended  bool           // end was written: evaluations still unwinding write nothing more
}

func (p *progressFile) write(ev Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return nil
	}
	return p.writeLocked(ProgressRecord{Progress: ev.Progress, Target: p.target, Unit: ev.Unit})
}

// end records that the sweep stopped before done: the last record's counts, with phase
// interrupted or failed and the reason.
func (p *progressFile) end(phase Phase, reason string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec := p.last
	rec.Target = p.target
	if rec.Phase != PhaseSearch {
		rec.Round, rec.Rounds = 0, 0
	}
	rec.Phase, rec.Stop, rec.Remote = phase, reason, ""
	p.ended = true
	return p.writeLocked(rec)
}

func (p *progressFile) writeLocked(rec ProgressRecord) error {
	p.last = rec
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := p.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p.path)
}

// send reports an event: into progress.json when the sweep writes a directory, then to the
// Progress channel when there is one (blocking until it is taken or ctx ends).
func (o Options) send(ctx context.Context, ev Event) error {
	if o.remote != nil {
		ev.Progress.Remote = o.remote.Status()
	}
	if o.record != nil {
		if err := o.record.write(ev); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	if o.Progress == nil {
		return nil
	}
	select {
	case o.Progress <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ReadProgress reads dir's progress.json without writing or locking anything; nil when the
// sweep has not written one.
func ReadProgress(dir string) (*ProgressRecord, error) {
	return readJSON[ProgressRecord](dir, ProgressName)
}

// ReadSummary reads dir's summary.json; nil while the sweep has not finished.
func ReadSummary(dir string) (*Summary, error) { return readJSON[Summary](dir, OutputNames[0]) }

// ReadLedger reads the evaluations in dir's ledger without writing or locking anything, as
// a resume would (a torn last line is left out); nil when there is no ledger yet.
func ReadLedger(dir string) ([]Evaluation, error) {
	path, data, err := readOptional(dir, LedgerName, MaxLedgerBytes, "a sweep ledger")
	if data == nil || err != nil {
		return nil, err
	}
	_, evals, err := readLedger(path, data)
	return evals, err
}

// ReadLedgerExperiment reads the experiment fingerprint in the header of dir's ledger: the
// settings the sweep runs with. Nil before the ledger exists.
func ReadLedgerExperiment(dir string) (config.Fingerprint, error) {
	path, data, err := readOptional(dir, LedgerName, MaxLedgerBytes, "a sweep ledger")
	if data == nil || err != nil {
		return nil, err
	}
	fp, _, err := readLedger(path, data)
	return fp, err
}

// readJSON decodes dir/name; nil when the file does not exist (yet).
func readJSON[T any](dir, name string) (*T, error) {
	path, data, err := readOptional(dir, name, MaxReportBytes, "a sweep's "+name)
	if data == nil || err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &v, nil
}

// Limits of the files of a run directory that routerlab reads back (watch, compare,
// --resume): a ledger line of the seed experiment is about 2 KB, so 128 MiB holds some 65,000
// evaluations (a ledger that is /dev/zero is refused from its first bytes: readlimit.ReadJSON);
// summary.json and progress.json are a few KB.
const (
	MaxLedgerBytes = 128 << 20
	MaxReportBytes = 16 << 20
)

// readOptional reads dir/name under limit; nil data and no error when the file does not
// exist.
func readOptional(dir, name string, limit int64, what string) (string, []byte, error) {
	path := filepath.Join(dir, name)
	data, err := readlimit.ReadJSON(path, limit, what)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil, nil
	}
	if data == nil && err == nil {
		data = []byte{} // an empty file is not a missing one
	}
	return path, data, err
}
