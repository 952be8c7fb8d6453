package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/tui/backend"
)

// testKey is a fresh ed25519 client key.
func testKey(t testing.TB) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeKeys writes an authorized_keys file listing the signers' public keys.
func writeKeys(t testing.TB, signers ...gossh.Signer) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# test keys\n\n")
	for _, s := range signers {
		b.Write(gossh.MarshalAuthorizedKey(s.PublicKey()))
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// testServer is a serve instance on a loopback port with its log and sweep registry.
type testServer struct {
	addr string
	log  *syncBuffer
	jobs *backend.Jobs
}

// startServer starts the SSH explorer server on the embedded defaults with o (its address,
// host key and runs directory filled in when empty) and stops it at the end of the test.
func startServer(t *testing.T, o serveOptions) *testServer {
	t.Helper()
	return startServerOn(t, config.Default(), o)
}

// startServerOn is startServer on the experiment f.
func startServerOn(t *testing.T, f *config.File, o serveOptions) *testServer {
	t.Helper()
	if o.hostKey == "" {
		o.hostKey = filepath.Join(t.TempDir(), "host_key")
	}
	if o.maxSessions == 0 {
		o.maxSessions = defaultMaxSessions
	}
	if o.maxStartups == "" {
		o.maxStartups, o.maxUnauthPerAddr = defaultMaxStartups.String(), defaultMaxUnauthPerAddr
	}
	if o.penaltyExempt == "" {
		o.penaltyExempt = defaultPenaltyExempt
	}
	if o.handshakeTimeout == 0 {
		o.handshakeTimeout = defaultHandshakeTimeout
	}
	exp, err := config.NewExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	if o.runs == "" {
		o.runs = t.TempDir()
	}
	if o.maxSweeps == 0 {
		o.maxSweeps = defaultMaxSweeps
	}
	jobs, err := newJobs(exp, 200, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jobs.Shutdown() })
	srv, err := newExplorerServer(exp, 200, o, l.Addr(), newServeLogger(logs), jobs)
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serveUntil(ctx, srv, l) }()
	t.Cleanup(func() {
		// The test's clients are closed by now (their cleanups ran first). Let the server see
		// every connection close before shutting down: charm.land/ssh's Shutdown races with a
		// handshake still finishing (a WaitGroup Add during its Wait).
		closedAll := func() bool {
			return strings.Count(logs.String(), "connection opened") == strings.Count(logs.String(), "connection closed")
		}
		for deadline := time.Now().Add(5 * time.Second); !closedAll() && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &testServer{addr: l.Addr().String(), log: logs, jobs: jobs}
}

func dial(addr, user string, auth ...gossh.AuthMethod) (*gossh.Client, error) {
	return gossh.Dial("tcp", addr, &gossh.ClientConfig{
		User: user, Auth: auth, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
	})
}

// eventually polls cond for up to 20 s (a bound for a slow shared machine, not a timing
// assertion).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	eventuallyWithin(t, 20*time.Second, what, cond)
}

// sweepWait bounds waits on a sweep's own progress: under -race beside CI's other packages a
// 4,000-request validation takes minutes, where 20 s timed out (CI, stop 39).
const sweepWait = 5 * time.Minute

