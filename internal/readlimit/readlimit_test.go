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

// ReadJSON refuses what cannot open a JSON object from its first bytes — /dev/zero within
// a limit of 1 GiB, at once — and reads objects, JSONL, a byte-order mark, blanks and an
// empty file as ReadFile does; an object past the limit is still *TooLarge.
func TestReadJSONRefusesAtOnce(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	for _, text := range []string{`{"a": 1}`, "{\"a\": 1}\n{\"b\": 2}\n", "\ufeff\n  {}", ""} {
		if b, err := ReadJSON(write("ok", text), 1024, "a test file"); err != nil || string(b) != text {
			t.Errorf("%q: read %q, %v", text, b, err)
		}
	}
	_, err := ReadJSON("/dev/zero", 1<<30, "a sweep ledger")
	if err == nil || err.Error() != `/dev/zero: not a sweep ledger: it starts with "\x00" where a JSON object opens; not read further toward the 1 GiB limit` {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := ReadJSON(write("list", " [1, 2]"), 1024, "a test file"); err == nil || !strings.Contains(err.Error(), `it starts with "["`) {
		t.Errorf("a list: %v", err)
	}
	var tl *TooLarge
	if _, err := ReadJSON(write("big", "{"+strings.Repeat(" ", 2000)+"}"), 1024, "a test file"); !errors.As(err, &tl) {
		t.Errorf("an object past the limit: %v, want *TooLarge", err)
	}
}
