package buildid

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// The test binary, built by the go command like any other, has a build ID of its form:
// slash-separated hashes.
func TestExecutable(t *testing.T) {
	id := Executable()
	if id == "" || len(strings.Split(id, "/")) < 2 {
		t.Fatalf("Executable() = %q, want the go command's slash-separated build ID", id)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), id) {
		t.Fatalf("build ID %q is not in the executable", id)
	}
}

// elf64 is a minimal 64-bit little-endian ELF head with one PT_NOTE segment holding notes.
func elf64(notes []byte) []byte {
	b := make([]byte, 64+56)
	copy(b, "\x7fELF\x02\x01\x01")
	le := binary.LittleEndian
	le.PutUint64(b[32:], 64) // e_phoff
	le.PutUint16(b[54:], 56) // e_phentsize
	le.PutUint16(b[56:], 1)  // e_phnum
	ph := b[64:]
	le.PutUint32(ph, 4)                       // PT_NOTE
	le.PutUint64(ph[8:], uint64(len(b)))      // p_offset
	le.PutUint64(ph[32:], uint64(len(notes))) // p_filesz
	return append(b, notes...)
}

func note(name string, typ uint32, desc string) []byte {
	pad := func(s string) []byte { return append([]byte(s), make([]byte, (4-len(s)%4)%4)...) }
	b := make([]byte, 12)
	binary.LittleEndian.PutUint32(b, uint32(len(name)))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(desc)))
	binary.LittleEndian.PutUint32(b[8:], typ)
	return append(append(b, pad(name)...), pad(desc)...)
}

// The Go note is found after other notes; a GNU build-id note, a Go note of another type, a
// truncated note, a note past the bytes read and a non-ELF file give no ID; the marker
// of other formats is read.
func TestParse(t *testing.T) {
	gnu := note("GNU\x00", 3, "\x01\x02\x03\x04")
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"go note after a gnu note", elf64(append(gnu, note("Go\x00\x00", 4, "abc/def")...)), "abc/def"},
		{"gnu note only", elf64(gnu), ""},
		{"go note of another type", elf64(note("Go\x00\x00", 5, "abc/def")), ""},
		{"truncated", elf64(note("Go\x00\x00", 4, "abc/def"))[:64+56+14], ""},
		{"unprintable id", elf64(note("Go\x00\x00", 4, "abc\x00def")), ""},
		{"marker", []byte("junk\xff Go build ID: \"xyz/uvw\"\n \xff"), "xyz/uvw"},
		{"unterminated marker", []byte("\xff Go build ID: \"xyz"), ""},
		{"neither", []byte("#!/bin/sh\necho hi\n"), ""},
		{"empty", nil, ""},
	}
	for _, c := range cases {
		if got := Parse(c.b); got != c.want {
			t.Errorf("%s: Parse = %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzParse: any bytes give an ID that is printable and found in them, or "", never a panic.
func FuzzParse(f *testing.F) {
	f.Add(elf64(note("Go\x00\x00", 4, "abc/def")))
	f.Add([]byte("\xff Go build ID: \"xyz/uvw\"\n"))
	f.Add([]byte("\x7fELF\x01\x02\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id := Parse(b)
		if id != "" && (!strings.Contains(string(b), id) || valid([]byte(id)) != id) {
			t.Fatalf("Parse gave %q", id)
		}
	})
}
