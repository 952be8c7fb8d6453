package cli

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/log/v2"
	"charm.land/ssh"
)

// connLimits keeps unauthenticated connections apart from sessions, under sshd's start-up
// limits (srclimit.go): a new connection from an address with an active penalty is refused
// (PerSourcePenalties); then, with startups others authenticating, it is dropped at random
// as MaxStartups begin:rate:full says; then, at perAddr unauthenticated connections from its
// address (sshd's PerSourceMaxStartups), the one of that address that has sent the least
// (victim) gives way to it — where sshd would refuse the new one, so that a flood from an
// address clients share (127.0.0.1 behind tunnels) cannot keep a real client out. An
// authenticated connection moves to one of maxSessions session slots; none free refuses it.
// A connection that ends before authenticating adds its penalty to its address's.
type connLimits struct {
	startups             maxStartups
	perAddr, maxSessions int
	logger               *log.Logger

	mu       sync.Mutex
	rng      *rand.Rand // MaxStartups' draws; seeded, so tests are deterministic
	pen      *penalties
	pre      map[string][]*limitedConn // unauthenticated, by client address, oldest first
	npre     int
	sessions int
}

// limitedConn is one connection under the limits; closing it frees its slot.
type limitedConn struct {
	net.Conn
	lim       *connLimits
	ip        string
	addr      netip.Addr
	opened    time.Time
	sent      atomic.Int64 // bytes the client has sent
	attempted atomic.Bool  // it offered a key (an authentication attempt)
	timedOut  atomic.Bool  // a read passed the handshake deadline
	state     connState    // guarded by lim.mu
}

// Read counts what the client sent and notes a read past the handshake's deadline (the SSH
// server's only deadline before authentication).
func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.sent.Add(int64(n))
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.timedOut.Store(true)
	}
	return n, err
}

// victim is the connection of conns (oldest first) to give way: the one that has sent the
// least (read by the server, or waiting on its socket), the oldest of those, where a
// connection in its first settleTime counts as having sent at least settleBytes. A silent
// socket goes first; then one that sent its version and stalled (about 20 bytes) before a
// real client, which sends its key exchange (about 1 KB) right after its version. A churning
// flood from the client's own address thus displaces itself, where displacing the oldest made
// a real client fail 5 of 10 times (docs/trust.md).
func victim(conns []*limitedConn, now time.Time) *limitedConn {
	sent := func(c *limitedConn) int64 {
		n := c.sent.Load() + unread(c.Conn)
		if now.Sub(c.opened) < settleTime {
			return max(n, settleBytes)
		}
		return n
	}
	least := conns[0]
	for _, c := range conns[1:] {
		if sent(c) < sent(least) {
			least = c
		}
	}
	return least
}

// settleTime is how long a new connection is credited settleBytes, more than a version line
// (at most 255 bytes, RFC 4253 4.2) and less than any key exchange message: a real client's
// version and key exchange (Go's about 1 KB, OpenSSH's about 1.5 KB) are read well within it.
const (
	settleTime  = 250 * time.Millisecond
	settleBytes = 256
)

type connState int

const (
	connPre connState = iota
	connSession
	connGone
)

type connKey struct{}

// newConnLimits makes the limits; rng draws MaxStartups' drops, pen keeps the penalties.
func newConnLimits(startups maxStartups, perAddr, maxSessions int, rng *rand.Rand, pen *penalties, logger *log.Logger) *connLimits {
	return &connLimits{startups: startups, perAddr: perAddr, maxSessions: maxSessions, logger: logger,
		rng: rng, pen: pen, pre: map[string][]*limitedConn{}}
}

// listener admits each connection as it is accepted, in the order the clients connected.
// Admitting from the server's per-connection goroutines instead would let connections of a
// flood that were accepted before a real client be admitted after it, in whatever order the
// goroutines run, and push the client out as the oldest silent one before it is read.
func (l *connLimits) listener(inner net.Listener) net.Listener {
	return limitedListener{Listener: inner, lim: l}
}

type limitedListener struct {
	net.Listener
	lim *connLimits
}

// Accept returns the next connection the limits admit; those refused are told so and closed.
func (ll limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := ll.lim.admit(c); lc != nil {
			return lc, nil
		}
	}
}

// option hands each admitted connection to its session's context (for promote) and installs
// the connection log lines on the server.
func (l *connLimits) option() ssh.Option {
	return func(s *ssh.Server) error {
		s.ConnCallback = func(ctx ssh.Context, c net.Conn) net.Conn {
			if lc, ok := c.(*limitedConn); ok {
				ctx.SetValue(connKey{}, lc)
			}
			return c
		}
		s.ConnectionFailedCallback = func(c net.Conn, err error) {
			l.logger.Warn("handshake failed", "remote", c.RemoteAddr(), "err", err)
		}
		s.ConnectionCloseCallback = func(c net.Conn) {
			l.logger.Info("connection closed", "remote", c.RemoteAddr())
		}
		return nil
	}
}

