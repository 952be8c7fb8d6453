package cli

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerlab/routerlab/sweep"
)

// BenchmarkServeViewers attaches N viewer sessions (real SSH clients with terminals) to one
// server sweep of the seed experiment and reports, for the serve process: its peak RSS, its
// CPU time from the moment every viewer is attached to the end of the search, and the delay
// from an evaluation landing (its ledger line appearing) to the next bytes drawn in each
// viewer's terminal (median and p95 over viewers × evaluations). The server runs as its own
// process so the clients' CPU is not counted.
//
//	go test ./cli -run '^$' -bench ServeViewers -benchtime 1x
func BenchmarkServeViewers(b *testing.B) {
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("viewers=%d", n), func(b *testing.B) {
			for range b.N {
				serveViewers(b, n)
			}
		})
	}
}

func serveViewers(b *testing.B, viewers int) {
	op, view := testKey(b), testKey(b)
	dir := b.TempDir()
	runs := filepath.Join(dir, "runs")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	server, stderr := routerlabProcess(b, "serve", "--ssh", addr, "--authorized-keys", writeKeys(b, op),
		"--viewer-keys", writeKeys(b, view), "--host-key", filepath.Join(dir, "host_key"), "--runs", runs,
		"--max-sessions", strconv.Itoa(viewers+8))
	defer server.Process.Kill()
	eventually(b, "the server to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	alice := openTerminal(b, addr, "alice", op)
	var terms []*terminal
	for i := range viewers {
		terms = append(terms, openTerminal(b, addr, fmt.Sprintf("viewer%d", i), view))
	}
	alice.press(b, "s")
	alice.waitFor(b, "server sweep #1")
	for _, v := range terms {
		v.press(b, "\t", "\t", "\t", "\t")
	}
	for _, v := range terms {
		v.waitFor(b, "alice SHA256:")
		v.press(b, "\r")
	}
	for _, v := range terms {
		v.waitFor(b, "server sweep #1")
	}
	cpu0 := procCPU(b, server.Process.Pid)
	entries, _ := os.ReadDir(runs)
	if len(entries) != 1 {
		b.Fatalf("%d run directories under %s, want 1\n%s", len(entries), runs, stderr)
	}
	run := filepath.Join(runs, entries[0].Name())

	// Landing times of the evaluations from here to the end of the search, polled every ms.
	var landed []time.Time
	start := ledgerLines(run)
	for seen := start; ; {
		rec, _ := sweep.ReadProgress(run)
		if n := ledgerLines(run); n > seen {
			for range n - seen {
				landed = append(landed, time.Now())
			}
			seen = n
		}
		if rec != nil && rec.Phase != sweep.PhaseSearch {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cpu := procCPU(b, server.Process.Pid) - cpu0
	rss := procStatusKB(b, server.Process.Pid, "VmHWM:")
	time.Sleep(200 * time.Millisecond) // the last frames
	var delays []float64
	for _, v := range terms {
		for _, t := range landed {
			if w := v.out.firstWriteAfter(t); !w.IsZero() {
				delays = append(delays, float64(w.Sub(t).Microseconds())/1000)
			}
		}
	}
	if len(landed) == 0 || len(delays) == 0 {
		b.Fatalf("no evaluation landed while %d viewers watched (ledger at %d lines)", viewers, start)
	}
	slices.Sort(delays)
	b.ReportMetric(float64(rss)/1024, "MB-peak-rss")
	b.ReportMetric(cpu.Seconds(), "s-server-cpu")
	b.ReportMetric(float64(len(landed)), "evaluations")
	b.ReportMetric(delays[len(delays)/2], "ms-draw-p50")
	b.ReportMetric(delays[len(delays)*95/100], "ms-draw-p95")
}

// procCPU is the user+system CPU time a process has used so far (/proc/PID/stat).
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	// Fields after the parenthesised command name; utime and stime are the 12th and 13th.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// procStatusKB reads a kB figure of /proc/PID/status.
func procStatusKB(b *testing.B, pid int, key string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, key) {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb
		}
	}
	b.Fatalf("no %s in /proc/%d/status", key, pid)
	return 0
}
