package trace

import (
	"io"
	"strings"
	"testing"
)

// zeros is an endless stream of NUL bytes that counts what was read, as /dev/zero.
type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += len(p)
	return len(p), nil
}

// A line that does not open a JSON object is refused once it outgrows the reader's buffer,
// not read on to the 64 MiB limit; one that does is read to the limit as before.
func TestLongLineNotAnObjectRefusedEarly(t *testing.T) {
	for _, format := range []Format{FormatDetect, FormatMooncake, FormatAgentic} {
		z := &zeros{}
		_, err := ParseFormat(z, "zero", 16, format)
		if err == nil || !strings.Contains(err.Error(), "zero:1: line does not open a JSON object and runs past 1 MiB: not read further (a row may be up to the 64 MiB limit)") {
			t.Errorf("%s: %v", format, err)
		}
		if z.n > 3*readBuffer {
			t.Errorf("%s: read %d bytes before refusing, want at most %d", format, z.n, 3*readBuffer)
		}
	}
	z := &zeros{}
	_, err := Parse(io.MultiReader(strings.NewReader(`{"timestamp": 0, "hash_ids": [`), z), "open", 16)
	if err == nil || !strings.Contains(err.Error(), "open:1: line longer than the 64 MiB limit") || z.n < MaxLineBytes {
		t.Errorf("a row opening an object: %v after %d bytes; want the 64 MiB limit reached", err, z.n)
	}
}
