// Package hugeheap asks the kernel for transparent huge pages (2 MB) under the first part of
// the Go heap.
//
// Why: a fresh process pays for every 4 KB page of heap the first time it touches it, and on
// a virtual machine that first touch is dear — about 10 µs on the 2-core CI kind of VM, as
// much as simulating a request (docs/benchmarks.md, issue 23). A whole replay's process touched
// some 7,000 heap pages, a quarter of its CPU. Go's runtime does not ask for huge pages on
// its heap (runtime/mem_linux.go, sysMapOS), and with the kernel's THP setting at `madvise`
// (a common default) every heap page is then its own fault; with huge pages one fault
// serves 512 of them. (The runtime once collapsed dense heap chunks into huge pages itself and
// stopped for performance problems in production, runtime/mgcscavenge.go, scavengeIndex.alloc;
// this hint covers only the first Size bytes, so that is the most it can hold in huge pages,
// and leaves the rest of the heap as the runtime keeps it.)
package hugeheap

import (
	"os"
	"strings"
)

// Size is how much of the heap Reserve backs with huge pages: more than a whole built-in
// replay's heap (about 50 MB at its peak). Address space only; a huge page is backed when
// first touched, as a small page is.
const Size = 64 << 20

// disabled reports whether GODEBUG (the runtime's own switches, later settings winning)
// turns transparent huge pages off with disablethp=1; Reserve honours that.
func disabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "disablethp="); ok {
			off = v == "1"
		}
	}
	return off
}

// Reserve backs the first Size bytes the heap hands out with huge pages where the platform
// has them. It is a hint: where the kernel declines, a process computes the same, only
// slower to start. Call it once, first thing in main.
func Reserve() {
	if !disabled(os.Getenv("GODEBUG")) {
		reserve(Size)
	}
}
