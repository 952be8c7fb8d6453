package cli

import (
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// A churning flood from the client's own address — 16 loops that connect, send an SSH version
// and stall 0.2 s — does not keep a real client out: the connection that has sent least
// (read, or waiting on its socket) gives way, and a stalled version line is less than a
// client's key exchange. Displacing the oldest let the flood push real clients out
// mid-handshake (4–5 of 10 logged in over a real ssh on main 9f5a34a, 10 of 10 now;
// docs/trust.md). A client that has not yet sent its key exchange when it is the oldest of
// the address's connections is indistinguishable from the flood and can still give way: on
// 2 cores beside busy loops or other packages' tests, 16–20 of 20 first attempts log in, so
// the bars are every login within 3 attempts, as a user's retry, and 14 of 20 first ones.
func TestServeSameAddressChurnFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("floods a server for a few seconds")
	}
	key := testKey(t)
	srv := startServer(t, serveOptions{authorizedKeys: writeKeys(t, key)})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", srv.addr)
				if err != nil {
					continue
				}
				c.Write([]byte("SSH-2.0-flood\r\n"))
				time.Sleep(200 * time.Millisecond)
				c.Close()
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	login := func() bool {
		// A client 5 ms away, as over a network: each of its writes waits that long.
		raw, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		c, chans, reqs, err := gossh.NewClientConn(slowConn{raw}, srv.addr, &gossh.ClientConfig{
			User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(key)}, HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		})
		raw.Close()
		if err == nil {
			gossh.NewClient(c, chans, reqs).Close()
			return true
		}
		port := raw.LocalAddr().String() // why: the server's log lines of this connection
		for _, l := range strings.Split(srv.log.String(), "\n") {
			if strings.Contains(l, port) {
				t.Log(l)
			}
		}
		return false
	}
	first, kept := 0, 0
	for range 20 {
		in := login()
		if in {
			first++
		}
		for try := 1; !in && try < 3; try++ {
			in = login()
		}
		if !in {
			kept++
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("a real client logged in at the first attempt %d of 20 times beside the flood", first)
	if kept > 0 || first < 14 {
		t.Errorf("beside the flood a real client was kept out of %d of 20 logins (3 attempts each) and logged in at the first attempt %d times; want 0 and at least 14", kept, first)
	}
}

// victim: the connection that has sent least gives way, a young one credited settleBytes.
func TestVictimIsTheOneThatSentLeast(t *testing.T) {
	now := time.Now()
	conn := func(age time.Duration, sent int64) *limitedConn {
		c := &limitedConn{opened: now.Add(-age)}
		c.sent.Store(sent)
		return c
	}
	silent, version, client, young := conn(time.Second, 0), conn(time.Second, 20), conn(time.Second, 1500), conn(time.Millisecond, 0)
	for _, c := range []struct {
		conns []*limitedConn
		want  *limitedConn
	}{
		{[]*limitedConn{client, version, silent, young}, silent},
		{[]*limitedConn{client, version, young}, version},
		{[]*limitedConn{client, young}, young},                    // credited 256 B, under the client's 1.5 KB
		{[]*limitedConn{young, version}, version},                 // a version line is under the credit
		{[]*limitedConn{young, conn(time.Millisecond, 0)}, young}, // a tie: the oldest
	} {
		if got := victim(c.conns, now); got != c.want {
			t.Errorf("victim of %d connections: the wrong one", len(c.conns))
		}
	}
}

// What a client has sent counts from the moment it reaches the socket: a key exchange the
// server has not read yet outweighs a version line it has (Linux: SIOCINQ).
func TestVictimCountsUnreadBytes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unread bytes are read from the socket on Linux only")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accept := func(n int) net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, err := c.Write(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); unread(s) < int64(n) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if got := unread(s); got != int64(n) {
			t.Fatalf("unread: %d bytes, want the %d written", got, n)
		}
		return s
	}
	now := time.Now()
	kex := &limitedConn{Conn: accept(1500), opened: now.Add(-time.Second)}
	version := &limitedConn{Conn: accept(20), opened: now.Add(-time.Second)}
	if got := victim([]*limitedConn{kex, version}, now); got != version {
		t.Errorf("the client whose 1,500 unread bytes wait on its socket gave way to a 20-byte version line")
	}
}

// slowConn delays each write by 5 ms, as a client across a network would.
type slowConn struct{ net.Conn }

func (c slowConn) Write(p []byte) (int, error) {
	time.Sleep(5 * time.Millisecond)
	return c.Conn.Write(p)
}
