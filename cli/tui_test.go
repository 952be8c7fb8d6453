package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

)

// syncBuffer collects a session's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
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
	client, err := dial(srv.addr, "tester", gossh.PublicKeys(op))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var out syncBuffer
	sess.Stdout = &out
	stdin, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Setenv("NO_COLOR", "1"); err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "run 1 in") {
		if time.Now().After(deadline) {
			t.Fatalf("no first result over SSH; output so far:\n%q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "first 200 · embedded defaults") || !strings.Contains(out.String(), "no-colour") {
		t.Errorf("header does not show the session's experiment and NO_COLOR theme:\n%q", out.String())
	}
	if _, err := stdin.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("session ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not end the SSH session")
	}
}