// notAllowed is what sshd writes to a connection it drops for MaxStartups or a penalty.
const notAllowed = "Not allowed at this time\r\n"

// admit takes an unauthenticated slot for c, or refuses it (nil): an active penalty of its
// address, then MaxStartups' random early drop; at the per-address limit the victim of its
// address gives way.
func (l *connLimits) admit(c net.Conn) *limitedConn {
	ip := c.RemoteAddr().String()
	var addr netip.Addr
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ip = a.IP.String()
		addr, _ = netip.AddrFromSlice(a.IP)
		addr = addr.Unmap()
	}
	now := time.Now()
	lc := &limitedConn{Conn: c, lim: l, ip: ip, addr: addr, opened: now}
	l.mu.Lock()
	refusal := ""
	if addr.IsValid() {
		if why := l.pen.refused(addr); why != "" {
			refusal = "PerSourcePenalties (" + why + ")"
		}
	}
	if refusal == "" && l.startups.shouldDrop(l.npre, l.rng) {
		refusal = fmt.Sprintf("MaxStartups (%d authenticating, %v)", l.npre, l.startups)
	}
	var drop *limitedConn
	var dropNote string
	if refusal == "" {
		if len(l.pre[ip]) >= l.perAddr {
			drop = victim(l.pre[ip], now)
			l.dropLocked(drop)
			dropNote = l.penaliseLocked(drop)
		}
		l.pre[ip] = append(l.pre[ip], lc)
		l.npre++
	}
	l.mu.Unlock()
	if refusal != "" {
		l.logger.Warn("connection dropped: "+refusal, "remote", c.RemoteAddr())
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.Write([]byte(notAllowed)) // best effort, as sshd
		c.Close()
		return nil
	}
	l.logger.Info("connection opened", "remote", c.RemoteAddr())
	if drop != nil {
		l.logger.Warn("connection dropped: unauthenticated connections from this address at the limit; the one that has sent least gives way",
			"remote", drop.RemoteAddr(), "per_address", l.perAddr)
		drop.Conn.Close()
		if dropNote != "" {
			l.logger.Info("penalty: "+dropNote, "remote", drop.RemoteAddr())
		}
	}
	return lc
}

// penaliseLocked adds the penalty of c, which ends before authenticating, to its address's
// and returns what the table did ("" for nothing to log); l.mu is held.
func (l *connLimits) penaliseLocked(c *limitedConn) string {
	if !c.addr.IsValid() {
		return ""
	}
	kind := penaltyNoAuth
	switch {
	case c.timedOut.Load():
		kind = penaltyGrace
	case c.attempted.Load():
		kind = penaltyAuthFail
	}
	return l.pen.penalise(c.addr, kind)
}

// attempt notes that the connection of ctx attempted authentication.
func (l *connLimits) attempt(ctx ssh.Context) {
	if lc, ok := ctx.Value(connKey{}).(*limitedConn); ok {
		lc.attempted.Store(true)
	}
}

// dropLocked takes c out of the unauthenticated slots; l.mu is held.
func (l *connLimits) dropLocked(c *limitedConn) {
	conns := l.pre[c.ip]
	for i, x := range conns {
		if x == c {
			conns = append(conns[:i:i], conns[i+1:]...)
			break
		}
	}
	if len(conns) == 0 {
		delete(l.pre, c.ip)
	} else {
		l.pre[c.ip] = conns
	}
	l.npre--
	c.state = connGone
}

// promote moves the connection of ctx to a session slot once it has authenticated; false
// when every session slot is taken (or the connection is gone). Calling it again is a no-op.
func (l *connLimits) promote(ctx ssh.Context) bool {
	lc, ok := ctx.Value(connKey{}).(*limitedConn)
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case lc.state == connSession:
		return true
	case lc.state == connGone || l.sessions >= l.maxSessions:
		return false
	}
	l.dropLocked(lc)
	lc.state = connSession
	l.sessions++
	return true
}

// Close frees the connection's slot, once; one that had not authenticated is penalised.
func (c *limitedConn) Close() error {
	l := c.lim
	note := ""
	l.mu.Lock()
	switch c.state {
	case connPre:
		l.dropLocked(c)
		note = l.penaliseLocked(c)
	case connSession:
		l.sessions--
		c.state = connGone
	}
	l.mu.Unlock()
	if note != "" {
		l.logger.Info("penalty: "+note, "remote", c.RemoteAddr())
	}
	return c.Conn.Close()
}