// eventuallyWithin is eventually with its own deadline.
func eventuallyWithin(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeAuthenticatesByKey: a key in --authorized-keys gets in as an operator, one in
// --viewer-keys as a viewer; an unknown key, a password and auth method "none" are refused;
// each result is logged with user, fingerprint, remote address and role.
func TestServeAuthenticatesByKey(t *testing.T) {
	op, view, stranger := testKey(t), testKey(t), testKey(t)
	srv := startServer(t, serveOptions{authorizedKeys: writeKeys(t, op), viewerKeys: writeKeys(t, view)})

	for _, c := range []struct {
		user   string
		signer gossh.Signer
		role   role
	}{{"alice", op, operator}, {"bob", view, viewer}} {
		client, err := dial(srv.addr, c.user, gossh.PublicKeys(c.signer))
		if err != nil {
			t.Fatalf("%s with an authorized key: %v", c.user, err)
		}
		client.Close()
		fp := gossh.FingerprintSHA256(c.signer.PublicKey())
		eventually(t, c.user+"'s auth log line", func() bool {
			for _, line := range strings.Split(srv.log.String(), "\n") {
				if strings.Contains(line, "auth accepted") && strings.Contains(line, "user="+c.user) &&
					strings.Contains(line, "key="+fp) && strings.Contains(line, "role="+string(c.role)) &&
					strings.Contains(line, "remote=127.0.0.1:") {
					return true
				}
			}
			return false
		})
	}
	refused := map[string][]gossh.AuthMethod{
		"unknown key": {gossh.PublicKeys(stranger)},
		"password":    {gossh.Password("x")},
		"none":        nil,
	}
	for name, auth := range refused {
		if c, err := dial(srv.addr, "mallory", auth...); err == nil {
			c.Close()
			t.Errorf("%s: got in, want refused", name)
		}
	}
	eventually(t, "the refusal log line", func() bool {
		return strings.Contains(srv.log.String(), "auth refused: unknown key") &&
			strings.Contains(srv.log.String(), "key="+gossh.FingerprintSHA256(stranger.PublicKey()))
	})
	for _, want := range []string{"connection opened remote=127.0.0.1:", "connection closed remote=127.0.0.1:", "handshake failed"} {
		eventually(t, "a log line with "+want, func() bool { return strings.Contains(srv.log.String(), want) })
	}
}

// TestServeNoAuth: --no-auth is refused on a non-loopback address, and on loopback lets a
// client in with auth method "none".
func TestServeNoAuth(t *testing.T) {
	o := serveOptions{noAuth: true}
	for _, ip := range []string{"0.0.0.0", "192.168.1.10", "::"} {
		_, err := o.access(&net.TCPAddr{IP: net.ParseIP(ip), Port: 2222})
		if err == nil || !strings.Contains(err.Error(), "non-loopback") {
			t.Errorf("--no-auth on %s: err %v, want a refusal naming the non-loopback address", ip, err)
		}
	}
	srv := startServer(t, o)
	c, err := dial(srv.addr, "anyone")
	if err != nil {
		t.Fatalf("--no-auth on loopback: %v", err)
	}
	c.Close()
}

// TestServeNeedsKeysOrNoAuth: without --no-auth a missing or bad key file is an error
// naming the file (and the line).
func TestServeNeedsKeysOrNoAuth(t *testing.T) {
	lo := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2222}
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := (serveOptions{authorizedKeys: missing}).access(lo); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing --authorized-keys: err %v, want one naming %s", err, missing)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	good := string(gossh.MarshalAuthorizedKey(testKey(t).PublicKey()))
	if err := os.WriteFile(bad, []byte(good+"# fine\nssh-ed25519 AAAAnotbase64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (serveOptions{authorizedKeys: bad}).access(lo)
	if err == nil || !strings.Contains(err.Error(), bad+":3: not a public key") {
		t.Errorf("bad key line: err %v, want %s:3: not a public key", err, bad)
	}
}

// TestServeHostKeyPersisted: the host key is created once with mode 0600 and a second
// server on the same file presents the same key.
func TestServeHostKeyPersisted(t *testing.T) {
	op := testKey(t)
	o := serveOptions{authorizedKeys: writeKeys(t, op), hostKey: filepath.Join(t.TempDir(), "sub", "host_key")}
	var seen []string
	for range 2 {
		srv := startServer(t, o)
		c, err := gossh.Dial("tcp", srv.addr, &gossh.ClientConfig{
			User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(op)}, Timeout: 10 * time.Second,
			HostKeyCallback: func(_ string, _ net.Addr, k gossh.PublicKey) error {
				seen = append(seen, gossh.FingerprintSHA256(k))
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if len(seen) != 2 || seen[0] != seen[1] {
		t.Errorf("host keys %v, want the same key twice", seen)
	}
	st, err := os.Stat(o.hostKey)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("host key mode %v, want 0600", st.Mode().Perm())
	}
}

// closedByServer reads from c until the server closes it (true) or 20 s pass (false).
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return err == nil || !(errors.As(err, &ne) && ne.Timeout())
}

// TestServeTimeouts: a client that never completes the handshake is dropped after the
// handshake timeout, an authenticated one that goes quiet after the idle timeout.
func TestServeTimeouts(t *testing.T) {
	op := testKey(t)
	srv := startServer(t, serveOptions{
		authorizedKeys: writeKeys(t, op), handshakeTimeout: 300 * time.Millisecond, idleTimeout: 500 * time.Millisecond,
	})
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !closedByServer(c) {
		t.Fatal("a silent connection was still open after 20 s")
	}
	eventually(t, "the handshake failure in the log", func() bool { return strings.Contains(srv.log.String(), "handshake failed") })

	client, err := dial(srv.addr, "alice", gossh.PublicKeys(op))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	done := make(chan error, 1)
	go func() { done <- client.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("an idle authenticated connection was still open after 20 s")
	}
}

// TestServeSessionCap: authenticated connections beyond --max-sessions are refused (and
// logged) while unauthenticated ones do not count against it; a freed slot takes a client
// again.
func TestServeSessionCap(t *testing.T) {
	op := testKey(t)
	srv := startServer(t, serveOptions{authorizedKeys: writeKeys(t, op), maxSessions: 2, handshakeTimeout: time.Minute})
	var clients []*gossh.Client
	for range 2 {
		c, err := dial(srv.addr, "alice", gossh.PublicKeys(op))
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	raw, err := net.Dial("tcp", srv.addr) // unauthenticated: not a session
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if c, err := dial(srv.addr, "alice", gossh.PublicKeys(op)); err == nil {
		c.Close()
		t.Fatal("a third client got in with --max-sessions 2")
	}
	eventually(t, "the refusal in the log", func() bool { return strings.Contains(srv.log.String(), "auth refused: session cap reached") })
	clients[0].Close()
	eventually(t, "a client getting in after a slot freed", func() bool {
		c, err := dial(srv.addr, "alice", gossh.PublicKeys(op))
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	clients[1].Close()
}

// TestServeIdleFloodDoesNotLockOut: 200 idle TCP connections from the client's own address
// leave it able to log in: each new connection displaces the oldest unauthenticated one.
func TestServeIdleFloodDoesNotLockOut(t *testing.T) {
	op := testKey(t)
	srv := startServer(t, serveOptions{authorizedKeys: writeKeys(t, op), handshakeTimeout: time.Minute})
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 200 {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	client, err := dial(srv.addr, "alice", gossh.PublicKeys(op))
	if err != nil {
		t.Fatalf("login after 200 idle connections: %v", err)
	}
	client.Close()
	eventually(t, "the idle connections beyond the per-address limit dropped", func() bool {
		return strings.Count(srv.log.String(), "connection dropped: unauthenticated connections from this address at the limit") >= 200-defaultMaxUnauthPerAddr
	})
}

// TestServeKeyOptions: authorized_keys options are honoured as sshd does: from= and
// expiry-time= refuse the login (logged with the key's file:line), no-pty, restrict and
// command= refuse the session with a message, an unsupported option refuses the key, and a
// file starting with a byte-order mark is read.
func TestServeKeyOptions(t *testing.T) {
	keys := map[string]gossh.Signer{}
	lines := []struct{ name, options string }{
		{"far", `from="10.9.9.9"`}, {"near", `from="127.0.0.*,!10.*"`}, {"denied", `from="*,!127.0.0.1"`},
		{"cidr", `from="127.0.0.0/8"`}, {"expired", `expiry-time="20200101"`}, {"valid", `expiry-time="29991231Z"`},
		{"restricted", `restrict,command="/bin/false"`}, {"nopty", `no-pty`}, {"ptyback", `restrict,pty`},
		{"ca", `cert-authority`},
	}
	var b strings.Builder
	b.WriteString("\ufeff# keys with options\n")
	for _, l := range lines {
		keys[l.name] = testKey(t)
		b.WriteString(l.options + " ")
		b.Write(gossh.MarshalAuthorizedKey(keys[l.name].PublicKey()))
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, serveOptions{authorizedKeys: path})
	for _, name := range []string{"near", "cidr", "valid", "ptyback", "restricted", "nopty"} {
		c, err := dial(srv.addr, name, gossh.PublicKeys(keys[name]))
		if err != nil {
			t.Errorf("%s: %v, want logged in", name, err)
			continue
		}
		c.Close()
	}
	for name, why := range map[string]string{
		"far":     `auth refused: from="10.9.9.9" does not allow 127.0.0.1`,
		"denied":  `auth refused: from="*,!127.0.0.1" does not allow 127.0.0.1`,
		"expired": "auth refused: key expired at 2020-01-01T00:00:00",
		"ca":      "auth refused: option cert-authority is not supported by routerlab",
	} {
		if c, err := dial(srv.addr, name, gossh.PublicKeys(keys[name])); err == nil {
			c.Close()
			t.Errorf("%s: logged in, want refused", name)
		}
		eventually(t, name+"'s refusal in the log", func() bool {
			for _, line := range strings.Split(srv.log.String(), "\n") {
				if strings.Contains(line, why) && strings.Contains(line, "user="+name) && strings.Contains(line, "line="+path+":") {
					return true
				}
			}
			return false
		})
	}
	for name, want := range map[string]string{
		"restricted": `this key may only run the command "/bin/false"`,
		"nopty":      "this key may not have a terminal (no-pty or restrict in " + path + ":9)",
	} {
		c, err := dial(srv.addr, name, gossh.PublicKeys(keys[name]))
		if err != nil {
			t.Fatal(err)
		}
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.RequestPty("xterm", 40, 120, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		out, _ := sess.StdoutPipe()
		errOut, _ := sess.StderrPipe()
		if err := sess.Shell(); err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(io.MultiReader(out, errOut))
		if err := sess.Wait(); err == nil || !strings.Contains(string(got), want) {
			t.Errorf("%s: session ended with %v, printed %q; want it refused saying %q", name, err, got, want)
		}
		c.Close()
	}
}

// TestServeRefusesReadableHostKey: a host key others may read is refused, as sshd does.
func TestServeRefusesReadableHostKey(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "host_key")
	exp, err := config.NewExperiment(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	o := serveOptions{noAuth: true, hostKey: key, maxSessions: 1, maxStartups: "1", maxUnauthPerAddr: 1, penaltyExempt: "none"}
	addr := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 2222}
	if _, err := newExplorerServer(exp, 200, o, addr, newServeLogger(io.Discard), nil); err != nil {
		t.Fatal(err) // creates the key, mode 0600
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = newExplorerServer(exp, 200, o, addr, newServeLogger(io.Discard), nil)
	if err == nil || !strings.Contains(err.Error(), "is accessible by others (mode 0644): chmod 600 it") {
		t.Fatalf("world-readable host key: %v, want refused", err)
	}
}

// FuzzParseKeyring: any text either parses into keys or fails with an error naming the
// file; it never panics.
func FuzzParseKeyring(f *testing.F) {
	f.Add("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGc5Pn3Ksk8SAFpB7PfrBpL4fz0w5Ax7UTLOYn4kZ4Ti alice@lab\n")
	f.Add("# comment\n\nfrom=\"10.0.0.1\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGc5Pn3Ksk8SAFpB7PfrBpL4fz0w5Ax7UTLOYn4kZ4Ti\n")
	f.Add("ssh-rsa garbage\n")
	f.Add("\ufeffrestrict,command=\"/bin/false\",expiry-time=\"20200101Z\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGc5Pn3Ksk8SAFpB7PfrBpL4fz0w5Ax7UTLOYn4kZ4Ti\n")
	f.Add("from=\"!10.*,127.0.0.0/8\",cert-authority ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGc5Pn3Ksk8SAFpB7PfrBpL4fz0w5Ax7UTLOYn4kZ4Ti\n")
	f.Fuzz(func(t *testing.T, text string) {
		keys, err := parseKeyring(strings.NewReader(text), "keys")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "keys") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(keys) == 0 {
			t.Fatal("no error and no keys")
		}
	})
}

// TestServeWarnsOnNonLoopback: binding another address logs a warning saying so.
func TestServeWarnsOnNonLoopback(t *testing.T) {
	exp, err := config.NewExperiment(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	o := serveOptions{authorizedKeys: writeKeys(t, testKey(t)), hostKey: filepath.Join(t.TempDir(), "host_key"),
		maxSessions: 1, maxSweeps: 1, runs: t.TempDir(), maxStartups: "10:30:100", maxUnauthPerAddr: 8, penaltyExempt: defaultPenaltyExempt}
	jobs, err := newJobs(exp, 200, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ip   string
		warn bool
	}{{"0.0.0.0", true}, {"10.1.2.3", true}, {"127.0.0.1", false}, {"::1", false}} {
		logs := &syncBuffer{}
		if _, err := newExplorerServer(exp, 200, o, &net.TCPAddr{IP: net.ParseIP(c.ip), Port: 2222}, newServeLogger(logs), jobs); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(logs.String(), "WARN") && strings.Contains(logs.String(), "non-loopback"); got != c.warn {
			t.Errorf("%s: warning %v, want %v:\n%s", c.ip, got, c.warn, logs)
		}
	}
}

// Limits that would switch a protection off, or allow nothing, are refused naming the flag.
func TestServeRefusesBadLimits(t *testing.T) {
	for _, args := range [][]string{{"--handshake-timeout", "0s"}, {"--idle-timeout", "-1m"}, {"--max-sessions", "0"}, {"--max-sweeps", "0"},
		{"--max-startups", "10:30"}, {"--max-unauthenticated-per-address", "0"}, {"--per-source-penalty-exempt", "10.0.0.1/8"}} {
		var stderr strings.Builder
		code := Execute(append([]string{"serve", "--no-auth"}, args...), strings.NewReader(""), io.Discard, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("serve %v: status %d, stderr %q; want an error naming %s", args, code, stderr.String(), args[0])
		}
	}
}

// The start-up line names the address, the host key's fingerprint (as clients will see it)
// and how many operator and viewer keys the server accepts.
func TestServeStartLine(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	hostKey := filepath.Join(t.TempDir(), "host_key")
	if err := os.WriteFile(hostKey, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	o := serveOptions{hostKey: hostKey, authorizedKeys: writeKeys(t, testKey(t), testKey(t)), viewerKeys: writeKeys(t, testKey(t))}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2222}
	line, err := startLine(o, addr)
	if err != nil {
		t.Fatal(err)
	}
	if want := "ssh://127.0.0.1:2222 · host key " + gossh.FingerprintSHA256(signer.PublicKey()) + " · 2 operator keys, 1 viewer key"; line != want {
		t.Fatalf("start line %q, want %q", line, want)
	}
}
