package sweep

import (
	"bytes"
	"fmt"
	"github.com/routerlab/routerlab/internal/readlimit"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gofrs/flock"
)

// LockName is the lock file inside a sweep's output directory. It holds the PID of the
// sweep writing the directory; the lock itself is an flock(2) on it, which the kernel drops
// when that process ends however it ends, so a killed sweep leaves no stale lock.
const LockName = "sweep.lock"

// DirLock is the exclusive hold of one process on a run directory.
type DirLock struct{ fl *flock.Flock }

// LockDir creates dir if needed and takes its lock without waiting. When another process
// holds it the error names that process's PID: two writers would both run the remaining
// evaluations and interleave their ledger lines.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockName)
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !ok {
		holder := "a process that has not written its PID yet"
		if b, err := readlimit.ReadFile(path, 4<<10, "a lock file"); err == nil {
			if pid, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil {
				holder = "PID " + strconv.Itoa(pid)
			}
		}
		return nil, fmt.Errorf("%s is being written by another sweep (%s, holding %s); wait for it or stop it first", dir, holder, path)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		fl.Unlock()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &DirLock{fl: fl}, nil
}

// Unlock releases the directory. The lock file stays: removing it could let a third sweep
// lock a new file while a second one holds the old.
func (l *DirLock) Unlock() error { return l.fl.Unlock() }

// Writing reports whether a process holds dir's lock: a sweep is writing it. It tries a
// shared lock for an instant (the only way to ask flock(2)) and drops it at once; no lock
// file is created. A directory never locked is not being written.
func Writing(dir string) (bool, error) {
	path := filepath.Join(dir, LockName)
	if _, err := os.Stat(path); err != nil {
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryRLock()
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if ok {
		fl.Unlock()
	}
	return !ok, nil
}
