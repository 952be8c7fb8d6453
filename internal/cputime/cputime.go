// Package cputime reads the process's CPU time, which benchmarks report beside wall time:
// the benchmark machine is shared, and CPU time is what a run would take on an idle one.
package cputime

import (
	"syscall"
	"time"
)

// Process is the process's user+system CPU time over all its threads (0 if it cannot be read).
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MinorFaults is how many minor page faults the process has taken (first touches of
// memory; 0 if it cannot be read).
func MinorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}
