package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/routerlab/routerlab/sweep"
)

// notASweepDir refuses --out DIR of replay or curve when DIR is a sweep's run directory:
// their report.html would replace the sweep's without a word, and a sweep writing there
// (holding sweep.lock) would be overwritten under it. Checked before the run and again
// before writing, since a sweep may start there meanwhile.
func notASweepDir(dir, command string) error {
	writing, err := sweep.Writing(dir)
	if err != nil {
		return err
	}
	if writing {
		return fmt.Errorf("--out %s: a sweep is writing that directory (it holds %s): %s --out needs a directory of its own",
			dir, filepath.Join(dir, sweep.LockName), command)
	}
	// Files only a sweep writes (report.html is every command's): a directory holding one
	// is a sweep's.
	for _, name := range append([]string{sweep.LedgerName, sweep.LockName, sweep.ProgressName}, sweep.OutputNames...) {
		if name == "report.html" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("--out %s: a sweep's run directory (it holds %s): %s --out would replace its report.html; choose another directory",
				dir, name, command)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
