package hugeheap

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/routerlab/routerlab/internal/cputime"
)

func TestDisabledReadsGODEBUG(t *testing.T) {
	for godebug, want := range map[string]bool{
		"":                             false,
		"disablethp=1":                 true,
		"gctrace=1, disablethp=1":      true,
		"disablethp=1,disablethp=0":    false,
		"disablethp=0":                 false,
		"madvdontneed=1,disablethp=1x": false,
	} {
		if got := disabled(godebug); got != want {
			t.Errorf("disabled(%q) = %v, want %v", godebug, got, want)
		}
	}
}

// After Reserve, new heap memory lies in a mapping marked for huge pages (smaps' VmFlags
// "hg"), and touching 16 MB of it takes a few faults, not one per 4 KB page.
func TestReserveBacksTheHeapWithHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("no transparent huge pages here (/sys/kernel/mm/transparent_hugepage/enabled unreadable)")
	}
	if strings.Contains(string(mode), "[never]") {
		t.Skip("transparent huge pages are off on this machine: " + strings.TrimSpace(string(mode)))
	}
	if !reserve(Size) {
		t.Fatal("reserve did not mark the heap")
	}
	const n = 16 << 20
	before := cputime.MinorFaults()
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	faults := cputime.MinorFaults() - before
	// The middle, not the start: the marked mapping begins at the first 2 MB boundary.
	flags := vmFlags(t, uintptr(unsafe.Pointer(&b[n/2])))
	runtime.KeepAlive(b)
	if !slices.Contains(flags, "hg") {
		t.Fatalf("the new heap's mapping is not marked for huge pages (VmFlags %v)", flags)
	}
	if raceDetector {
		t.Skip("marked; the faults are not counted under -race, where each heap write also faults in the detector's shadow memory")
	}
	// 4,096 small pages; 8 huge ones, give or take the edges and the runtime's own pages.
	if faults > n/4096/8 {
		// The mark is reserve's part; whether the kernel then finds free 2 MB pages is the
		// machine's (memory too fragmented to compact, khugepaged settings).
		t.Skipf("marked, but the kernel served small pages (%d faults for 16 MB): no free huge pages here", faults)
	}
}

// vmFlags is the VmFlags of the mapping holding addr, from /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps: ", err)
	}
	in := false
	for line := range strings.Lines(string(smaps)) {
		if start, end, ok := mappingRange(line); ok {
			in = start <= addr && addr < end
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no mapping of /proc/self/smaps holds %#x", addr)
	return nil
}

// mappingRange reads a smaps mapping header, "start-end perms offset dev inode [path]".
func mappingRange(line string) (start, end uintptr, ok bool) {
	span, _, found := strings.Cut(line, " ")
	lo, hi, dash := strings.Cut(span, "-")
	if !found || !dash {
		return 0, 0, false
	}
	a, err1 := strconv.ParseUint(lo, 16, 64)
	b, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(a), uintptr(b), true
}
