package hugeheap

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the x86-64 and arm64 (4 KB base pages) transparent huge page size.
const hugePage = 2 << 20

// reserve maps n bytes of heap by allocating them untouched, marks the whole huge pages
// inside MADV_HUGEPAGE, and frees them: the runtime hands the same addresses out again
// (lowest first), and the kernel keeps the mark on the mapping. Marking the reserved arena
// before the runtime maps it would not do — the runtime maps each chunk afresh
// (mmap MAP_FIXED), and a new mapping carries no mark. The collection is forced (1–4 ms of a
// short command) so that what the process allocates next lands in the marked pages; left
// to the collection the allocation starts, the first allocations land beside them.
func reserve(n int) bool {
	ok := mark(n)
	runtime.GC() // frees mark's allocation now, not at the first collection
	return ok
}

// mark allocates n bytes without touching them and marks the huge pages inside.
func mark(n int) bool {
	b := make([]byte, n)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := (start + hugePage - 1) &^ (hugePage - 1)
	end := (start + uintptr(n)) &^ (hugePage - 1)
	return beg < end && unix.Madvise(b[beg-start:end-start], unix.MADV_HUGEPAGE) == nil
}
