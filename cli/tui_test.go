package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// syncBuffer collects a session's output while the test reads it.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes []time.Time // when each write arrived (the draw-delay benchmark reads them)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, time.Now())
	return s.b.Write(p)
}

// firstWriteAfter is the time of the first write at or after t (zero if none).
func (s *syncBuffer) firstWriteAfter(t time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.writes {
		if !w.Before(t) {
			return w
		}
	}
	return time.Time{}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeExplorerOverSSH opens an SSH session with a terminal on a server bound to
// 127.0.0.1, waits for the explorer's first result, quits with q and checks the session
// ends cleanly.
func TestServeExplorerOverSSH(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an SSH server and a simulation")
	}
	op := testKey(t)
	srv := startServer(t, serveOptions{authorizedKeys: writeKeys(t, op)})
	term := openTerminal(t, srv.addr, "tester", op)
	if out := ansi.Strip(term.out.String()); !strings.Contains(out, "first 200 · embedded defaults") || !strings.Contains(out, "no-colour") {
		t.Errorf("header does not show the session's experiment and NO_COLOR theme:\n%q", out)
	}
	term.press(t, "q")
	done := make(chan error, 1)
	go func() { done <- term.sess.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("session ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not end the SSH session")
	}
}
