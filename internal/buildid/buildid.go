// Package buildid reads the Go build ID of the running executable: the go command's hash of
// everything that went into the binary (every package's sources and embedded files, the
// toolchain, the flags), so two builds share one only when they are the same build.
//
// An ELF executable carries it in a note (name "Go", type 4) of its first pages; other
// formats in a "\xff Go build ID: \"…\"" marker near the start of the text. Only the first
// 32 KB of the file are read, as the go command does.
package buildid

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
)

// head is how much of the executable is read: the ELF program headers and the note, or the
// marker, lie well within it.
const head = 32 << 10

// Executable returns the running executable's build ID, or "" when it cannot be read.
func Executable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, head)
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF {
		return ""
	}
	return Parse(b[:n])
}

// Parse finds the build ID in the first bytes of an executable, or returns "".
func Parse(b []byte) string {
	if id := elfNote(b); id != "" {
		return id
	}
	const marker = "\xff Go build ID: \""
	i := bytes.Index(b, []byte(marker))
	if i < 0 {
		return ""
	}
	rest := b[i+len(marker):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return valid(rest[:j])
}

// elfNote reads the Go note of an ELF file's PT_NOTE segments that lie within b.
func elfNote(b []byte) string {
	if len(b) < 52 || string(b[:4]) != "\x7fELF" {
		return ""
	}
	var bo binary.ByteOrder
	switch b[5] {
	case 1:
		bo = binary.LittleEndian
	case 2:
		bo = binary.BigEndian
	default:
		return ""
	}
	var phoff, phentsize, phnum uint64
	wide := b[4] == 2 // ELFCLASS64
	switch {
	case wide && len(b) >= 64:
		phoff, phentsize, phnum = bo.Uint64(b[32:]), uint64(bo.Uint16(b[54:])), uint64(bo.Uint16(b[56:]))
	case b[4] == 1:
		phoff, phentsize, phnum = uint64(bo.Uint32(b[28:])), uint64(bo.Uint16(b[42:])), uint64(bo.Uint16(b[44:]))
	default:
		return ""
	}
	for k := range phnum {
		ph := phoff + k*phentsize
		if phentsize < 32 || ph > uint64(len(b)) || uint64(len(b))-ph < phentsize {
			return ""
		}
		p := b[ph:]
		if bo.Uint32(p) != 4 { // PT_NOTE
			continue
		}
		var off, size uint64
		if wide {
			if phentsize < 48 {
				return ""
			}
			off, size = bo.Uint64(p[8:]), bo.Uint64(p[32:])
		} else {
			off, size = uint64(bo.Uint32(p[4:])), uint64(bo.Uint32(p[16:]))
		}
		if off > uint64(len(b)) || uint64(len(b))-off < size {
			continue
		}
		if id := goNote(b[off:off+size], bo); id != "" {
			return id
		}
	}
	return ""
}

// goNote walks the notes of one segment for the one named "Go" of type 4.
func goNote(notes []byte, bo binary.ByteOrder) string {
	pad := func(n uint64) uint64 { return (n + 3) &^ 3 }
	for len(notes) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(notes)), uint64(bo.Uint32(notes[4:])), bo.Uint32(notes[8:])
		rest := notes[12:]
		if pad(namesz) > uint64(len(rest)) || pad(descsz) > uint64(len(rest))-pad(namesz) {
			return ""
		}
		name, desc := rest[:namesz], rest[pad(namesz):pad(namesz)+descsz]
		if typ == 4 && string(bytes.TrimRight(name, "\x00")) == "Go" {
			return valid(desc)
		}
		notes = rest[pad(namesz)+pad(descsz):]
	}
	return ""
}

// valid returns id when it looks like a build ID (printable, no spaces, at most 256 bytes),
// else "".
func valid(id []byte) string {
	if len(id) == 0 || len(id) > 256 {
		return ""
	}
	for _, c := range id {
		if c <= ' ' || c > '~' {
			return ""
		}
	}
	return string(id)
}
