package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A judge under a CPU limit is killed once it has spent it, however long that takes on the
// wall clock: a looping mutant is told from a loaded machine.
func TestLimitCPUKillsALoop(t *testing.T) {
	if os.Getenv("JUDGE_TEST_SPIN") == "1" {
		if err := limitCPU("1"); err != nil {
			os.Exit(3)
		}
		for x := 0; ; x++ { // a mutant's loop
			_ = x
		}
	}
	// The wall-clock bound only ends a child the limit failed to stop.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLimitCPUKillsALoop$")
	cmd.Env = append(os.Environ(), "JUDGE_TEST_SPIN=1")
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatal("the looping child ran five minutes without being killed")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the looping child ended with %v, want it killed", err)
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the looping child ended with %v, want SIGKILL", err)
	}
	if cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(); cpu < time.Second/2 || cpu > 3*time.Second {
		t.Errorf("the looping child was killed after %v of CPU, want about 1 s (the kernel's and rusage's clocks differ by a tick or so)", cpu)
	}
}

func TestLimitCPURefusesBadValues(t *testing.T) {
	for _, v := range []string{"0", "-1", "x", "1.5"} {
		if err := limitCPU(v); err == nil {
			t.Errorf("limitCPU(%q) accepted", v)
		}
	}
	if err := limitCPU(""); err != nil {
		t.Errorf(`limitCPU("") = %v, want no limit`, err)
	}
}
