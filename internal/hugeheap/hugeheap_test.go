package hugeheap

import (
	"os"
	"runtime"
	"strings"
	"testing"

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

// After Reserve, touching 16 MB of new heap takes a few faults, not one per 4 KB page.
func TestReserveBacksTheHeapWithHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("no transparent huge pages here (/sys/kernel/mm/transparent_hugepage/enabled unreadable)")
	}
	if strings.Contains(string(mode), "[never]") {
		t.Skip("transparent huge pages are off on this machine: " + strings.TrimSpace(string(mode)))
	}
	if raceDetector {
		t.Skip("under -race each heap write also faults in the detector's shadow memory")
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
	runtime.KeepAlive(b)
	// 4,096 small pages; 8 huge ones, give or take the edges and the runtime's own pages.
	if faults > n/4096/8 {
		t.Errorf("touching 16 MB took %d faults after reserve; with huge pages it takes about 8", faults)
	}
}
