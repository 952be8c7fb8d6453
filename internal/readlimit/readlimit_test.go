package readlimit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A regular file over the limit fails before reading; /dev/zero and a symlink to it fail
// after limit+1 bytes; a file at the limit is read whole; a missing file is fs.ErrNotExist.
func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at")
	over := filepath.Join(dir, "over")
	link := filepath.Join(dir, "zero")
	os.WriteFile(at, []byte(strings.Repeat("x", 1024)), 0o644)
	os.WriteFile(over, []byte(strings.Repeat("x", 1025)), 0o644)
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(at, 1024, "a test file"); err != nil || len(b) != 1024 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	for _, p := range []string{over, link, "/dev/zero"} {
		_, err := ReadFile(p, 1024, "a test file")
		var tl *TooLarge
		if !errors.As(err, &tl) || err.Error() != p+": larger than the 1 KiB limit of a test file" {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 1024, "a test file"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// A line scanner over /dev/zero ends in an error, not an endless read.
func TestLinesOfDevZero(t *testing.T) {
	f, err := Open("/dev/zero", 1<<20, "a test file")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := f.Lines(4 << 20)
	for sc.Scan() {
	}
	if sc.Err() == nil {
		t.Error("no error")
	}
}
