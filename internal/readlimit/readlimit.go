// Package readlimit reads files under a stated size limit, so that no path a user names — a
// huge file, /dev/zero, a FIFO, a symlink to either — makes routerlab read without bound. A
// regular file's size is checked before reading; anything else is read through an
// io.LimitReader of one byte past the limit.
package readlimit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// TooLarge is the error for a file past its limit.
type TooLarge struct {
	Path  string
	Limit int64
	What  string // "a replay report", "a sweep ledger", …
}

func (e *TooLarge) Error() string {
	return fmt.Sprintf("%s: larger than the %s limit of %s", e.Path, Size(e.Limit), e.What)
}

// Size words a limit in binary units: "16 MiB", "4 KiB", "100 B".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// ReadFile reads path whole, or fails with *TooLarge past limit bytes. Errors of opening
// are os.Open's (errors.Is(err, fs.ErrNotExist) holds for a missing file).
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := Open(path, limit, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadJSON reads path whole as ReadFile does, but refuses a file whose first byte past
// blanks and a UTF-8 byte-order mark is not '{' — what every JSON and JSONL file routerlab
// reads back opens with — from its first 4 KiB, not after reading it to the limit (a sweep
// ledger that is /dev/zero was read to 128 MiB: seconds and 300 MB).
func ReadJSON(path string, limit int64, what string) ([]byte, error) {
	f, err := Open(path, limit, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 4<<10)
	head, _ := br.Peek(4 << 10) // a shorter file, or an error ReadAll meets again
	if start := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\ufeff")), " \t\r\n"); len(start) > 0 && start[0] != '{' {
		return nil, fmt.Errorf("%s: not %s: it starts with %q where a JSON object opens; not read further toward the %s limit",
			path, what, start[:1], Size(limit))
	}
	return io.ReadAll(br)
}

// File is an open file whose reads fail with *TooLarge past the limit.
type File struct {
	f   *os.File
	r   io.LimitedReader
	err *TooLarge
}

// Open opens path for reading under limit: a regular file larger than it fails at once;
// any other reads fail with *TooLarge once they pass it.
func Open(path string, limit int64, what string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	tooLarge := &TooLarge{Path: path, Limit: limit, What: what}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		f.Close()
		return nil, tooLarge
	}
	return &File{f: f, r: io.LimitedReader{R: f, N: limit + 1}, err: tooLarge}, nil
}

func (f *File) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.r.N == 0 {
		// One byte past the limit was read: the file is larger than allowed.
		return 0, f.err
	}
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Lines is a scanner of f's lines of at most maxLine bytes each.
func (f *File) Lines(maxLine int) *bufio.Scanner {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, min(64<<10, maxLine)), maxLine)
	return sc
}
